import CSQLite

/// SQLite's page cache with one change: balance_nonroot's transient page number does not
/// make the next COMMIT walk the whole cache.
///
/// SQLite 3.40.1 (Debian 12): when `balance_nonroot` (btree.c, "Reassign page numbers so that
/// the new pages are in ascending order") swaps two sibling pages, it parks one at
/// `pgnoTemp = PENDING_BYTE / pageSize + 1` (262,145 with 4 KiB pages). The default page cache
/// (pcache1.c `pcache1Rekey`) then keeps 262,145 as its highest key until a truncate, and the
/// truncate at the next COMMIT (pager.c `pager_end_transaction` → pcache.c
/// `sqlite3PcacheTruncate` → pcache1.c `pcache1Truncate` → `pcache1TruncateUnsafe`) takes its
/// "many pages" path: every hash slot and every cached page header of the 32 MiB cache
/// (~0.5 ms, 6 % of the hub thread). Random-keyed inserts (the processed-event key index)
/// make such swaps in most batches.
///
/// The wrapper (`sb_pcache_*` in CSQLite's shim.h, installed with `SQLITE_CONFIG_PCACHE2`
/// around the cache `SQLITE_CONFIG_GETPCACHE2` returns) stores that one page number under key 0
/// of the inner cache — SQLite never asks a page cache for page 0 — and passes everything
/// else through; a truncate whose limit is at or below the parking number gives a parked page
/// its real key back first, so it drops exactly what it dropped before. Same pages cached,
/// same size, same I/O and durability; only the inner cache's highest key stays near the
/// database size. Figures: docs/benchmarks.md, "Page-cache scan at COMMIT".
///
/// `sqlite3_config` only works before SQLite initializes (before the first connection
/// opens), so ``installIfNeeded()`` runs once per process from `SQLiteConnection.init`.
/// This file must stay the only caller of the `sb_pcache_*` functions: they are `static
/// inline`, so each Swift file that calls them gets its own copy of their state.
public enum SQLitePageCache {
    /// `sb_pcache_install`'s result code, computed once per process (swift_once).
    private static let installResult: Int32 = sb_pcache_install()

    /// Installs the wrapper unless SQLite is already initialized; idempotent, thread-safe.
    /// Returns whether the wrapper is SQLite's page cache in this process.
    @discardableResult
    static func installIfNeeded() -> Bool { installResult == SQLITE_OK }

    /// Whether the wrapper is installed (false if something initialized SQLite first: then
    /// SQLite's own cache runs, correct but with the scans above). Installs it if no
    /// connection has been opened yet.
    public static var isInstalled: Bool { installIfNeeded() }

    /// How many times a page was parked at the pending-byte page number through the wrapper
    /// (one per sibling swap in a B-tree rebalance), across all connections of the process.
    public static var parkedRekeys: UInt { sb_pcache_parked_rekeys() }

    /// The page number `balance_nonroot` parks a page at for `pageSize`.
    static func parkingKey(pageSize: Int32) -> UInt32 { sb_pcache_parking_key(pageSize) }

    /// The wrapper's method table, and the methods it wraps (tests drive both directly).
    static var methods: sqlite3_pcache_methods2 { sb_pcache_methods().pointee }
    static var innerMethods: sqlite3_pcache_methods2 { sb_pcache_inner_methods().pointee }

    /// The inner cache of a cache made by `methods.xCreate`.
    static func innerCache(of cache: OpaquePointer) -> OpaquePointer? { sb_pcache_inner_cache(cache) }
}
