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
    static let walAutocheckpointPages = 10_000
    static let journalSizeLimitBytes = 64 * 1024 * 1024
    /// Recursive: a batch holds it while the steps inside take it again.
    private let lock = NSRecursiveLock()
    private var connection: SQLiteConnection?

    /// Opens (creating the file and its parent directories if needed) and migrates.
    /// Throws `schemaTooNew` for a newer schema, `notADatabase` for a foreign file.
    public init(path: String = SQLiteCallStore.defaultPath, synchronous: SynchronousMode = .normal) throws {
        self.path = path
        try Self.createParentDirectory(of: path)
        let connection = try SQLiteConnection(path: path)
        // journal_mode returns the resulting mode; an in-memory database stays "memory".
        let mode = try connection.scalarText("PRAGMA journal_mode = WAL")?.lowercased()
        if mode != "wal" && path != ":memory:" {
            throw StorageError.sqlite(code: SQLITE_ERROR, message: "journal_mode is \(mode ?? "unknown"), expected wal")
        }
        try connection.execute("PRAGMA synchronous = \(synchronous.rawValue)")
        try connection.execute("PRAGMA foreign_keys = ON")
        // 10,000 pages (~40 MB of WAL at 4 KB pages) instead of the default 1,000: a checkpoint
        // (the only fsync under synchronous=NORMAL) every ~1,000 commits instead of ~100, and
        // hot pages (cursors, deadlines, index roots) are written back once per checkpoint.
        try connection.execute("PRAGMA wal_autocheckpoint = \(Self.walAutocheckpointPages)")
        // 64 MB: after a checkpoint resets the WAL, truncate the file back to this size so a
        // burst does not leave a huge WAL on disk.
        try connection.execute("PRAGMA journal_size_limit = \(Self.journalSizeLimitBytes)")
        try SQLiteMigrations.migrate(connection)
        self.connection = connection
    }

    deinit { connection?.close() }

    /// Finalizes statements and closes the connection; later calls throw `closed`.
    public func close() {
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
