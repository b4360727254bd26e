#ifndef SWITCHBOARD_CSQLITE_SHIM_H
#define SWITCHBOARD_CSQLITE_SHIM_H
#include <sqlite3.h>

// SQLITE_TRANSIENT is a macro casting -1 to a destructor pointer; Swift cannot import it.
static inline sqlite3_destructor_type sb_sqlite_transient(void) { return SQLITE_TRANSIENT; }

// MARK: Page cache wrapper (sb_pcache_*)
//
// A thin SQLITE_CONFIG_PCACHE2 wrapper (https://sqlite.org/c3ref/pcache_methods2.html) around
// the page cache SQLite had before it (its default, pcache1) that changes one thing: the page
// number balance_nonroot parks a page at while it swaps two sibling pages is stored under key 0
// in the inner cache, so that it never raises the inner cache's highest key.
//
// Why (SQLite 3.40.1, Debian 12's libsqlite3):
// - btree.c balance_nonroot, "Reassign page numbers so that the new pages are in ascending
//   order": a swap rekeys one page to pgnoTemp = PENDING_BYTE/pageSize + 1 (262,145 with 4 KiB
//   pages) and back (sqlite3PagerRekey -> pcache.c sqlite3PcacheMove -> xRekey).
// - pcache1.c pcache1Rekey (and pcache1FetchStage2) raise PCache1.iMaxKey to the largest key
//   seen; only pcache1Truncate lowers it again.
// - pager.c pager_end_transaction calls sqlite3PcacheTruncate(dbSize) at every COMMIT
//   (-> xTruncate(dbSize + 1)); pcache1TruncateUnsafe walks only the hash slots between iLimit
//   and iMaxKey when iMaxKey - iLimit < nHash, else every slot and every cached page header.
//   After a swap the next COMMIT therefore walks the whole cache (32 MiB, ~8,000 pages).
//
// Why key 0 is free: SQLite never asks a page cache for page 0 (pcache.c sqlite3PcacheFetch
// and sqlite3PcacheMove assert pgno > 0; pager.c getPageNormal returns SQLITE_CORRUPT for 0
// before it reaches the cache), and pcache1 stores any unsigned key (hash = key % nHash).
// The mapping key -> (key == parking ? 0 : key) is one-to-one on the keys SQLite uses, so every
// fetch, unpin and rekey behaves as before, also if the pager fetches the parking page for real
// (a corrupt file pointing at the pending-byte page: getPageNormal fetches, then drops it and
// returns SQLITE_CORRUPT). The only method whose meaning depends on key order is xTruncate
// ("drop keys >= iLimit"): when iLimit <= parking, a page stored under 0 is rekeyed back to the
// parking number first, so the inner truncate drops it exactly as before (SQLite never
// truncates while a swap is in progress, so this is for completeness, not a hot path).
//
// State: the inner methods live in a function-local static, one copy per translation unit
// that calls these functions (static inline). Only Sources/Storage/SQLitePageCache.swift calls
// them, so the installed function pointers and the state they use are that file's copy
// (SQLitePageCacheTests also calls sb_pcache_install, only to see it refused once SQLite is
// initialized, which touches no state).

/// 1 GiB: SQLite's PENDING_BYTE (global.c sqlite3PendingByte, 0x40000000; only test builds
/// can change it). A different value would only make the wrapper park nothing.
#define SB_PCACHE_PENDING_BYTE 0x40000000u

/// The page number balance_nonroot parks a page at, for a page size (btree.c pgnoTemp).
static inline unsigned int sb_pcache_parking_key(int pageSize) {
    return pageSize > 0 ? SB_PCACHE_PENDING_BYTE / (unsigned int)pageSize + 1u : 0u;
}

/// The wrapper's cache object: the inner cache and this cache's parking page number.
typedef struct sb_pcache {
    sqlite3_pcache *inner;
    unsigned int parkingKey;
} sb_pcache;

/// The wrapped methods (filled by sb_pcache_install from SQLITE_CONFIG_GETPCACHE2).
static inline sqlite3_pcache_methods2 *sb_pcache_inner_methods(void) {
    static sqlite3_pcache_methods2 inner;
    return &inner;
}

/// Rekeys to the parking page number so far (a statistic: how many swaps went through the
/// wrapper; relaxed atomic, the checkpointer's connection runs on another thread).
static inline unsigned long *sb_pcache_parked_counter(void) {
    static unsigned long parked;
    return &parked;
}

static inline unsigned long sb_pcache_parked_rekeys(void) {
    return __atomic_load_n(sb_pcache_parked_counter(), __ATOMIC_RELAXED);
}

/// The key the inner cache stores `key` under.
static inline unsigned int sb_pcache_inner_key(const sb_pcache *cache, unsigned int key) {
    return key == cache->parkingKey ? 0u : key;
}

static inline int sb_pcache_init(void *arg) {
    (void)arg;
    sqlite3_pcache_methods2 *inner = sb_pcache_inner_methods();
    return inner->xInit ? inner->xInit(inner->pArg) : SQLITE_OK;
}

static inline void sb_pcache_shutdown(void *arg) {
    (void)arg;
    sqlite3_pcache_methods2 *inner = sb_pcache_inner_methods();
    if (inner->xShutdown) inner->xShutdown(inner->pArg);
}

static inline sqlite3_pcache *sb_pcache_create(int pageSize, int extraSize, int purgeable) {
    sb_pcache *cache = (sb_pcache *)sqlite3_malloc((int)sizeof(sb_pcache));
    if (!cache) return 0;
    cache->inner = sb_pcache_inner_methods()->xCreate(pageSize, extraSize, purgeable);
    if (!cache->inner) {
        sqlite3_free(cache);
        return 0;
    }
    cache->parkingKey = sb_pcache_parking_key(pageSize);
    return (sqlite3_pcache *)cache;
}

