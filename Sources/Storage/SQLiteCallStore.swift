import CSQLite
import Foundation

/// `CallStore` on one SQLite file (WAL mode), through the C API.
///
/// Several instances (or processes) may share a file: every commit is a BEGIN IMMEDIATE
/// transaction whose call write is conditional on the revision, so exactly one of two racing
/// steps on the same revision wins and the other gets `revisionConflict` with nothing written.
///
/// `@unchecked Sendable`: the connection and its statement cache are touched only while holding
/// `lock`, so concurrent calls from several threads are serialized. The hub uses it from one
/// thread anyway.
public final class SQLiteCallStore: CallStore, @unchecked Sendable {
    /// Default location, relative to the working directory.
    public static let defaultPath = "./data/switchboard.sqlite"

    /// Schema version written by this build (`PRAGMA user_version`).
    public static var schemaVersion: Int { SQLiteMigrations.supportedVersion }

    public let path: String
    static let pageCacheKiB = 32 * 1024
    static let pageSizeBytes = 4096
    /// Recursive: a batch holds it while the steps inside take it again.
    private let lock = NSRecursiveLock()
    private var connection: SQLiteConnection?
    /// Nil for an in-memory database (no WAL file to checkpoint).
    private var checkpointer: WALCheckpointer?

    /// Opens (creating the file and its parent directories if needed) and migrates.
    /// Throws `schemaTooNew` for a newer schema, `notADatabase` for a foreign file.
    /// - Parameter backgroundCheckpoints: false leaves checkpoints to the caller (tests that
    ///   drive a `WALCheckpointer` themselves and must not race the background one).
    public init(path: String = SQLiteCallStore.defaultPath, synchronous: SynchronousMode = .normal,
                backgroundCheckpoints: Bool = true) throws {
        self.path = path
        try Self.createParentDirectory(of: path)
        let connection = try SQLiteConnection(path: path)
        // Pragmas, each with its reason (https://sqlite.org/pragma.html); checked in
        // SQLiteOpenTests.testPragmasAreSetAsDocumented.
        //
        // page_size 4096 (SQLite's default, stated so that a new file does not depend on the
        // library's build): a WAL frame is a whole page, and a commit writes every page it
        // dirtied, so a larger page writes more bytes per step; the hot rows (call state
        // without SDP ~0.6 KB, processed event, outbox entry) are well under a page. Only
        // applies to a new file, so it must come before journal_mode (WAL mode cannot change
        // it later).
        try connection.execute("PRAGMA page_size = \(Self.pageSizeBytes)")
        // journal_mode returns the resulting mode; an in-memory database stays "memory".
        let mode = try connection.scalarText("PRAGMA journal_mode = WAL")?.lowercased()
        if mode != "wal" && path != ":memory:" {
            throw StorageError.sqlite(code: SQLITE_ERROR, message: "journal_mode is \(mode ?? "unknown"), expected wal")
        }
        try connection.execute("PRAGMA synchronous = \(synchronous.rawValue)")
        // Group commit runs each step in a savepoint; SQLite keeps a page's pre-image per
        // savepoint in a sub-journal that spills to a temp file past 64 KiB, which a batch of
        // hundreds of steps does (profile: pwrite64 ~18 % of the hub thread). MEMORY keeps
        // sub-journals (and temp tables) in RAM; nothing durable lives there.
        try connection.execute("PRAGMA temp_store = MEMORY")
        // secure_delete FAST instead of ON, which Debian's SQLite is built with
        // (SQLITE_SECURE_DELETE): ON zeroes every page a commit frees — the overflow page of
        // an acknowledged outbox row, the old chain of rewritten or deleted descriptions —
        // so each freed page is a WAL frame of zeros, copied again by the checkpoint, and
        // written once more when the freelist hands it out (docs/benchmarks.md, "Pages per
        // committed step"). FAST still zeroes deleted content inside the B-tree pages the
        // commit writes anyway; a freed page keeps its old bytes until it is reused (within
        // seconds under load). Not a durability setting: what is committed is the same.
        try connection.execute("PRAGMA secure_delete = FAST")
        // 32 MiB page cache instead of the default 2 MiB: the outbox and processed-event
        // indexes outgrow 2 MiB within minutes of load, and every miss is a pread of the WAL.
        // SQLite's default page cache used to scan its whole hash table and every cached page
        // header at the COMMIT after any B-tree rebalance that renumbered sibling pages (a cost
        // proportional to this size, ~0.5 ms per such COMMIT at 32 MiB); `SQLitePageCache`
        // removes that scan without changing what is cached. 8 MiB had made the scan a quarter
        // but read twice the pages per setup once the database had grown (60 s runs, same CPU
        // per setup): docs/benchmarks.md, "Hub CPU per setup" and "Page-cache scan at COMMIT".
        try connection.execute("PRAGMA cache_size = -\(Self.pageCacheKiB)")
        // No checkpoint inside a commit: the WALCheckpointer thread does them through its own
        // connection, so the writer's thread never waits for a checkpoint's fsync.
        try connection.execute("PRAGMA wal_autocheckpoint = 0")
        // -1: the writer never truncates the WAL. With a limit (64 MB before), the first
        // commit after every RESTART `ftruncate`d the grown file back to it on the hub's
        // loop: 10.5 ms in one such commit (strace, 20 pairs), a stall for every frame queued
        // behind it. The file stays at its high-water mark instead, which the RESTART bound
        // keeps near `WALCheckpointer.defaultRestartBytes`, and its blocks are overwritten
        // rather than allocated again; a WAL file past `WALCheckpointer.defaultTruncateBytes`
        // (a burst the checkpointer could not follow) is truncated by the checkpointer, on
        // its own thread.
        try connection.execute("PRAGMA journal_size_limit = -1")
        // mmap_size stays 0 (not set): the hot pages sit in the 32 MiB page cache; pages that
        // are in the WAL are read with pread whatever mmap_size says
        // (https://sqlite.org/mmap.html), and they are the hot ones here; and an I/O error on
        // a mapped page is a SIGBUS that takes the hub down instead of an error it reports.
        // synchronous (see `SynchronousMode`): NORMAL by default; in WAL mode a commit is
        // durable across a process crash (kill -9) without an fsync per commit.
        // Foreign keys off while migrating: migration 6 rebuilds `calls`, whose DROP would
        // otherwise cascade to the participants (https://sqlite.org/lang_altertable.html,
        // "other kinds of table schema changes"). The pragma is a no-op inside a
        // transaction, so it is set here, around the migration transactions.
        try connection.execute("PRAGMA foreign_keys = OFF")
        try SQLiteMigrations.migrate(connection)
        try connection.execute("PRAGMA foreign_keys = ON")
        self.connection = connection
        if backgroundCheckpoints, path != ":memory:", !path.hasPrefix("file:") {
            let checkpointer = WALCheckpointer(path: path)
            checkpointer.start()
            self.checkpointer = checkpointer
        }
    }

