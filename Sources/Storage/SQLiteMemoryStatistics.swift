import CSQLite

/// SQLite's memory statistics are off in this process (`SQLITE_CONFIG_MEMSTATUS` = 0,
/// https://sqlite.org/c3ref/c_config_covering_index_scan.html#sqliteconfigmemstatus).
///
/// On (the default, and Debian's build keeps it), every `sqlite3_malloc` and `sqlite3_free`
/// takes SQLite's global memory mutex to update the counters behind `sqlite3_memory_used` and
/// `sqlite3_status`. Debian's build also omits the lookaside allocator (`OMIT_LOOKASIDE` in
/// `PRAGMA compile_options`), so every small allocation of a statement step goes that way.
/// Nothing here reads those counters or sets a soft heap limit (which needs them). The
/// storage replay ran ~4 % less CPU per setup with them off (docs/benchmarks.md, "SQLite's
/// memory statistics off").
///
/// `sqlite3_config` only works before SQLite initializes, so ``turnOffIfNeeded()`` runs once
/// per process before the first connection opens, as `SQLitePageCache` does.
enum SQLiteMemoryStatistics {
    /// `sb_sqlite_memstatus_off`'s result, computed once per process (swift_once).
    private static let offResult: Int32 = sb_sqlite_memstatus_off()

    /// Turns the statistics off unless SQLite is already initialized; idempotent,
    /// thread-safe. Returns whether they are off (false if something initialized SQLite
    /// first).
    @discardableResult
    static func turnOffIfNeeded() -> Bool { offResult == SQLITE_OK }
}
