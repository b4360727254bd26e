import CAllocationCounter
import Foundation
import Glibc
import Signaling
import XCTest

/// CPU and heap allocations per command of the signaling hub's Swift path (issue 2):
/// complete setups (``HubSetupWorkload``, 12 commands each) through a real ``SignalingHub``
/// on a real SQLite file. Skipped unless SWITCHBOARD_BENCH=1; prints figures, asserts no
/// timing. Run (release):
///   SWITCHBOARD_BENCH=1 swift test -c release --filter HubCPUBenchmarkTests
/// The printed `digest` is a hash of every frame the hub sent: equal digests from two
/// builds mean byte-identical output for the run.
final class HubCPUBenchmarkTests: XCTestCase {
    func testSetupsThroughTheHub() throws {
        try XCTSkipUnless(ProcessInfo.processInfo.environment["SWITCHBOARD_BENCH"] == "1", "set SWITCHBOARD_BENCH=1")
        let setups = Int(ProcessInfo.processInfo.environment["SETUPS"] ?? "") ?? 2_000
        // 24 frames per batch: about what the server's batch cut takes at 200 pairs.
        let batch = Int(ProcessInfo.processInfo.environment["BATCH"] ?? "") ?? 24
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hubbench-\(UUID().uuidString)")
        let workload = try HubSetupWorkload(directory: directory)
        defer { workload.close() }
        // Warm-up: caches, statements, the database's first pages.
        for _ in 0 ..< 50 { try workload.run(workload.nextSetup(), batchSize: batch) }
        let warmCommands = workload.commands, warmFrames = workload.framesOut
        let frames = (0 ..< setups).flatMap { _ in workload.nextSetup() }
        var cpu: Int64 = 0
        var allocs: UInt64 = 0
        try workload.run(frames, batchSize: batch) { batch in
            sb_alloc_count_enable_this_thread(true)
            let allocsBefore = sb_alloc_count_read()
            let cpuBefore = Self.threadCPUMicroseconds()
            defer {
                cpu += Self.threadCPUMicroseconds() - cpuBefore
                allocs += sb_alloc_count_read() - allocsBefore
                sb_alloc_count_enable_this_thread(false)
            }
            return try batch()
        }
        let commands = workload.commands - warmCommands
        print(String(format: "hub bench: %d setups, %d commands, %d frames out, %.1f µs CPU per command (hub and store, batches only), %.1f allocations per command, digest %016llx",
                     setups, commands, workload.framesOut - warmFrames, Double(cpu) / Double(commands),
                     Double(allocs) / Double(commands), workload.digest))
        XCTAssertEqual(workload.accepted, workload.commands, "every command of every setup is accepted")
    }

    static func threadCPUMicroseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1_000
    }
}