    deinit {
        checkpointer?.stop()
        connection?.close()
    }

    /// Background checkpoints done so far (passive, restarts, failures).
    var checkpointStats: WALCheckpointer.Stats? { checkpointer?.current }

    /// Finalizes statements and closes the connection; later calls throw `closed`.
    public func close() {
        // The checkpointer's connection first: the writer's close then checkpoints what is
        // left and removes the WAL file (it is the last connection).
        checkpointer?.stop()
        checkpointer = nil
        lock.lock()
        defer { lock.unlock() }
        connection?.close()
        connection = nil
    }

    /// Group commit (see ``CallStore/batch(_:)``).
    public func batch<T>(_ body: () throws -> T) throws -> T {
        try locked { connection in try connection.batchTransaction(body) }
    }

    /// Runs `body` with the connection under the lock.
    func locked<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        guard let connection, connection.isOpen else { throw StorageError.closed }
        return try body(connection)
    }

    private static func createParentDirectory(of path: String) throws {
        guard path != ":memory:", !path.hasPrefix("file:") else { return }
        let parent = URL(fileURLWithPath: path).deletingLastPathComponent().path
        do {
            try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        } catch {
            throw StorageError.cannotOpen(path: path, message: "cannot create \(parent): \(error.localizedDescription)")
        }
    }
}
