import CSQLite
import Foundation
import XCTest
@testable import Storage

/// Checkpoints run off the writer's connection; the writer never checkpoints by itself, and
/// nothing committed depends on a checkpoint having run.
final class WALCheckpointerTests: StorageTestCase {
    private func fileSize(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
    }

    private func commitCalls(_ count: Int, prefix: String, into store: SQLiteCallStore) throws {
        let sdp = String(repeating: "a=candidate:1 1 udp 2122260223 192.0.2.1 54321 typ host\r\n", count: 40)
        for i in 0 ..< count {
            let id = "\(prefix)-\(i)"
            try store.commit(StepCommit(callID: id, expectedRevision: nil, call: call(id, revision: 1),
                                        outbox: [(bobPhone, Data(sdp.utf8))], now: 1_000))
        }
    }

    func testWriterDoesNotAutocheckpointAndAPassiveRoundCopiesTheWAL() throws {
        // No background checkpointer: it would race the one this test drives (a concurrent
        // checkpoint makes ours report -1 frames).
        let store = try SQLiteCallStore(path: databasePath, backgroundCheckpoints: false)
        defer { store.close() }
        XCTAssertEqual(try store.locked { try $0.scalarInt("PRAGMA wal_autocheckpoint") }, 0)
        // ~2,000 commits of ~2.4 KB: past SQLite's default autocheckpoint of 1,000 pages, so
        // the WAL would have been reset by the writer if it still checkpointed.
        try commitCalls(2_000, prefix: "c", into: store)
        let checkpointer = WALCheckpointer(path: databasePath)
        let connection = try SQLiteConnection(path: databasePath)
        defer { connection.close() }
        checkpointer.checkpoint(connection)
        XCTAssertEqual(checkpointer.current.passive, 1)
        XCTAssertEqual(checkpointer.current.failures, 0)
        XCTAssertGreaterThan(checkpointer.current.lastCheckpointedFrames, 1_000)
        // Everything was copied: the writer restarts the WAL from its start at its next
        // transaction, so the file does not grow further.
        try commitCalls(10, prefix: "d", into: store)
        let after = try WALCheckpointer.run("PASSIVE", on: connection)
        XCTAssertLessThan(after.frames, 500, "the WAL was not restarted: \(after.frames) frames")
        XCTAssertNotNil(try store.loadCall("c-1999"))
    }

    func testRestartWhenTheWALIsOverTheBound() throws {
        let store = try SQLiteCallStore(path: databasePath, backgroundCheckpoints: false)
        defer { store.close() }
        try commitCalls(300, prefix: "c", into: store)
        let checkpointer = WALCheckpointer(path: databasePath, restartBytes: 1)
        let connection = try SQLiteConnection(path: databasePath)
        defer { connection.close() }
        checkpointer.checkpoint(connection)
        XCTAssertEqual(checkpointer.current.restarts, 1)
        XCTAssertEqual(checkpointer.current.failures, 0)
        XCTAssertNotNil(try store.loadCall("c-299"))
    }

    /// The writer never truncates the WAL (`journal_size_limit = -1`): after a RESTART it
    /// overwrites the file from its start. Only a file past `truncateBytes` is shrunk, by
    /// the checkpointer's TRUNCATE, and the writer then goes on in a new file.
    func testOnlyAnOversizedWALFileIsTruncatedAndByTheCheckpointer() throws {
        let store = try SQLiteCallStore(path: databasePath, backgroundCheckpoints: false)
        defer { store.close() }
        let wal = databasePath + "-wal"
        try commitCalls(300, prefix: "c", into: store)
        let grown = fileSize(wal)
        XCTAssertGreaterThan(grown, 300 * 4096)
        let connection = try SQLiteConnection(path: databasePath)
        defer { connection.close() }
        // A RESTART below the truncation bound: the file keeps its size, also once the
        // writer starts over at its beginning.
        let restarting = WALCheckpointer(path: databasePath, restartBytes: 1, truncateBytes: grown * 2)
        restarting.checkpoint(connection)
        XCTAssertEqual(restarting.current.restarts, 1)
        XCTAssertEqual(restarting.current.truncations, 0)
        try commitCalls(5, prefix: "d", into: store)
        XCTAssertEqual(fileSize(wal), grown)
        XCTAssertLessThan(try WALCheckpointer.run("PASSIVE", on: connection).frames, 100, "the writer started over")
        // Past the bound: TRUNCATE, on the checkpointer's connection.
        let truncating = WALCheckpointer(path: databasePath, truncateBytes: grown - 1)
        truncating.checkpoint(connection)
        XCTAssertEqual(truncating.current.truncations, 1)
        XCTAssertEqual(truncating.current.restarts, 1)
        XCTAssertEqual(truncating.current.failures, 0)
        XCTAssertEqual(fileSize(wal), 0)
        try commitCalls(5, prefix: "e", into: store)
        XCTAssertGreaterThan(fileSize(wal), 0)
        for id in ["c-299", "d-4", "e-4"] { XCTAssertNotNil(try store.loadCall(id), id) }
    }

