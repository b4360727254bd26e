import CSQLite
import Foundation

/// A prepared statement owned by an `SQLiteConnection`'s cache. Not thread-safe: used only
/// under the store's lock.
///
/// Text and blob values are copied into a buffer the statement keeps per parameter
/// (``BindArena``) and bound `SQLITE_STATIC`, so Swift buffers need not outlive the bind
/// call and SQLite neither allocates nor frees a copy per bind (`SQLITE_TRANSIENT` did:
/// ~110 binds per call setup, each an `sqlite3Malloc`, a copy and a free in
/// `sqlite3_clear_bindings`; docs/benchmarks.md, "Binds without SQLite's copies"). A
/// parameter's buffer is only rewritten by the next bind of that same parameter, which
/// replaces SQLite's pointer at once, so SQLite never reads a buffer that changed under
/// it (https://sqlite.org/c3ref/bind_blob.html: a static value must stay valid until the
/// parameter is rebound or the statement finalized). Values over
/// ``BindArena/largestKept`` are bound `SQLITE_TRANSIENT` as before, so that one huge value
/// does not stay allocated with the statement.
final class SQLiteStatement {
    let handle: OpaquePointer
    private unowned let connection: SQLiteConnection
    private var arena: BindArena

    init(handle: OpaquePointer, connection: SQLiteConnection) {
        self.handle = handle
        self.connection = connection
        self.arena = BindArena(parameters: Int(sqlite3_bind_parameter_count(handle)))
    }

    /// Finalizes the statement; its bind buffers are freed with the object (`deinit`), after
    /// the statement that may point into them is gone.
    func finalize() { sqlite3_finalize(handle) }

    /// Makes the statement reusable; called after every use by the connection.
    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    // MARK: Binding (1-based parameter indexes, as in SQLite).

    func bind(_ index: Int32, _ value: Int64) throws {
        try check(sqlite3_bind_int64(handle, index, value))
    }

    func bind(_ index: Int32, _ value: Bool) throws {
        try bind(index, Int64(value ? 1 : 0))
    }

    func bind(_ index: Int32, _ value: String) throws {
        var value = value
        let rc = value.withUTF8 { bytes -> Int32 in
            // A zero-length buffer may have a nil base address; bind "" explicitly so the
            // column holds an empty string, not NULL.
            guard let base = bytes.baseAddress, bytes.count > 0 else {
                return sqlite3_bind_text(handle, index, "", 0, sb_sqlite_transient())
            }
            // 64-bit length: an oversized value yields SQLITE_TOOBIG instead of an Int32 trap.
            if let copy = arena.copy(UnsafeRawBufferPointer(bytes), parameter: Int(index)) {
                return sqlite3_bind_text64(handle, index, copy.assumingMemoryBound(to: CChar.self), UInt64(bytes.count),
                                           nil, UInt8(SQLITE_UTF8))
            }
            return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                sqlite3_bind_text64(handle, index, $0, UInt64(bytes.count), sb_sqlite_transient(), UInt8(SQLITE_UTF8))
            }
        }
        try check(rc)
    }

    func bind(_ index: Int32, _ value: Data) throws {
        let rc = value.withUnsafeBytes { bytes -> Int32 in
            // sqlite3_bind_blob with a NULL pointer binds SQL NULL; an empty blob is zeroblob(0).
            guard let base = bytes.baseAddress, bytes.count > 0 else {
                return sqlite3_bind_zeroblob(handle, index, 0)
            }
            if let copy = arena.copy(bytes, parameter: Int(index)) {
                return sqlite3_bind_blob64(handle, index, copy, UInt64(bytes.count), nil)
            }
            return sqlite3_bind_blob64(handle, index, base, UInt64(bytes.count), sb_sqlite_transient())
        }
        try check(rc)
    }

    func bindNull(_ index: Int32) throws {
        try check(sqlite3_bind_null(handle, index))
    }

    // MARK: Stepping.

    /// Advances; true if a row is available, false when done.
    func step() throws -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw connection.error(rc)
        }
    }

    /// Runs a statement that returns no rows (or whose rows are ignored) to completion.
    func run() throws {
        while try step() {}
    }

    // MARK: Columns (0-based, as in SQLite).

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    func bool(_ column: Int32) -> Bool { int64(column) != 0 }

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    func string(_ column: Int32) -> String {
        guard let text = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    func data(_ column: Int32) -> Data {
        // Call order per https://sqlite.org/c3ref/column_blob.html: blob, then bytes.
        guard let blob = sqlite3_column_blob(handle, column) else { return Data() }
        let count = Int(sqlite3_column_bytes(handle, column))
        return Data(bytes: blob, count: count)
    }

    private func check(_ rc: Int32) throws {
        if rc != SQLITE_OK { throw connection.error(rc) }
    }
}
