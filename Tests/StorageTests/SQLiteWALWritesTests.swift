import Foundation
import XCTest
@testable import Storage

/// The "switchboard-wal" VFS (`SQLiteWALWrites`, `sb_walvfs_*` in CSQLite's walvfs.h): a
/// transaction's WAL frames reach the kernel together, and every commit is readable at once by
/// another connection, another thread and another process (Python's `sqlite3`, SQLite's own
/// default VFS), including transactions that spilled frames before their commit and ones that
/// rolled back.
final class SQLiteWALWritesTests: StorageTestCase {
    /// A connection in WAL mode with automatic checkpoints off, so that every commit's frames
    /// stay in the WAL file for the readers to find there.
    func openWAL(_ path: String? = nil) throws -> SQLiteConnection {
        let connection = try SQLiteConnection(path: path ?? databasePath)
        XCTAssertEqual(try connection.scalarText("PRAGMA journal_mode = WAL"), "wal")
        try connection.executeScript("""
            PRAGMA synchronous = NORMAL;
            PRAGMA wal_autocheckpoint = 0;
            CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, body BLOB NOT NULL);
            """)
        return connection
    }

    /// Row `id`'s body: `size` bytes that depend on `id`, so that a page from another commit or
    /// a torn frame cannot pass for it.
    static func body(_ id: Int64, size: Int = 3_000) -> Data {
        Data((0 ..< size).map { UInt8(truncatingIfNeeded: Int64($0) &* 31 &+ id &* 7) })
    }

    func insert(_ ids: ClosedRange<Int64>, size: Int = 3_000, into connection: SQLiteConnection) throws {
        try connection.immediateTransaction {
            try connection.with("INSERT INTO t (id, body) VALUES (?1, ?2)") { statement in
                for id in ids {
                    try statement.bind(1, id)
                    try statement.bind(2, Self.body(id, size: size))
                    try statement.run()
                    statement.reset()
                }
            }
        }
    }

    /// Checks that `connection` sees exactly rows 1…`count`, each with its own body.
    func assertRows(_ count: Int64, size: Int = 3_000, in connection: SQLiteConnection,
                    file: StaticString = #filePath, line: UInt = #line) throws {
        var seen: Int64 = 0
        try connection.withUncached("SELECT id, body FROM t ORDER BY id") { statement in
            while try statement.step() {
                seen += 1
                XCTAssertEqual(statement.int64(0), seen, file: file, line: line)
                XCTAssertEqual(statement.data(1), Self.body(seen, size: size), "row \(seen)", file: file, line: line)
            }
        }
        XCTAssertEqual(seen, count, file: file, line: line)
    }

    func testEveryConnectionOpensThroughTheVFS() throws {
        let connection = try openWAL()
        XCTAssertTrue(SQLiteWALWrites.isRegistered)
        XCTAssertEqual(try connection.scalarText("PRAGMA journal_mode"), "wal")
        let before = SQLiteWALWrites.stats.walWrites
        try insert(1 ... 1, into: connection)
        XCTAssertGreaterThan(SQLiteWALWrites.stats.walWrites, before, "the commit went through the VFS")
    }

    /// ~10 frames (10 rows of 3 KB, one per leaf, plus the root): one write(2), at the commit
    /// frame, instead of two per frame. Fails without the buffer (kernel writes = SQLite's).
    func testACommitsFramesReachTheKernelInOneWrite() throws {
        let connection = try openWAL()
        try insert(1 ... 1, into: connection)
        let before = SQLiteWALWrites.stats
        try insert(2 ... 11, into: connection)
        let after = SQLiteWALWrites.stats
        let sqliteWrites = after.walWrites - before.walWrites
        XCTAssertGreaterThanOrEqual(sqliteWrites, 20, "header and page for each of ≥ 10 frames")
        XCTAssertEqual(sqliteWrites % 2, 0)
        XCTAssertEqual(after.realWalWrites - before.realWalWrites, 1)
        XCTAssertEqual(after.commitFlushes - before.commitFlushes, 1)
        XCTAssertEqual(after.flushFailures, before.flushFailures)
        try assertRows(11, in: connection)
    }

    /// 100 rows of 3 KB (~100 frames): no write over the unix VFS's 128 KiB limit (a longer
    /// one comes back as SQLITE_FULL), so a few writes of up to 31 frames.
    func testALargeCommitIsWrittenInPiecesOf31FramesAtMost() throws {
        let connection = try openWAL()
        let before = SQLiteWALWrites.stats
        try insert(1 ... 100, into: connection)
        let after = SQLiteWALWrites.stats
        let frames = (after.walWrites - before.walWrites) / 2
        XCTAssertGreaterThanOrEqual(frames, 100)
        let kernelWrites = after.realWalWrites - before.realWalWrites
        // 4,120-byte frames, at most 131,071 bytes per write: 31 frames and the next header.
        XCTAssertGreaterThanOrEqual(kernelWrites, (frames * 4_120 + 131_070) / 131_071, "\(frames) frames")
        XCTAssertLessThanOrEqual(kernelWrites, frames / 31 + 1, "\(frames) frames")
        try assertRows(100, in: connection)
    }

