import CSQLite

/// The "switchboard-wal" VFS (`sb_walvfs_*` in CSQLite's walvfs.h): the default VFS, except
/// that the frames a transaction appends to the WAL reach the kernel together, one write(2)
/// per up to 31 frames and the last at its commit frame, instead of two per frame (frame
/// header, then page).
///
/// Each of SQLite's writes is the kernel's whole buffered-write path for one or two pages of
/// the file (a frame is 4,120 bytes): 10 frames as 20 pwrite(2)s took 37.5 µs here, as one
/// 8–11.5 µs; the hub writes ~10 frames per batch at light load and ~24–37 per call setup
/// at full load. Same bytes, same offsets, same order, and the commit frame's write returns only once
/// the transaction's frames are in the file (an error is that write's error), so readers,
/// durability and crash recovery are as before (walvfs.h says why, step by step).
/// Figures: docs/benchmarks.md, "WAL frames in one write".
///
/// ``SQLiteConnection`` opens every database through it once it is registered. This file must
/// stay the only caller of the `sb_walvfs_*` functions: they are `static inline`, so each
/// Swift file that calls them gets its own copy of their state.
public enum SQLiteWALWrites {
    /// `sb_walvfs_register`'s result, computed once per process (swift_once), after the page
    /// cache wrapper was installed and the memory statistics turned off (registering a VFS
    /// initializes SQLite, and `sqlite3_config` only works before that).
    private static let registerResult: Int32 = {
        SQLiteMemoryStatistics.turnOffIfNeeded()
        SQLitePageCache.installIfNeeded()
        return sb_walvfs_register()
    }()

    /// The VFS name to open connections with, or nil (SQLite's default VFS) if it could not
    /// be registered.
    static var vfsName: UnsafePointer<CChar>? {
        registerResult == SQLITE_OK ? sb_walvfs_name() : nil
    }

    /// Whether connections opened from now on use it.
    public static var isRegistered: Bool { vfsName != nil }

    /// Counters over all connections of the process.
    public struct Stats: Equatable, Sendable {
        /// Writes SQLite asked for on WAL files.
        public var walWrites: UInt
        /// Writes that reached the kernel for WAL files.
        public var realWalWrites: UInt
        /// Buffers written at a commit frame.
        public var commitFlushes: UInt
        /// Buffer writes that failed (each failed its transaction).
        public var flushFailures: UInt
    }

    public static var stats: Stats {
        let s = sb_walvfs_read_stats()
        return Stats(walWrites: s.walWrites, realWalWrites: s.realWalWrites, commitFlushes: s.commitFlushes,
                     flushFailures: s.flushFailures)
    }
}
