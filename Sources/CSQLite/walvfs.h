#ifndef SWITCHBOARD_CSQLITE_WALVFS_H
#define SWITCHBOARD_CSQLITE_WALVFS_H
#include <sqlite3.h>
#include <string.h>

// MARK: WAL write coalescing VFS (sb_walvfs_*)
//
// A VFS (https://sqlite.org/vfs.html) named "switchboard-wal" that wraps the default one
// ("unix") and changes one thing: the frames a transaction appends to a WAL file reach the
// kernel in one write(2) per up to 31 frames instead of two per frame.
//
// Why (SQLite 3.40.1, wal.c): sqlite3WalFrames writes each frame with walWriteOneFrame, which
// calls xWrite twice, for the 24-byte frame header and for the page
// (https://sqlite.org/fileformat.html#the_write_ahead_log). A frame is 4,120 bytes, so each
// write touches one or two page-cache pages of the file and each costs the kernel's whole
// buffered-write path (ext4 write_begin/write_end, mark dirty, file time). Measured here:
// 10 frames as 20 pwrite(2)s 37.5 us, as one 8–11.5 us. The hub commits ~10 frames per batch
// at light load and ~24–37 per call setup at full load (docs/benchmarks.md, "WAL frames in
// one write").
//
// How: writes to a file opened with SQLITE_OPEN_WAL that continue the previous one (offset ==
// end of what is pending) are copied into a buffer of up to SB_WALVFS_MAX_PENDING bytes; the
// buffer goes to the real file in one xWrite
//   - when the write that completes a commit frame arrives (the frame header's second field,
//     "database size after commit", is non-zero only on the last frame of a transaction), so
//     a COMMIT's frames are in the file before xWrite returns, and an error (ENOSPC, EIO) is
//     returned by that xWrite, as it would have been without the buffer: SQLite then fails
//     the transaction, which nothing acknowledged;
//   - before any other operation on that file (read, sync, truncate, size, lock, file
//     control, close), before a write that does not continue the buffer, and when the buffer
//     would pass SB_WALVFS_MAX_PENDING;
//   - in xShmBarrier, xShmLock and xShmUnmap of the connection's database file (belt and
//     braces: wal.c walIndexWriteHdr calls the barrier between the two copies of the
//     wal-index header that make a commit visible to readers; with the commit-frame rule
//     nothing is pending there). A WAL file finds its database file with
//     sqlite3_database_file_object, which is for exactly this (a VFS's xOpen of a WAL).
// Readers (the checkpointer's connection, other processes) only read frames up to the
// wal-index header's mxFrame, which the writer publishes at the end of sqlite3WalFrames,
// after the commit frame's write, so they never look for bytes still in the buffer. A process
// that dies with bytes in the buffer had not finished the transaction they belong to:
// recovery ignores frames after the last valid commit frame, as it does for a crash between
// two pwrite(2)s.
//
// State: a buffer per WAL file, no per-thread state (a connection may move between threads).
// The VFS object and the counters are function-local statics of the one translation unit
// that calls these functions (static inline): only Sources/Storage/SQLiteWALWrites.swift
// calls them.

/// 128 KiB - 1: the most the unix VFS writes in one call. os_unix.c seekAndWriteFd masks the
/// length with 0x1ffff (SQLite itself never writes more than a page at once), so a larger
/// write would be cut short and reported as SQLITE_FULL. That is 31 frames of 4 KiB pages
/// per write(2): a light-load batch (~10 frames) in one, a full-load batch in a few.
#define SB_WALVFS_MAX_PENDING 0x1ffff
/// SQLite's WAL frame header size (wal.c WAL_FRAME_HDRSIZE).
#define SB_WALVFS_FRAME_HEADER 24

typedef struct sb_walvfs_file {
    sqlite3_file base;       // pMethods: sb_walvfs_io_methods() once the real file is open
    sqlite3_file *real;      // the default VFS's file object, in the same allocation
    int isWal;
    struct sb_walvfs_file *wal;  // on a database file: its connection's open WAL file, if any
    struct sb_walvfs_file *db;   // on a WAL file: its connection's database file
    int commitFramePending;  // the pending bytes end with the header of a commit frame
    unsigned char *pending;  // sqlite3_malloc'd, pendingCap bytes
    int pendingLen;
    int pendingCap;
    sqlite3_int64 pendingOffset;
} sb_walvfs_file;

/// Counters (relaxed atomics; the checkpointer's connection runs on another thread).
typedef struct sb_walvfs_stats {
    unsigned long walWrites;      // xWrite calls SQLite made on WAL files
    unsigned long realWalWrites;  // writes that reached the default VFS for WAL files
    unsigned long commitFlushes;  // flushes at a commit frame
    unsigned long flushFailures;  // flushes whose write failed (returned, or counted if in a barrier)
} sb_walvfs_stats;

