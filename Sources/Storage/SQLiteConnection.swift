import CSQLite
import Foundation

/// One SQLite connection with a prepared-statement cache. Not thread-safe by itself: the owning
/// `SQLiteCallStore` serializes all access with its lock.
final class SQLiteConnection {
    let path: String
    private var db: OpaquePointer?
    /// Statements prepared once per SQL text and reused (reset + clear bindings after each use).
    private var cache: [StatementKey: SQLiteStatement] = [:]
    /// True while ``batchTransaction(_:)`` runs: step transactions run inside it.
    private var inBatch = false
    /// The error of a step that failed after writing, in the current batch: the batch can
    /// only roll back as a whole (see ``immediateTransaction(_:)``).
    private var batchFailure: Error?
    /// True between a BEGIN IMMEDIATE and its COMMIT/ROLLBACK.
    private(set) var holdsWriteLock = false
    /// The outbox log's in-memory index (see `OutboxIndex`); nil = must be rebuilt before use.
    /// Valid while no other connection has committed (checked with `PRAGMA data_version` when
    /// the write lock is taken and before reads outside it) and nothing that changed it was
    /// rolled back (dropped on such a rollback, of a step or of a transaction).
    var outboxIndex: OutboxIndex?
    /// `OutboxIndex.settledLimit` for indexes built on this connection; nil = the default
    /// (tests set a small one to see devices forgotten).
    var outboxSettledLimit: Int?
    /// `SQLiteCallStore.acknowledgedRowsPerDeletion` on this connection; nil = the default
    /// (tests set 1 to see rows leave with the acknowledgement that emptied them).
    var acknowledgedRowsPerDeletion: Int?
    /// Live calls as this connection last wrote them, per call ID (``KnownCall``), so that a
    /// step need not read the participant rows back to compare, nor the revision to check
    /// it. Same validity as `outboxIndex`; only live calls are kept.
    var knownCalls: [String: KnownCall] = [:]
    /// Whether the current step (or transaction) changed `outboxIndex` or `knownCalls`: a
    /// rollback must then drop them. Set by the changer before the change.
    var derivedTouched = false

    /// Forgets the derived state; it is rebuilt from the database on next use.
    func dropDerivedState() {
        outboxIndex = nil
        knownCalls.removeAll()
    }
    /// `PRAGMA data_version` when `outboxIndex` was last known valid.
    private var dataVersion: Int64 = -1

    /// 5 s: far longer than any single commit here (tens of microseconds), so a second process
    /// sharing the file waits for the write lock instead of failing; short enough that a wedged
    /// peer surfaces as an error instead of hanging the hub.
    static let busyTimeoutMilliseconds: Int32 = 5_000