    /// Every commit's frames are written by the write of its commit frame (where an error
    /// would fail the transaction), whatever its size: also with 32 frames, whose commit
    /// frame's header is the last thing that fits in a buffer of 31 frames.
    func testEveryCommitIsWrittenAtItsCommitFrameWhateverItsSize() throws {
        let connection = try openWAL()
        var frameCounts: Set<UInt> = []
        var next: Int64 = 1
        for rows in Int64(20) ... 40 {
            let before = SQLiteWALWrites.stats
            try insert(next ... next + rows - 1, into: connection)
            next += rows
            let after = SQLiteWALWrites.stats
            frameCounts.insert((after.walWrites - before.walWrites) / 2)
            XCTAssertEqual(after.commitFlushes - before.commitFlushes, 1, "\(rows) rows")
        }
        XCTAssertTrue(frameCounts.contains(32), "\(frameCounts.sorted())")
        try assertRows(next - 1, in: connection)
    }

    /// Each commit is visible to a second connection of the same process at once: on this
    /// thread (which shares the thread's buffer slot) and on another thread.
    func testAnotherConnectionSeesEachCommitAtOnce() throws {
        let writer = try openWAL()
        let reader = try openWAL()
        let otherThreadReader = try openWAL()
        for round in Int64(0) ..< 50 {
            try insert(round * 3 + 1 ... round * 3 + 3, into: writer)
            XCTAssertEqual(try reader.scalarInt("SELECT count(*) FROM t"), round * 3 + 3)
            let expected = round * 3 + 3
            let seen = DispatchQueue.global().sync { try? otherThreadReader.scalarInt("SELECT count(*) FROM t") }
            XCTAssertEqual(seen, expected)
        }
        try assertRows(150, in: reader)
        XCTAssertEqual(try reader.scalarText("PRAGMA integrity_check"), "ok")
    }

    /// SQLite's own VFS in another process (Python's `sqlite3` module) reads every row from
    /// the WAL the writer left (no checkpoint ran), then checks the file's integrity.
    func testAnotherProcessReadsTheWALWithSQLitesOwnVFS() throws {
        let writer = try openWAL()
        for round in Int64(0) ..< 20 {
            try insert(round * 5 + 1 ... round * 5 + 5, into: writer)
        }
        let walBytes = (try FileManager.default.attributesOfItem(atPath: databasePath + "-wal")[.size] as? Int) ?? 0
        XCTAssertGreaterThan(walBytes, 100 * 3_000, "the rows are in the WAL, not the database file")
        let script = """
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            n = 0
            for (id, body) in db.execute("SELECT id, body FROM t ORDER BY id"):
                n += 1
                expected = bytes(((i * 31 + id * 7) & 0xff) for i in range(3000))
                assert id == n and body == expected, f"row {id}"
            print(n, db.execute("PRAGMA integrity_check").fetchone()[0])
            """
        XCTAssertEqual(try runPython(script, databasePath), "100 ok")
    }

    /// A transaction larger than the writer's page cache writes (spills) frames before its
    /// commit and reads them back; one that rolls back after spilling leaves frames past the
    /// last commit, which readers and recovery ignore.
    func testSpilledAndRolledBackTransactionsLeaveTheDatabaseIntact() throws {
        let writer = try openWAL()
        try writer.executeScript("PRAGMA cache_size = 20")
        try insert(1 ... 200, into: writer)
        try assertRows(200, in: writer)
        // Spills, then rolls back.
        XCTAssertThrowsError(try writer.immediateTransaction {
            try writer.with("INSERT INTO t (id, body) VALUES (?1, ?2)") { statement in
                for id in Int64(201) ... 400 {
                    try statement.bind(1, id)
                    try statement.bind(2, Self.body(id))
                    try statement.run()
                    statement.reset()
                }
            }
            throw StorageError.closed
        })
        try assertRows(200, in: writer)
        try insert(201 ... 210, into: writer)
        let reader = try openWAL()
        try assertRows(210, in: reader)
        XCTAssertEqual(try runPython("""
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            print(db.execute("SELECT count(*) FROM t").fetchone()[0], db.execute("PRAGMA integrity_check").fetchone()[0])
            """, databasePath), "210 ok")
        XCTAssertEqual(SQLiteWALWrites.stats.flushFailures, 0)
    }

    /// After the writer's connection is gone (its last commit not checkpointed), a new one
    /// recovers the WAL and finds every row: what a restart after `kill -9` reads.
    func testANewConnectionRecoversEveryCommitFromTheWAL() throws {
        var writer: SQLiteConnection? = try openWAL()
        try insert(1 ... 40, into: writer!)
        // Copy the files before the writer closes (a close checkpoints): the copy is what a
        // process killed at this point leaves on disk.
        let copy = directory.appendingPathComponent("copy.sqlite").path
        for suffix in ["", "-wal"] {
            try FileManager.default.copyItem(atPath: databasePath + suffix, toPath: copy + suffix)
        }
        writer = nil
        let recovered = try SQLiteConnection(path: copy)
        try assertRows(40, in: recovered)
        XCTAssertEqual(try recovered.scalarText("PRAGMA integrity_check"), "ok")
    }

    private func runPython(_ script: String, _ argument: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, argument]
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let errorText = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, errorText)
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