static inline sb_walvfs_stats *sb_walvfs_counters(void) {
    static sb_walvfs_stats stats;
    return &stats;
}

static inline void sb_walvfs_count(unsigned long *counter) {
    __atomic_fetch_add(counter, 1ul, __ATOMIC_RELAXED);
}

static inline sb_walvfs_stats sb_walvfs_read_stats(void) {
    sb_walvfs_stats *s = sb_walvfs_counters();
    sb_walvfs_stats copy;
    copy.walWrites = __atomic_load_n(&s->walWrites, __ATOMIC_RELAXED);
    copy.realWalWrites = __atomic_load_n(&s->realWalWrites, __ATOMIC_RELAXED);
    copy.commitFlushes = __atomic_load_n(&s->commitFlushes, __ATOMIC_RELAXED);
    copy.flushFailures = __atomic_load_n(&s->flushFailures, __ATOMIC_RELAXED);
    return copy;
}

/// The default VFS this one wraps (set once by sb_walvfs_register).
static inline sqlite3_vfs **sb_walvfs_real_slot(void) {
    static sqlite3_vfs *real;
    return &real;
}

static inline int sb_walvfs_flush(sb_walvfs_file *p) {
    if (p->pendingLen == 0) return SQLITE_OK;
    int length = p->pendingLen;
    p->pendingLen = 0;
    p->commitFramePending = 0;
    sb_walvfs_count(&sb_walvfs_counters()->realWalWrites);
    int rc = p->real->pMethods->xWrite(p->real, p->pending, length, p->pendingOffset);
    if (rc != SQLITE_OK) sb_walvfs_count(&sb_walvfs_counters()->flushFailures);
    return rc;
}

/// On a database file: flushes its connection's WAL file.
static inline int sb_walvfs_flush_wal_of(sb_walvfs_file *db) {
    return db->wal ? sb_walvfs_flush(db->wal) : SQLITE_OK;
}

static inline sb_walvfs_file *sb_walvfs_cast(sqlite3_file *f) { return (sb_walvfs_file *)f; }

static inline int sb_walvfs_close(sqlite3_file *f) {
    sb_walvfs_file *p = sb_walvfs_cast(f);
    int flushed = sb_walvfs_flush(p);
    if (p->db && p->db->wal == p) p->db->wal = 0;
    if (p->wal && p->wal->db == p) p->wal->db = 0;
    int rc = p->real->pMethods->xClose(p->real);
    sqlite3_free(p->pending);
    p->pending = 0;
    p->pendingCap = 0;
    return flushed != SQLITE_OK ? flushed : rc;
}

static inline int sb_walvfs_read(sqlite3_file *f, void *buffer, int amount, sqlite3_int64 offset) {
    sb_walvfs_file *p = sb_walvfs_cast(f);
    int rc = sb_walvfs_flush(p);
    return rc != SQLITE_OK ? rc : p->real->pMethods->xRead(p->real, buffer, amount, offset);
}

/// Big-endian u32 at `bytes` (the WAL's integers, fileformat.html).
static inline unsigned int sb_walvfs_be32(const unsigned char *bytes) {
    return ((unsigned int)bytes[0] << 24) | ((unsigned int)bytes[1] << 16) | ((unsigned int)bytes[2] << 8) | bytes[3];
}

static inline int sb_walvfs_write(sqlite3_file *f, const void *buffer, int amount, sqlite3_int64 offset) {
    sb_walvfs_file *p = sb_walvfs_cast(f);
    if (!p->isWal) return p->real->pMethods->xWrite(p->real, buffer, amount, offset);
    sb_walvfs_count(&sb_walvfs_counters()->walWrites);
    // The page that follows a commit frame's header completes the transaction's frames. Read
    // before a flush below clears the flag (a header can be the last thing that fit).
    int completesCommit = p->commitFramePending && amount != SB_WALVFS_FRAME_HEADER;
    int continues = p->pendingLen > 0 && offset == p->pendingOffset + p->pendingLen
        && p->pendingLen + amount <= SB_WALVFS_MAX_PENDING;
    if (!continues) {
        int rc = sb_walvfs_flush(p);
        if (rc != SQLITE_OK) return rc;
        if (amount > SB_WALVFS_MAX_PENDING) {
            sb_walvfs_count(&sb_walvfs_counters()->realWalWrites);
            return p->real->pMethods->xWrite(p->real, buffer, amount, offset);
        }
        if (p->pendingCap < SB_WALVFS_MAX_PENDING) {
            unsigned char *grown = (unsigned char *)sqlite3_realloc(p->pending, SB_WALVFS_MAX_PENDING);
            if (!grown) {
                sb_walvfs_count(&sb_walvfs_counters()->realWalWrites);
                return p->real->pMethods->xWrite(p->real, buffer, amount, offset);
            }
            p->pending = grown;
            p->pendingCap = SB_WALVFS_MAX_PENDING;
        }
        p->pendingOffset = offset;
    }
    memcpy(p->pending + p->pendingLen, buffer, (size_t)amount);
    p->pendingLen += amount;
    if (completesCommit) {
        sb_walvfs_count(&sb_walvfs_counters()->commitFlushes);
        return sb_walvfs_flush(p);
    }
    p->commitFramePending = amount == SB_WALVFS_FRAME_HEADER
        && sb_walvfs_be32((const unsigned char *)buffer + 4) != 0;
    return SQLITE_OK;
}

