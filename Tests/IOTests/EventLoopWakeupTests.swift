import CSoup
import Foundation
@testable import IO
import XCTest

/// `execute` from another thread writes the loop's wake-up eventfd only while the loop
/// sleeps in poll, once per sleep; blocks queued while it is busy run after its current
/// iteration without one, and none is ever lost.
final class EventLoopWakeupTests: XCTestCase {
    private final class Counter {
        private let lock = NSLock()
        private var n = 0
        func add() { lock.lock(); n += 1; lock.unlock() }
        var value: Int { lock.lock(); defer { lock.unlock() }; return n }
    }

    private func eventually(_ seconds: Double = 10, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            usleep(2_000)
        }
        return condition()
    }

    func testExecuteWakesASleepingLoopOnceAndABusyLoopNever() {
        let loop = EventLoop(name: "wakeup-test")
        loop.start()
        defer { loop.stop() }
        XCTAssertTrue(eventually { loop.isSleeping })
        let start = loop.wakeupsSent
        let entered = DispatchSemaphore(value: 0), gate = DispatchSemaphore(value: 0)
        // The loop sleeps: this block needs (and gets) one wake-up.
        loop.execute { entered.signal(); gate.wait() }
        entered.wait()
        XCTAssertEqual(loop.wakeupsSent, start + 1)
        // The loop is busy in that block: 100 blocks queue without a wake-up…
        let ran = Counter()
        for _ in 0 ..< 100 { loop.execute { ran.add() } }
        XCTAssertEqual(loop.wakeupsSent, start + 1)
        gate.signal()
        // …and run once it is free.
        XCTAssertTrue(eventually { ran.value == 100 })
        XCTAssertTrue(eventually { loop.isSleeping })
        // Asleep again: the next block wakes it once more; two in a row share the wake-up
        // unless the first already ran.
        loop.execute { ran.add() }
        XCTAssertTrue(eventually { ran.value == 101 })
        XCTAssertGreaterThanOrEqual(loop.wakeupsSent, start + 2)
    }

    /// 4 threads × 5,000 blocks with pauses, so that the loop often goes to sleep between
    /// them: every block runs (a lost wake-up would leave some queued while the loop sleeps
    /// with no timeout).
    func testBlocksFromManyThreadsAllRun() {
        let loop = EventLoop(name: "wakeup-race")
        loop.start()
        defer { loop.stop() }
        let ran = Counter()
        let threads = 4, perThread = 5_000
        let group = DispatchGroup()
        for t in 0 ..< threads {
            group.enter()
            Thread {
                for i in 0 ..< perThread {
                    loop.execute { ran.add() }
                    if (i + t) % 97 == 0 { usleep(50) }
                }
                group.leave()
            }.start()
        }
        group.wait()
        XCTAssertTrue(eventually { ran.value == threads * perThread })
        XCTAssertLessThanOrEqual(loop.wakeupsSent, threads * perThread)
    }

    /// A poll function installed by someone else on the loop thread (the benchmark's idle
    /// fleet paces its loops that way) never marks the loop as sleeping: `execute` then wakes
    /// it as before instead of leaving the block queued behind a poll with no timeout.
    func testAForeignPollFunctionStillGetsWokenUp() {
        let loop = EventLoop(name: "wakeup-foreign")
        loop.start()
        defer { loop.stop() }
        let installed = DispatchSemaphore(value: 0)
        loop.execute {
            g_main_context_set_poll_func(g_main_context_get_thread_default(), { fds, count, timeout in
                g_poll(fds, count, timeout)
            })
            installed.signal()
        }
        installed.wait()
        let ran = Counter()
        for i in 1 ... 10 {
            // Give the loop time to block in the foreign poll (no timeout: no timers).
            usleep(20_000)
            loop.execute { ran.add() }
            XCTAssertTrue(eventually(5) { ran.value == i }, "block \(i) not run")
        }
        XCTAssertFalse(loop.isSleeping)
    }
}
