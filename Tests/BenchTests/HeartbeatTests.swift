@testable import Bench
import XCTest

/// ``Heartbeat``'s schedule: ticks on a fixed 100 ms grid, every device once per 150 ticks
/// (15 s), the once-a-second work on every 10th tick.
final class HeartbeatTests: XCTestCase {
    func testTicksStayOnTheGridWhateverTheDelayOfTheLastOne() {
        let start: Int64 = 5_000_000
        XCTAssertEqual(Heartbeat.delayMs(now: start, start: start, tick: 1), 100)
        // Tick 1 ran 30 ms late: tick 2 is still due at start + 200 ms.
        XCTAssertEqual(Heartbeat.delayMs(now: start + 130_000, start: start, tick: 2), 70)
        // Rounded up: never fires early.
        XCTAssertEqual(Heartbeat.delayMs(now: start + 199_500, start: start, tick: 2), 1)
        // Overdue (the loop was busy past the tick): at once.
        XCTAssertEqual(Heartbeat.delayMs(now: start + 350_000, start: start, tick: 3), 0)
    }

    func testEveryDevicePingsOncePer150Ticks() {
        XCTAssertEqual(Heartbeat.ticksPerInterval(), 150, "15 s of 100 ms ticks")
        let count = 1_250
        var pings = [Int](repeating: 0, count: count)
        for tick in 1 ... 150 {
            for i in Heartbeat.due(tick: tick, count: count) { pings[i] += 1 }
        }
        XCTAssertEqual(Set(pings), [1], "each device exactly once in 15 s")
        let perTick = (1 ... 150).map { Array(Heartbeat.due(tick: $0, count: count)).count }
        XCTAssertLessThanOrEqual(perTick.max()! - perTick.min()!, 1, "the same share on every tick")
        XCTAssertEqual(Array(Heartbeat.due(tick: 151, count: count)), Array(Heartbeat.due(tick: 1, count: count)))
        XCTAssertEqual(Array(Heartbeat.due(tick: 3, count: 2)), [], "fewer devices than ticks")
    }

    func testOnceASecondWorkRunsOnEveryTenthTick() {
        XCTAssertEqual((1 ... 30).filter { Heartbeat.endsSecond(tick: $0) }, [10, 20, 30])
    }

    /// The 1 s schedule of the libsoup idle children: 1/15 of the devices per tick, the
    /// once-a-second work on every tick, a 1 s grid.
    func testSecondTicksPingOneFifteenthEachAndRunTheSecondWorkEachTime() {
        let second = Heartbeat.secondTickMicros
        XCTAssertEqual(Heartbeat.ticksPerInterval(tickMicros: second), 15)
        XCTAssertEqual(Heartbeat.delayMs(now: 0, start: 0, tick: 2, tickMicros: second), 2_000)
        XCTAssertEqual((1 ... 3).filter { Heartbeat.endsSecond(tick: $0, tickMicros: second) }, [1, 2, 3])
        var pings = [Int](repeating: 0, count: 100)
        for tick in 1 ... 15 {
            for i in Heartbeat.due(tick: tick, count: 100, tickMicros: second) { pings[i] += 1 }
        }
        XCTAssertEqual(Set(pings), [1])
    }
}
