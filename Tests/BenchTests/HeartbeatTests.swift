@testable import Bench
import XCTest

/// ``Heartbeat``'s schedule: ticks on a fixed 1 s grid, every device once per 15 ticks.
final class HeartbeatTests: XCTestCase {
    func testTicksStayOnTheGridWhateverTheDelayOfTheLastOne() {
        let start: Int64 = 5_000_000
        XCTAssertEqual(Heartbeat.delayMs(now: start, start: start, tick: 1), 1_000)
        // Tick 1 ran 30 ms late: tick 2 is still due at start + 2 s.
        XCTAssertEqual(Heartbeat.delayMs(now: start + 1_030_000, start: start, tick: 2), 970)
        // Rounded up: never fires early.
        XCTAssertEqual(Heartbeat.delayMs(now: start + 1_999_500, start: start, tick: 2), 1)
        // Overdue (the loop was busy past the tick): at once.
        XCTAssertEqual(Heartbeat.delayMs(now: start + 3_500_000, start: start, tick: 3), 0)
    }

    func testEveryDevicePingsOncePer15Ticks() {
        let count = 1_250
        var pings = [Int](repeating: 0, count: count)
        for tick in 1 ... 15 {
            for i in Heartbeat.due(tick: tick, count: count) { pings[i] += 1 }
        }
        XCTAssertEqual(Set(pings), [1], "each device exactly once in 15 s")
        let perTick = (1 ... 15).map { Array(Heartbeat.due(tick: $0, count: count)).count }
        XCTAssertLessThanOrEqual(perTick.max()! - perTick.min()!, 1, "the same share on every tick")
        XCTAssertEqual(Array(Heartbeat.due(tick: 16, count: count)), Array(Heartbeat.due(tick: 1, count: count)))
        XCTAssertEqual(Array(Heartbeat.due(tick: 3, count: 2)), [], "fewer devices than ticks")
    }
}
