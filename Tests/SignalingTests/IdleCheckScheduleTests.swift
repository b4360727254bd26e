@testable import Signaling
import XCTest

/// ``IdleCheckSchedule``: a connection comes up at its due time or at most 1 s later, never
/// before, and each scheduling gives exactly one take.
final class IdleCheckScheduleTests: XCTestCase {
    func testNeverTakenBeforeItsDueTimeAndAtMostASecondAfter() {
        var schedule = IdleCheckSchedule()
        schedule.schedule(1, atMono: 10_001)
        schedule.schedule(2, atMono: 11_000)
        schedule.schedule(3, atMono: 11_500)
        XCTAssertEqual(schedule.takeDue(nowMono: 10_999), [], "1 is due at 10.001 s: its bucket is 11 s")
        XCTAssertEqual(schedule.takeDue(nowMono: 11_000), [1, 2])
        XCTAssertEqual(schedule.takeDue(nowMono: 11_999), [], "3 is due at 11.5 s")
        XCTAssertEqual(schedule.takeDue(nowMono: 12_000), [3])
        XCTAssertEqual(schedule.count, 0)
    }

    func testEachSchedulingIsTakenOnceAndInDueOrderAfterAGap() {
        var schedule = IdleCheckSchedule()
        for id in (1 ... 50).reversed() { schedule.schedule(ConnectionID(id), atMono: Int64(id) * 1_000) }
        XCTAssertEqual(schedule.count, 50)
        // One pass long after all of them (the loop was stopped): each once, earliest first.
        XCTAssertEqual(schedule.takeDue(nowMono: 1_000_000), (1 ... 50).map { ConnectionID($0) })
        XCTAssertEqual(schedule.takeDue(nowMono: 2_000_000), [])
        XCTAssertEqual(schedule.count, 0)
    }

    func testADueTimeAlreadyPassedComesUpAtTheNextPass() {
        var schedule = IdleCheckSchedule()
        XCTAssertEqual(schedule.takeDue(nowMono: 20_000), [])
        schedule.schedule(7, atMono: 5_000)
        schedule.schedule(8, atMono: 20_000)
        XCTAssertEqual(schedule.takeDue(nowMono: 20_500), [], "the 20 s bucket was taken: both wait for the next")
        XCTAssertEqual(schedule.takeDue(nowMono: 21_000), [7, 8])
    }

    func testNegativeMonotonicTimesRoundTheSameWay() {
        var schedule = IdleCheckSchedule()
        schedule.schedule(1, atMono: -1_500)
        XCTAssertEqual(schedule.takeDue(nowMono: -1_001), [])
        XCTAssertEqual(schedule.takeDue(nowMono: -1_000), [1])
    }
}