static inline void sb_pcache_cachesize(sqlite3_pcache *p, int pages) {
    sb_pcache_inner_methods()->xCachesize(((sb_pcache *)p)->inner, pages);
}

static inline int sb_pcache_pagecount(sqlite3_pcache *p) {
    return sb_pcache_inner_methods()->xPagecount(((sb_pcache *)p)->inner);
}

static inline sqlite3_pcache_page *sb_pcache_fetch(sqlite3_pcache *p, unsigned int key, int createFlag) {
    sb_pcache *cache = (sb_pcache *)p;
    return sb_pcache_inner_methods()->xFetch(cache->inner, sb_pcache_inner_key(cache, key), createFlag);
}

static inline void sb_pcache_unpin(sqlite3_pcache *p, sqlite3_pcache_page *page, int discard) {
    sb_pcache_inner_methods()->xUnpin(((sb_pcache *)p)->inner, page, discard);
}

static inline void sb_pcache_rekey(sqlite3_pcache *p, sqlite3_pcache_page *page, unsigned int oldKey, unsigned int newKey) {
    sb_pcache *cache = (sb_pcache *)p;
    if (newKey == cache->parkingKey) __atomic_fetch_add(sb_pcache_parked_counter(), 1ul, __ATOMIC_RELAXED);
    sb_pcache_inner_methods()->xRekey(cache->inner, page, sb_pcache_inner_key(cache, oldKey),
                                      sb_pcache_inner_key(cache, newKey));
}

static inline void sb_pcache_truncate(sqlite3_pcache *p, unsigned int limit) {
    sb_pcache *cache = (sb_pcache *)p;
    sqlite3_pcache_methods2 *inner = sb_pcache_inner_methods();
    if (limit <= cache->parkingKey) {
        // A page at the parking number is >= limit: give it its real key back so that the
        // inner truncate drops it (fetching pins it; the truncate frees pinned pages too).
        sqlite3_pcache_page *parked = inner->xFetch(cache->inner, 0u, 0);
        if (parked) inner->xRekey(cache->inner, parked, 0u, cache->parkingKey);
    }
    inner->xTruncate(cache->inner, limit);
}

static inline void sb_pcache_destroy(sqlite3_pcache *p) {
    sb_pcache *cache = (sb_pcache *)p;
    sb_pcache_inner_methods()->xDestroy(cache->inner);
    sqlite3_free(cache);
}

static inline void sb_pcache_shrink(sqlite3_pcache *p) {
    sqlite3_pcache_methods2 *inner = sb_pcache_inner_methods();
    if (inner->xShrink) inner->xShrink(((sb_pcache *)p)->inner);
}

/// The wrapper's method table.
static inline const sqlite3_pcache_methods2 *sb_pcache_methods(void) {
    static const sqlite3_pcache_methods2 methods = {
        1, 0, sb_pcache_init, sb_pcache_shutdown, sb_pcache_create, sb_pcache_cachesize,
        sb_pcache_pagecount, sb_pcache_fetch, sb_pcache_unpin, sb_pcache_rekey,
        sb_pcache_truncate, sb_pcache_destroy, sb_pcache_shrink,
    };
    return &methods;
}

/// The inner cache of a cache created by the wrapper's xCreate (tests look under key 0).
static inline sqlite3_pcache *sb_pcache_inner_cache(sqlite3_pcache *p) { return ((sb_pcache *)p)->inner; }

/// Installs the wrapper around the current page cache. Must run before sqlite3_initialize
/// (explicit, or implicit in the first sqlite3_open*): returns SQLITE_OK, or sqlite3_config's
/// code (SQLITE_MISUSE once SQLite is initialized; then nothing changed). Call once.
static inline int sb_pcache_install(void) {
    sqlite3_pcache_methods2 current;
    int rc = sqlite3_config(SQLITE_CONFIG_GETPCACHE2, &current);
    if (rc != SQLITE_OK) return rc;
    if (current.xCreate == sb_pcache_create) return SQLITE_OK;  // already this wrapper
    if (current.iVersion < 1 || !current.xCreate || !current.xFetch || !current.xRekey || !current.xTruncate) {
        return SQLITE_ERROR;
    }
    *sb_pcache_inner_methods() = current;
    sqlite3_pcache_methods2 wrapper = *sb_pcache_methods();
    return sqlite3_config(SQLITE_CONFIG_PCACHE2, &wrapper);
}

/// Turns SQLite's memory statistics off (SQLITE_CONFIG_MEMSTATUS, 0): see
/// `SQLiteMemoryStatistics`. Before sqlite3_initialize only (SQLITE_MISUSE after); sqlite3_config
/// is variadic, so not callable from Swift.
static inline int sb_sqlite_memstatus_off(void) { return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); }

// The calling thread's kernel name (prctl(2) PR_SET_NAME: what top -H, perf and
// /proc/self/task/*/comm show; Foundation's Thread.name does not set it). prctl is variadic,
// so not callable from Swift. The kernel keeps at most 15 bytes.
#include <sys/prctl.h>
static inline int sb_sqlite_set_thread_name(const char *name) { return prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0); }
// The calling thread's nice value (setpriority(2) with the thread ID: on Linux the nice value
// is per thread). gettid has no declaration in Swift's Glibc; syscall is variadic. Raising the
// value needs no privilege; lowering it again needs CAP_SYS_NICE (or RLIMIT_NICE).
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
static inline int sb_sqlite_set_thread_nice(int value) { return setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), value); }
static inline int sb_sqlite_thread_nice(void) { return getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid)); }
#endif