    /// With no writer in between, the first pass copies everything and the second finds
    /// nothing new: the round counts as caught up after two passes, no RESTART, and the
    /// frames it saw are counted as written.
    func testARoundWithoutConcurrentWritesCatchesUpInOnePass() throws {
        let store = try SQLiteCallStore(path: databasePath, backgroundCheckpoints: false)
        defer { store.close() }
        try commitCalls(200, prefix: "c", into: store)
        let checkpointer = WALCheckpointer(path: databasePath)
        let connection = try SQLiteConnection(path: databasePath)
        defer { connection.close() }
        checkpointer.checkpoint(connection)
        let stats = checkpointer.current
        XCTAssertEqual(stats.passes, 2)
        XCTAssertEqual(stats.caughtUp, 1)
        XCTAssertEqual(stats.restarts, 0)
        XCTAssertFalse(stats.restarting)
        XCTAssertGreaterThan(stats.framesWritten, 200)
        XCTAssertEqual(stats.framesWritten, stats.lastCheckpointedFrames)
        // The writer restarted the WAL at its next commit: the next round sees a small WAL
        // and counts only the new frames.
        try commitCalls(5, prefix: "d", into: store)
        checkpointer.checkpoint(connection)
        XCTAssertLessThan(checkpointer.current.framesWritten - stats.framesWritten, 100)
    }

    func testTheBackgroundThreadCheckpointsAndStops() throws {
        let store = try openStore()
        try commitCalls(500, prefix: "c", into: store)
        let deadline = Date().addingTimeInterval(10)
        while (store.checkpointStats?.passive ?? 0) < 1 && Date() < deadline { usleep(50_000) }
        XCTAssertGreaterThanOrEqual(store.checkpointStats?.passive ?? 0, 1)
        XCTAssertEqual(store.checkpointStats?.failures, 0)
        // The threads carry their own names in the kernel, not the process's; the passes run
        // at the lowest priority, the thread for RESTART at the process's.
        XCTAssertEqual(Self.threadNice(WALCheckpointer.threadName), WALCheckpointer.passiveNice, "\(Self.threadNames())")
        XCTAssertEqual(Self.threadNice(WALCheckpointer.restartThreadName), sb_sqlite_thread_nice())
        store.close()
        // The writer was the last connection: its close checkpointed and removed the WAL.
        XCTAssertFalse(FileManager.default.fileExists(atPath: databasePath + "-wal"))
        // Both threads are gone.
        XCTAssertTrue(Self.threadsGone([WALCheckpointer.threadName, WALCheckpointer.restartThreadName]), "\(Self.threadNames())")
    }

    /// The passes run at nice 19, but a RESTART holds the writer off: it runs on the other
    /// thread, at the priority of the thread that started the checkpointer, while the
    /// passive thread waits for it.
    func testARestartRunsOffTheLowPriorityThread() throws {
        let store = try SQLiteCallStore(path: databasePath, backgroundCheckpoints: false)
        defer { store.close() }
        try commitCalls(200, prefix: "c", into: store)
        let checkpointer = WALCheckpointer(path: databasePath, intervalMilliseconds: 20, restartBytes: 1)
        checkpointer.start()
        let deadline = Date().addingTimeInterval(10)
        while checkpointer.current.restarts < 2 && Date() < deadline {
            try commitCalls(20, prefix: "r\(checkpointer.current.passive)-\(Int(Date().timeIntervalSince1970 * 1e6))", into: store)
            usleep(10_000)
        }
        XCTAssertEqual(Self.threadNice(WALCheckpointer.threadName), WALCheckpointer.passiveNice)
        checkpointer.stop()
        let stats = checkpointer.current
        XCTAssertGreaterThanOrEqual(stats.restarts, 2)
        XCTAssertEqual(stats.failures, 0)
        XCTAssertFalse(stats.restarting)
        XCTAssertEqual(stats.lastRestartNice, sb_sqlite_thread_nice())
        XCTAssertNotEqual(stats.lastRestartNice, WALCheckpointer.passiveNice)
        XCTAssertTrue(Self.threadsGone([WALCheckpointer.threadName, WALCheckpointer.restartThreadName]), "\(Self.threadNames())")
        // Everything committed is still there after the RESTARTs.
        XCTAssertEqual(try store.loadCall("c-199")?.revision, 1)
    }

    /// Whether no thread of this process has one of `names`, within 5 s: a thread signals
    /// that it is done just before it returns, so the kernel may list it a moment longer.
    static func threadsGone(_ names: [String]) -> Bool {
        let deadline = Date().addingTimeInterval(5)
        while names.contains(where: { threadNice($0) != nil }) {
            guard Date() < deadline else { return false }
            usleep(5_000)
        }
        return true
    }

    /// The nice value of this process's thread named `name` (`/proc/self/task/*/stat` field
    /// 19), nil if there is none.
    static func threadNice(_ name: String) -> Int32? {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        for task in tasks {
            guard let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8),
                  let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")"),
                  stat[stat.index(after: open) ..< close] == name else { continue }
            // After "(comm)": field 3 (state) onwards; nice is field 19.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 16 ? Int32(fields[16]) : nil
        }
        return nil
    }

    /// What a `kill -9` leaves: the database and WAL files as they are in the page cache
    /// right after the commits returned, with no checkpoint and no close. Copying them while
    /// the store is open is that state; every acknowledged commit must be in the copy.
    func testFilesAsLeftByAKillRightAfterCommitsHoldEveryCommit() throws {
        let store = try openStore()
        try commitCalls(1_500, prefix: "k", into: store)
        let copy = directory.appendingPathComponent("crashed.sqlite").path
        try store.locked { _ in
            try FileManager.default.copyItem(atPath: databasePath, toPath: copy)
            try FileManager.default.copyItem(atPath: databasePath + "-wal", toPath: copy + "-wal")
        }
        store.close()
        let reopened = try openStore(copy)
        defer { reopened.close() }
        for i in [0, 749, 1_499] {
            XCTAssertEqual(try reopened.loadCall("k-\(i)")?.revision, 1, "k-\(i) lost")
        }
        XCTAssertEqual(try reopened.outbox(for: bobPhone, after: 0, limit: 2_000).count, 1_500)
    }

    /// The kernel names of this process's threads.
    static func threadNames() -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.compactMap { try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8) }
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
    }
}
