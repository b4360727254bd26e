/// SQLite `PRAGMA synchronous` setting (https://sqlite.org/pragma.html#pragma_synchronous).
public enum SynchronousMode: String, Sendable, Equatable {
    /// WAL + NORMAL: a commit survives a process crash or `kill -9` (the WAL is in the OS page
    /// cache), but the last transactions before a power loss or kernel panic may be rolled back.
    /// The database itself is never corrupted. No fsync per commit, which is what makes
    /// ≥10,000 commits/s possible. Default.
    case normal = "NORMAL"
    /// WAL + FULL: fsync of the WAL on every commit; also durable across power loss, at the cost
    /// of one fsync (typically 0.1–10 ms) per commit.
    case full = "FULL"
}
