import CSoup
import Foundation
import IO
import XCTest

final class EventLoopTests: XCTestCase {
    var loop: EventLoop!

    override func setUp() {
        loop = EventLoop(name: "test-loop")
        loop.start()
    }

    override func tearDown() {
        loop.stop()
        loop = nil
    }

    func testExecuteFromAnotherThreadRunsOnLoopThread() {
        XCTAssertFalse(loop.isOnLoopThread)
        let done = expectation(description: "ran")
        let loop = self.loop!
        DispatchQueue.global().async {
            loop.execute {
                XCTAssertTrue(loop.isOnLoopThread)
                var name = [CChar](repeating: 0, count: 16)
                XCTAssertEqual(sb_get_thread_name(&name), 0)
                XCTAssertEqual(String(cString: name), "test-loop")
                done.fulfill()
            }
        }
        wait(for: [done], timeout: 5)
    }

    func testExecuteRunsBlocksInSubmissionOrder() {
        let done = expectation(description: "all ran")
        var seen: [Int] = []
        for i in 0..<1000 {
            loop.execute {
                seen.append(i)
                if i == 999 { done.fulfill() }
            }
        }
        wait(for: [done], timeout: 5)
        XCTAssertEqual(seen, Array(0..<1000))
    }

    func testTimersFireInDeadlineOrderAndCancelWorks() {
        let done = expectation(description: "last timer")
        var fired: [Int] = []
        let loop = self.loop!
        let cancelled = loop.schedule(afterMilliseconds: 20) { fired.append(-1) }
        loop.schedule(afterMilliseconds: 60) {
            XCTAssertTrue(loop.isOnLoopThread)
            fired.append(3)
            done.fulfill()
        }
        loop.schedule(afterMilliseconds: 30) { fired.append(2) }
        loop.schedule(afterMilliseconds: 1) { fired.append(1) }
        XCTAssertTrue(cancelled.isPending)
        cancelled.cancel()
        XCTAssertFalse(cancelled.isPending)
        cancelled.cancel()  // idempotent
        wait(for: [done], timeout: 5)
        XCTAssertEqual(fired, [1, 2, 3])
    }

    func testCancelFromInsideAnotherTimer() {
        let done = expectation(description: "done")
        var fired: [String] = []
        let later = loop.schedule(afterMilliseconds: 50) { fired.append("later") }
        loop.schedule(afterMilliseconds: 5) {
            later.cancel()
            fired.append("first")
        }
        loop.schedule(afterMilliseconds: 100) { done.fulfill() }
        wait(for: [done], timeout: 5)
        XCTAssertEqual(fired, ["first"])
    }

    func testRunOnCallingThreadUntilStop() {
        let other = EventLoop(name: "run-loop")
        var ranOnCaller = false
        let caller = Thread.current
        other.execute {
            ranOnCaller = Thread.current == caller && other.isOnLoopThread
            other.schedule(afterMilliseconds: 1) { other.stop() }
        }
        other.run()
        XCTAssertTrue(ranOnCaller)
    }

    func testClocksAdvance() {
        let a = EventLoop.monotonicMilliseconds()
        usleep(5_000)
        XCTAssertGreaterThanOrEqual(EventLoop.monotonicMilliseconds(), a + 5)
        // After 2020-01-01: the wall clock is in Unix milliseconds, not seconds or µs.
        XCTAssertGreaterThan(EventLoop.wallClockMilliseconds(), 1_577_836_800_000)
        XCTAssertLessThan(EventLoop.wallClockMilliseconds(), 1_577_836_800_000 * 10)
    }

    func testRaiseFileDescriptorLimit() {
        let limit = IO.raiseFileDescriptorLimit()
        XCTAssertNotNil(limit)
        var rl = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &rl)
        XCTAssertEqual(UInt64(rl.rlim_cur), limit)
        XCTAssertEqual(rl.rlim_cur, rl.rlim_max)
    }
}
