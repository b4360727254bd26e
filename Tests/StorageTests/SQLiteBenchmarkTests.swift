import Foundation
import XCTest
@testable import Storage

/// Throughput of the hot-path commit. Skipped unless SWITCHBOARD_BENCH=1; prints figures,
/// asserts no timing. Run: SWITCHBOARD_BENCH=1 swift test -c release --filter SQLiteBenchmarkTests
final class SQLiteBenchmarkTests: StorageTestCase {
    func testCommitThroughput() throws {
        try XCTSkipUnless(ProcessInfo.processInfo.environment["SWITCHBOARD_BENCH"] == "1", "set SWITCHBOARD_BENCH=1")
        for mode in [SynchronousMode.normal, .full] {
            let store = try openStore(benchmarkPath(mode.rawValue), synchronous: mode)
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

    /// The smallest useful step: a call update plus its eventID record (no outbox, no deadline).
    func testSmallCommitThroughput() throws {
        try XCTSkipUnless(ProcessInfo.processInfo.environment["SWITCHBOARD_BENCH"] == "1", "set SWITCHBOARD_BENCH=1")
        let store = try openStore(benchmarkPath("small"))
        let state = Data(String(repeating: "x", count: 200).utf8)
        try store.commit(StepCommit(callID: "c", expectedRevision: nil, call: StoredCall(
            callID: "c", revision: 1, state: state, isTerminal: false, participants: ["alice", "bob"],
            createdAt: 0, updatedAt: 0), now: 0))
        let commits = 20_000
        let start = DispatchTime.now().uptimeNanoseconds
        let startCPU = Self.threadCPUNanoseconds()
        for revision in Int64(2)...Int64(commits + 1) {
            try store.commit(StepCommit(
                callID: "c", expectedRevision: revision - 1,
                call: StoredCall(callID: "c", revision: revision, state: state, isTerminal: false,
                                 participants: ["alice", "bob"], createdAt: 0, updatedAt: revision),
                processedEvent: ProcessedEvent(account: "alice", device: "phone", eventID: "e\(revision)",
                                               payloadHash: "h", result: Data("{}".utf8), processedAt: revision),
                now: revision))
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let cpuSeconds = Double(Self.threadCPUNanoseconds() - startCPU) / 1e9
        print("SQLiteCallStore small commits: \(commits) in \(String(format: "%.3f", seconds)) s wall = \(Int(Double(commits) / seconds)) commits/s; \(Int(Double(commits) / cpuSeconds)) commits per CPU-second")
        XCTAssertEqual(try store.loadCall("c")?.revision, Int64(commits + 1))
    }

    /// The store's share of complete call setups (`SetupReplay`: 12 steps, 25 deliveries,
    /// acks, batches of 8 steps, 8 setups in flight): µs of this thread's CPU and WAL bytes per
    /// setup, after a 200-setup warm-up. No background checkpoints, so the WAL holds every
    /// frame written.
    func testSetupReplay() throws {
        try XCTSkipUnless(ProcessInfo.processInfo.environment["SWITCHBOARD_BENCH"] == "1", "set SWITCHBOARD_BENCH=1")
        let path = benchmarkPath("replay")
        let store = try SQLiteCallStore(path: path, backgroundCheckpoints: false)
        let replay = SetupReplay(setups: 2_000)
        try replay.registerDevices(in: store)
        _ = try SetupReplay(setups: 200).run(store: store, walPath: path + "-wal")
        let figures = try replay.run(store: store, walPath: path + "-wal")
        print("SQLiteCallStore setup replay: \(figures.setups) setups, \(figures.steps) steps in \(figures.batches) batches: "
              + String(format: "%.0f µs CPU per setup, %.0f WAL bytes per setup", figures.microsecondsPerSetup, figures.walBytesPerSetup))
        // Every device acknowledged everything: nothing is left to deliver.
        XCTAssertEqual(try store.outbox(for: StoredDeviceKey(account: "callee-0", device: "b0"), after: 0, limit: 10), [])
        store.close()
    }

    /// In the test's temp directory, or under SWITCHBOARD_BENCH_DIR (e.g. /dev/shm to take the
    /// disk out of the measurement).
    private func benchmarkPath(_ name: String) -> String {
        let base = ProcessInfo.processInfo.environment["SWITCHBOARD_BENCH_DIR"].map { URL(fileURLWithPath: $0) } ?? directory!
        return base.appendingPathComponent("bench-\(name)-\(UUID().uuidString).sqlite").path
    }

    /// CPU time (user + system) consumed by the calling thread.
    private static func threadCPUNanoseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }
}