static inline int sb_walvfs_truncate(sqlite3_file *f, sqlite3_int64 size) {
    sb_walvfs_file *p = sb_walvfs_cast(f);
    int rc = sb_walvfs_flush(p);
    return rc != SQLITE_OK ? rc : p->real->pMethods->xTruncate(p->real, size);
}

static inline int sb_walvfs_sync(sqlite3_file *f, int flags) {
    sb_walvfs_file *p = sb_walvfs_cast(f);
    int rc = sb_walvfs_flush(p);
    return rc != SQLITE_OK ? rc : p->real->pMethods->xSync(p->real, flags);
}

static inline int sb_walvfs_file_size(sqlite3_file *f, sqlite3_int64 *size) {
    sb_walvfs_file *p = sb_walvfs_cast(f);
    int rc = sb_walvfs_flush(p);
    return rc != SQLITE_OK ? rc : p->real->pMethods->xFileSize(p->real, size);
}

static inline int sb_walvfs_lock(sqlite3_file *f, int level) {
    sb_walvfs_file *p = sb_walvfs_cast(f);
    int rc = sb_walvfs_flush(p);
    return rc != SQLITE_OK ? rc : p->real->pMethods->xLock(p->real, level);
}

static inline int sb_walvfs_unlock(sqlite3_file *f, int level) {
    sb_walvfs_file *p = sb_walvfs_cast(f);
    int rc = sb_walvfs_flush(p);
    return rc != SQLITE_OK ? rc : p->real->pMethods->xUnlock(p->real, level);
}

static inline int sb_walvfs_check_reserved_lock(sqlite3_file *f, int *out) {
    sb_walvfs_file *p = sb_walvfs_cast(f);
    int rc = sb_walvfs_flush(p);
    return rc != SQLITE_OK ? rc : p->real->pMethods->xCheckReservedLock(p->real, out);
}

static inline int sb_walvfs_file_control(sqlite3_file *f, int op, void *arg) {
    sb_walvfs_file *p = sb_walvfs_cast(f);
    int rc = sb_walvfs_flush(p);
    return rc != SQLITE_OK ? rc : p->real->pMethods->xFileControl(p->real, op, arg);
}

static inline int sb_walvfs_sector_size(sqlite3_file *f) {
    sb_walvfs_file *p = sb_walvfs_cast(f);
    return p->real->pMethods->xSectorSize(p->real);
}

static inline int sb_walvfs_device_characteristics(sqlite3_file *f) {
    sb_walvfs_file *p = sb_walvfs_cast(f);
    return p->real->pMethods->xDeviceCharacteristics(p->real);
}

static inline int sb_walvfs_shm_map(sqlite3_file *f, int region, int size, int extend, void volatile **out) {
    sb_walvfs_file *p = sb_walvfs_cast(f);
    if (p->real->pMethods->iVersion < 2 || !p->real->pMethods->xShmMap) return SQLITE_IOERR_SHMMAP;
    return p->real->pMethods->xShmMap(p->real, region, size, extend, out);
}

static inline int sb_walvfs_shm_lock(sqlite3_file *f, int offset, int n, int flags) {
    sb_walvfs_file *p = sb_walvfs_cast(f);
    int rc = sb_walvfs_flush_wal_of(p);
    if (rc != SQLITE_OK) return rc;
    if (p->real->pMethods->iVersion < 2 || !p->real->pMethods->xShmLock) return SQLITE_IOERR_SHMLOCK;
    return p->real->pMethods->xShmLock(p->real, offset, n, flags);
}

static inline void sb_walvfs_shm_barrier(sqlite3_file *f) {
    sb_walvfs_file *p = sb_walvfs_cast(f);
    // Cannot return an error: a failed write is counted (flushFailures); see the header comment
    // for why nothing is pending here in practice.
    (void)sb_walvfs_flush_wal_of(p);
    if (p->real->pMethods->iVersion >= 2 && p->real->pMethods->xShmBarrier) p->real->pMethods->xShmBarrier(p->real);
}

