@testable import Bench
import Foundation
import IO
import XCTest

/// ``PollPacer``: the plan for each poll, from the clock the caller passes; and
/// ``PacedPoll`` on a real event loop (counts, not times).
final class PollPacerTests: XCTestCase {
    func testUnpacedPollsPassThrough() {
        var pacer = PollPacer()
        pacer.returned(now: 1_000)
        XCTAssertEqual(pacer.plan(now: 1_001, timeoutMs: -1).sleepMicros, 0)
        XCTAssertEqual(pacer.plan(now: 1_001, timeoutMs: -1).pollTimeoutMs, -1)
        XCTAssertEqual(pacer.plan(now: 1_001, timeoutMs: 7).pollTimeoutMs, 7)
    }

    func testFirstPollIsNotDelayed() {
        let pacer = PollPacer(spacingMicros: 250_000)
        let plan = pacer.plan(now: 5_000_000, timeoutMs: -1)
        XCTAssertEqual(plan.sleepMicros, 0)
        XCTAssertEqual(plan.pollTimeoutMs, -1)
    }

    func testBlockingPollWaitsOutTheSpacing() {
        var pacer = PollPacer(spacingMicros: 250_000)
        pacer.returned(now: 1_000_000)
        let plan = pacer.plan(now: 1_100_000, timeoutMs: -1)
        XCTAssertEqual(plan.sleepMicros, 150_000, "until 250 ms after the last return")
        XCTAssertEqual(plan.pollTimeoutMs, -1, "then blocks as GLib asked")
    }

    func testATimerDueSoonerIsNotDelayed() {
        var pacer = PollPacer(spacingMicros: 250_000)
        pacer.returned(now: 1_000_000)
        let plan = pacer.plan(now: 1_000_000, timeoutMs: 40)
        XCTAssertEqual(plan.sleepMicros, 40_000, "sleeps only until the timer is due")
        XCTAssertEqual(plan.pollTimeoutMs, 0, "then looks without blocking")
    }

    func testATimerDueLaterKeepsItsRest() {
        var pacer = PollPacer(spacingMicros: 250_000)
        pacer.returned(now: 1_000_000)
        let plan = pacer.plan(now: 1_200_000, timeoutMs: 1_000)
        XCTAssertEqual(plan.sleepMicros, 50_000)
        XCTAssertEqual(plan.pollTimeoutMs, 950)
        // A rest below 1 ms rounds up instead of becoming a busy 0 ms poll.
        let close = pacer.plan(now: 1_249_500, timeoutMs: 1)
        XCTAssertEqual(close.sleepMicros, 500)
        XCTAssertEqual(close.pollTimeoutMs, 1)
    }

    func testNonBlockingPollsAndLatePollsAreNotDelayed() {
        var pacer = PollPacer(spacingMicros: 250_000)
        pacer.returned(now: 1_000_000)
        XCTAssertEqual(pacer.plan(now: 1_010_000, timeoutMs: 0).sleepMicros, 0, "pending work runs at once")
        XCTAssertEqual(pacer.plan(now: 1_010_000, timeoutMs: 0).pollTimeoutMs, 0)
        XCTAssertEqual(pacer.plan(now: 1_250_000, timeoutMs: -1).sleepMicros, 0, "the spacing has passed")
        XCTAssertEqual(pacer.plan(now: 9_000_000, timeoutMs: 30).pollTimeoutMs, 30)
    }

    /// 40 wake-ups 1 ms apart from another thread (each `execute` signals the loop's wakeup
    /// fd, as an arriving frame makes a socket readable) on a loop paced at 200 ms: every
    /// block runs, and the loop blocks in poll at most once per 200 ms of the time it took
    /// (unpaced: about once per wake-up).
    func testPacedLoopBatchesWakeUps() {
        let loop = EventLoop(name: "paced-test")
        loop.start()
        defer { loop.stop() }
        let spacing: Int64 = 200_000
        var pollsBefore = 0
        let installed = DispatchSemaphore(value: 0)
        loop.execute {
            PacedPoll.install(spacingMicros: spacing)
            pollsBefore = PacedPoll.polls
            installed.signal()
        }
        installed.wait()
        let start = EventLoop.monotonicMicroseconds()
        let done = DispatchSemaphore(value: 0)
        var ran = 0
        for _ in 0 ..< 40 {
            loop.execute {
                ran += 1
                if ran == 40 { done.signal() }
            }
            usleep(1_000)
        }
        XCTAssertEqual(done.wait(timeout: .now() + 30), .success, "every block ran")
        let elapsed = EventLoop.monotonicMicroseconds() - start
        var polls = 0
        let read = DispatchSemaphore(value: 0)
        loop.execute {
            polls = PacedPoll.polls - pollsBefore
            read.signal()
        }
        read.wait()
        XCTAssertEqual(ran, 40)
        XCTAssertLessThanOrEqual(polls, Int(elapsed / spacing) + 2, "polls: \(polls) in \(elapsed) µs")
        XCTAssertLessThan(polls, 40)
    }
}
