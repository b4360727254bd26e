@testable import Bench
import XCTest

/// ``HostCPU``: the `cpu` line of /proc/stat (proc(5)) as busy ticks, and busy cores over a window.
final class HostCPUTests: XCTestCase {
    /// The aggregate line as read off this host (user 298365, nice 453, system 114658, idle
    /// 258883, iowait 3286, irq 0, softirq 32636, steal 278, guest 0, guest_nice 0); the
    /// per-CPU lines and the rest are made up in the file's shape.
    static let stat = """
        cpu  298365 453 114658 258883 3286 0 32636 278 0 0
        cpu0 149001 200 57000 129000 1600 0 16000 140 0 0
        cpu1 149364 253 57658 129883 1686 0 16636 138 0 0
        intr 123456 0 9
        ctxt 987654
        """

    func testBusyIsEverythingButIdleAndIOWait() throws {
        let cpu = try XCTUnwrap(HostCPU.parse(Self.stat))
        XCTAssertEqual(cpu, HostCPU(busyTicks: 298_365 + 453 + 114_658 + 0 + 32_636 + 278))
    }

    func testBusyCoresOverAWindow() {
        let start = HostCPU(busyTicks: 1_000)
        let end = HostCPU(busyTicks: 1_000 + 3_600)
        // 3,600 ticks at 100/s over 20 s: 1.8 cores busy.
        XCTAssertEqual(HostCPU.busyCores(from: start, to: end, seconds: 20, ticksPerSecond: 100) ?? 0, 1.8, accuracy: 1e-9)
        XCTAssertNil(HostCPU.busyCores(from: end, to: start, seconds: 20, ticksPerSecond: 100), "counters never go back")
        XCTAssertNil(HostCPU.busyCores(from: start, to: end, seconds: 0, ticksPerSecond: 100))
    }

    func testMalformedStatGivesNil() {
        XCTAssertNil(HostCPU.parse(""))
        XCTAssertNil(HostCPU.parse("cpu0 1 2 3 4 5 6 7 8\n"), "only the aggregate line counts")
        XCTAssertNil(HostCPU.parse("cpu  1 2 3 4 5 6 7\n"), "steal missing")
        XCTAssertNil(HostCPU.parse("cpu  1 2 x 4 5 6 7 8 9\n"), "a field that is not a number, not skipped")
    }

    func testThisHostsStatParses() throws {
        let cpu = try XCTUnwrap(HostCPU.read())
        XCTAssertGreaterThan(cpu.busyTicks, 0)
    }
}