static inline int sb_walvfs_shm_unmap(sqlite3_file *f, int deleteFlag) {
    sb_walvfs_file *p = sb_walvfs_cast(f);
    int rc = sb_walvfs_flush_wal_of(p);
    if (rc != SQLITE_OK) return rc;
    if (p->real->pMethods->iVersion < 2 || !p->real->pMethods->xShmUnmap) return SQLITE_OK;
    return p->real->pMethods->xShmUnmap(p->real, deleteFlag);
}

static inline int sb_walvfs_fetch(sqlite3_file *f, sqlite3_int64 offset, int amount, void **out) {
    sb_walvfs_file *p = sb_walvfs_cast(f);
    if (p->real->pMethods->iVersion < 3 || !p->real->pMethods->xFetch) { *out = 0; return SQLITE_OK; }
    int rc = sb_walvfs_flush(p);
    return rc != SQLITE_OK ? rc : p->real->pMethods->xFetch(p->real, offset, amount, out);
}

static inline int sb_walvfs_unfetch(sqlite3_file *f, sqlite3_int64 offset, void *page) {
    sb_walvfs_file *p = sb_walvfs_cast(f);
    if (p->real->pMethods->iVersion < 3 || !p->real->pMethods->xUnfetch) return SQLITE_OK;
    return p->real->pMethods->xUnfetch(p->real, offset, page);
}

static inline const sqlite3_io_methods *sb_walvfs_io_methods(void) {
    static const sqlite3_io_methods methods = {
        3,
        sb_walvfs_close,
        sb_walvfs_read,
        sb_walvfs_write,
        sb_walvfs_truncate,
        sb_walvfs_sync,
        sb_walvfs_file_size,
        sb_walvfs_lock,
        sb_walvfs_unlock,
        sb_walvfs_check_reserved_lock,
        sb_walvfs_file_control,
        sb_walvfs_sector_size,
        sb_walvfs_device_characteristics,
        sb_walvfs_shm_map,
        sb_walvfs_shm_lock,
        sb_walvfs_shm_barrier,
        sb_walvfs_shm_unmap,
        sb_walvfs_fetch,
        sb_walvfs_unfetch,
    };
    return &methods;
}

static inline int sb_walvfs_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *f, int flags, int *outFlags) {
    (void)vfs;
    sqlite3_vfs *real = *sb_walvfs_real_slot();
    sb_walvfs_file *p = sb_walvfs_cast(f);
    memset(p, 0, sizeof(*p));
    p->real = (sqlite3_file *)(p + 1);
    int rc = real->xOpen(real, name, p->real, flags, outFlags);
    // SQLite calls xClose only when pMethods is set: not after a failed open (the real file
    // cleaned up after itself).
    if (rc != SQLITE_OK || !p->real->pMethods) {
        p->base.pMethods = 0;
        return rc != SQLITE_OK ? rc : SQLITE_CANTOPEN;
    }
    p->isWal = (flags & SQLITE_OPEN_WAL) != 0;
    p->base.pMethods = sb_walvfs_io_methods();
    if (p->isWal && name) {
        sqlite3_file *db = sqlite3_database_file_object(name);
        if (db && db->pMethods == sb_walvfs_io_methods()) {
            p->db = sb_walvfs_cast(db);
            p->db->wal = p;
        }
    }
    return SQLITE_OK;
}

#define SB_WALVFS_NAME "switchboard-wal"

/// The VFS's name (a C string constant; Swift cannot import the macro).
static inline const char *sb_walvfs_name(void) { return SB_WALVFS_NAME; }

/// Registers the VFS (not as the default) around the current default VFS. Idempotent per
/// translation unit; returns SQLITE_OK or SQLite's error.
static inline int sb_walvfs_register(void) {
    static sqlite3_vfs vfs;
    if (sqlite3_vfs_find(SB_WALVFS_NAME)) return SQLITE_OK;
    sqlite3_vfs *real = sqlite3_vfs_find(0);
    if (!real) return SQLITE_ERROR;
    *sb_walvfs_real_slot() = real;
    // Every method but xOpen is the default VFS's own (they do not depend on which VFS
    // object SQLite passes them, only on pAppData and mxPathname, which the copy keeps).
    memcpy(&vfs, real, sizeof(vfs));
    vfs.pNext = 0;
    vfs.zName = SB_WALVFS_NAME;
    vfs.szOsFile = (int)sizeof(sb_walvfs_file) + real->szOsFile;
    vfs.xOpen = sb_walvfs_open;
    return sqlite3_vfs_register(&vfs, 0);
}

#endif
