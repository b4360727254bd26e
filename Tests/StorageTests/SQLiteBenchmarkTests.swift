import Foundation
import XCTest
@testable import Storage

/// Throughput of the hot-path commit. Skipped unless SWITCHBOARD_BENCH=1; prints figures,
/// asserts no timing. Run: SWITCHBOARD_BENCH=1 swift test -c release --filter SQLiteBenchmarkTests
final class SQLiteBenchmarkTests: StorageTestCase {
    func testCommitThroughput() throws {
        try XCTSkipUnless(ProcessInfo.processInfo.environment["SWITCHBOARD_BENCH"] == "1", "set SWITCHBOARD_BENCH=1")
        for mode in [SynchronousMode.normal, .full] {
            let store = try openStore((ProcessInfo.processInfo.environment["SWITCHBOARD_BENCH_DIR"].map { URL(fileURLWithPath: $0) } ?? directory).appendingPathComponent("bench-\(mode.rawValue)-\(UUID().uuidString).sqlite").path, synchronous: mode)
            let calls = mode == .normal ? 5_000 : 300
            let state = Data(String(repeating: "x", count: 400).utf8)  // ~ a small call-state JSON
            let message = Data(String(repeating: "m", count: 200).utf8)
            let caller = StoredDeviceKey(account: "alice", device: "phone")
            let callee = StoredDeviceKey(account: "bob", device: "phone")
            var commits = 0
            let start = DispatchTime.now().uptimeNanoseconds
            let startCPU = Self.threadCPUNanoseconds()
            for index in 0..<calls {
                let id = "call-\(index)"
                // A typical call setup: invite (insert), ringing, answer (update) — each step
                // with an eventID record, outbox messages to both devices, and a deadline.
                for revision in Int64(1)...3 {
                    try store.commit(StepCommit(
                        callID: id, expectedRevision: revision == 1 ? nil : revision - 1,
                        call: StoredCall(callID: id, revision: revision, state: state, isTerminal: false,
                                         participants: ["alice", "bob"], createdAt: 0, updatedAt: revision),
                        processedEvent: ProcessedEvent(account: "alice", device: "phone", eventID: "\(id)-\(revision)",
                                                       payloadHash: "h", result: message, processedAt: revision),
                        outbox: [(caller, message), (callee, message)],
                        setDeadlines: [Deadline(callID: id, kind: "ring", dueAt: 60_000 + revision)],
                        now: revision))
                    commits += 1
                }
            }
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            let cpuSeconds = Double(Self.threadCPUNanoseconds() - startCPU) / 1e9
            // Wall-clock throughput depends on how busy the shared machine and disk are; the
            // per-CPU-second figure is the store's own cost (user + kernel time of this thread).
            print("SQLiteCallStore synchronous=\(mode.rawValue): \(commits) commits in \(String(format: "%.3f", seconds)) s wall = \(Int(Double(commits) / seconds)) commits/s; \(String(format: "%.3f", cpuSeconds)) s thread CPU = \(Int(Double(commits) / cpuSeconds)) commits per CPU-second")
            XCTAssertEqual(try store.lastSeq(for: callee), Int64(commits))
        }
    }

    /// CPU time (user + system) consumed by the calling thread.
    private static func threadCPUNanoseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }
}