    init(path: String) throws {
        self.path = path
        // Before SQLite initializes (the first open does): see `SQLiteMemoryStatistics` and
        // `SQLitePageCache`. Then the VFS that writes a transaction's WAL frames at once
        // (`SQLiteWALWrites`).
        SQLiteMemoryStatistics.turnOffIfNeeded()
        SQLitePageCache.installIfNeeded()
        let vfs = SQLiteWALWrites.vfsName
        var handle: OpaquePointer?
        // NOMUTEX: SQLite's own per-connection mutex is redundant with the store's lock.
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &handle, flags, vfs)
        guard rc == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(handle)
            throw StorageError.cannotOpen(path: path, message: message)
        }
        db = handle
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, Self.busyTimeoutMilliseconds)
    }

    deinit { close() }

    var isOpen: Bool { db != nil }

    func close() {
        for statement in cache.values { statement.finalize() }
        cache.removeAll()
        if let db { sqlite3_close_v2(db) }
        db = nil
    }

    /// Rows changed by the last INSERT/UPDATE/DELETE on this connection.
    var changes: Int {
        guard let db else { return 0 }
        return Int(sqlite3_changes(db))
    }

    /// Rowid of the last row this connection inserted into a rowid table.
    var lastInsertRowID: Int64 {
        guard let db else { return 0 }
        return sqlite3_last_insert_rowid(db)
    }

    // MARK: Statements.

    /// The SQL of every statement prepared so far (tests check their query plans).
    var preparedSQL: [String] { cache.keys.map(\.sql).sorted() }

    /// Runs `body` with the cached statement for `sql`, resetting it afterwards.
    func with<T>(_ sql: String, _ body: (SQLiteStatement) throws -> T) throws -> T {
        let statement = try prepared(sql)
        defer { statement.reset() }
        return try body(statement)
    }

    /// Runs a statement without parameters to completion.
    func execute(_ sql: String) throws {
        try with(sql) { try $0.run() }
    }

    /// Runs a statement returning one integer (e.g. a PRAGMA).
    func scalarInt(_ sql: String) throws -> Int64? {
        try with(sql) { try $0.step() ? $0.int64(0) : nil }
    }

    /// Runs a statement returning one text (e.g. `PRAGMA journal_mode`).
    func scalarText(_ sql: String) throws -> String? {
        try with(sql) { try $0.step() ? $0.string(0) : nil }
    }

    /// Runs a multi-statement script without caching (migrations).
    func executeScript(_ sql: String) throws {
        guard let db else { throw StorageError.closed }
        var message: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(db, sql, nil, nil, &message)
        defer { sqlite3_free(message) }
        if rc != SQLITE_OK {
            throw error(rc, message: message.map { String(cString: $0) })
        }
    }

    private func prepared(_ sql: String) throws -> SQLiteStatement {
        let key = StatementKey(sql: sql)
        if let cached = cache[key] { return cached }
        guard let db else { throw StorageError.closed }
        var handle: OpaquePointer?
        // PREPARE_PERSISTENT: these statements live as long as the connection.
        let rc = sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &handle, nil)
        guard rc == SQLITE_OK, let handle else {
            sqlite3_finalize(handle)
            throw error(rc)
        }
        let statement = SQLiteStatement(handle: handle, connection: self)
        cache[key] = statement
        return statement
    }

    // MARK: Transactions.

    /// BEGIN IMMEDIATE … COMMIT; ROLLBACK on any error (including a failed COMMIT).
    /// IMMEDIATE takes the write lock up front, so two connections serialize on BEGIN (waiting
    /// up to the busy timeout) instead of failing with SQLITE_BUSY when upgrading a read lock.
    ///
    /// Inside a batch (``batchTransaction(_:)``) it is just `body`, without a savepoint: a
    /// SAVEPOINT/RELEASE per step, and the copy of every page it first touches into the
    /// sub-journal, cost ~10 % of the store's CPU per step (replay, schema 6). Steps check
    /// before they write (a refused step writes nothing, and the batch goes on); a step that
    /// fails after writing (an I/O error, a full disk) fails the batch: every later step
    /// throws the same error at once and the batch rolls back and throws it, so nothing of
    /// the batch becomes durable or leaves.
    func immediateTransaction<T>(_ body: () throws -> T) throws -> T {
        if inBatch {
            if let batchFailure { throw batchFailure }
            guard let db else { throw StorageError.closed }
            let changesBefore = sqlite3_total_changes64(db)
            do {
                return try body()
            } catch {
                // Nothing written (the step's checks come before its first write, e.g. a
                // revision conflict or a duplicate): the batch goes on. Otherwise the
                // step's writes cannot be undone alone, so the whole batch fails; so it
                // does if SQLite already rolled the transaction back itself (some I/O and
                // out-of-memory errors do, https://sqlite.org/lang_transaction.html), lest
                // later steps run outside it.
                if sqlite3_total_changes64(db) != changesBefore || sqlite3_get_autocommit(db) != 0 {
                    batchFailure = error
                }
                throw error
            }
        }
        return try transaction(begin: "BEGIN IMMEDIATE", body)
    }

    /// Work that may fail on its own without failing the batch it rides in: inside a batch,
    /// `body` runs in a SAVEPOINT (https://sqlite.org/lang_savepoint.html), so an error rolls
    /// back only its own writes (and drops the derived state it may have changed) and the
    /// batch's steps still commit; outside a batch it is a transaction of its own. Used for the
    /// retention chunk that rides along a batch (`purgeChunk` inside `batch`), where a savepoint
    /// per batch costs nothing next to the rows it deletes, unlike one per step (see
    /// ``immediateTransaction(_:)``). If SQLite rolled the whole transaction back itself (some
    /// I/O and out-of-memory errors), or the savepoint cannot be rolled back, the batch fails
    /// as with a failed step.
    func isolatedTransaction<T>(_ body: () throws -> T) throws -> T {
        guard inBatch else { return try immediateTransaction(body) }
        if let batchFailure { throw batchFailure }
        guard let db else { throw StorageError.closed }
        try execute("SAVEPOINT isolated")
        do {
            let result = try body()
            try execute("RELEASE isolated")
            return result
        } catch {
            if sqlite3_get_autocommit(db) != 0 {
                batchFailure = error
            } else {
                do {
                    try execute("ROLLBACK TO isolated")
                    try execute("RELEASE isolated")
                    dropDerivedState()
                } catch {
                    batchFailure = error
                }
            }
            throw error
        }
    }

    /// BEGIN (deferred) … COMMIT around several reads, so they see one snapshot even if another
    /// connection commits in between (https://sqlite.org/isolation.html).
    func readTransaction<T>(_ body: () throws -> T) throws -> T {
        if inBatch { return try body() }  // already inside one transaction
        return try transaction(begin: "BEGIN", body)
    }

    /// Group commit: one BEGIN IMMEDIATE … COMMIT around many steps, each in its own
    /// savepoint. Under load this turns N commits (N WAL appends of the same hot pages) into
    /// one; under light load a batch holds one step and nothing changes.
    func batchTransaction<T>(_ body: () throws -> T) throws -> T {
        if inBatch { return try body() }
        inBatch = true
        batchFailure = nil
        defer {
            inBatch = false
            batchFailure = nil
        }
        return try transaction(begin: "BEGIN IMMEDIATE") {
            let result = try body()
            if let batchFailure { throw batchFailure }
            return result
        }
    }

    /// `begin` … COMMIT; ROLLBACK on any error (including a failed COMMIT).
    private func transaction<T>(begin: String, _ body: () throws -> T) throws -> T {
        try execute(begin)
        let writing = begin == "BEGIN IMMEDIATE"
        do {
            if writing {
                holdsWriteLock = true
                derivedTouched = false
                try dropDerivedStateIfOthersCommitted()
            }
            let result = try body()
            try execute("COMMIT")
            holdsWriteLock = false
            derivedTouched = false
            return result
        } catch {
            holdsWriteLock = false
            if derivedTouched { dropDerivedState() }
            derivedTouched = false
            rollbackIfActive()
            throw error
        }
    }

    /// Drops the derived state (`outboxIndex`, `knownCalls`) if another connection (process) committed since it was last
    /// validated: its appends and acknowledgements moved seqs and rows. Called when the write
    /// lock is taken and by reads outside it; not needed while holding the write lock, under
    /// which nobody else can commit.
    func dropDerivedStateIfOthersCommitted() throws {
        let version = try scalarInt("PRAGMA data_version") ?? 0
        if version != dataVersion {
            dropDerivedState()
            dataVersion = version
        }
    }

    /// Prepares, runs and finalizes a statement without caching it (migrations, whose
    /// statements may name tables that a later statement drops).
    func withUncached<T>(_ sql: String, _ body: (SQLiteStatement) throws -> T) throws -> T {
        guard let db else { throw StorageError.closed }
        var handle: OpaquePointer?
        let rc = sqlite3_prepare_v2(db, sql, -1, &handle, nil)
        guard rc == SQLITE_OK, let handle else {
            sqlite3_finalize(handle)
            throw error(rc)
        }
        let statement = SQLiteStatement(handle: handle, connection: self)
        defer { statement.finalize() }
        return try body(statement)
    }

    private func rollbackIfActive() {
        guard let db, sqlite3_get_autocommit(db) == 0 else { return }
        // Not through the cache: ROLLBACK must work even if preparing failed (e.g. SQLITE_NOMEM).
        sqlite3_exec(db, "ROLLBACK", nil, nil, nil)
    }

    // MARK: Errors.

    /// Maps a result code to a typed error, with the connection's message.
    func error(_ rc: Int32, message: String? = nil) -> StorageError {
        let text = message ?? db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
        switch rc & 0xff {
        case SQLITE_NOTADB: return .notADatabase(path: path)
        case SQLITE_CORRUPT: return .corrupt(text)
        default: return .sqlite(code: rc, message: text)
        }
    }
}
