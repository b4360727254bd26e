import CSQLite
import Foundation

/// Runs WAL checkpoints (https://sqlite.org/wal.html#checkpointing) on a thread of its own,
/// through a second connection, so that the writer's thread (the hub's event loop) never
/// pays for them.
///
/// The writer runs with `PRAGMA wal_autocheckpoint = 0`: otherwise SQLite checkpoints
/// inside whichever commit crosses the threshold, and that commit waits for the copy and for
/// the `fsync` of the database file (~8 ms measured here, docs/benchmarks.md finding 4) with
/// everything queued behind it on the loop. Durability does not depend on checkpoints: a
/// commit is in the WAL (in the page cache under `synchronous=NORMAL`, so it survives
/// `kill -9`), and a checkpoint only copies committed pages into the database file.
///
/// Every `interval` a `PASSIVE` checkpoint copies what it can without taking any lock the
/// writer needs. The writer restarts the WAL from the beginning at its next transaction
/// once everything was copied, so under light load the file stays small. Under a steady
/// write load a passive checkpoint rarely catches up with the writer; when the WAL file has
/// grown past `restartBytes`, a `RESTART` checkpoint waits for the writer to finish its
/// current transaction and holds it off for the final copy and `fsync` (a rare pause of a
/// few ms, bounded to once per `restartBytes` of WAL, instead of one per 1,000 pages).
final class WALCheckpointer: @unchecked Sendable {
    /// 1 s: short enough that the WAL a passive checkpoint copies is a few MB at most at
    /// the benchmark's write rate (one fsync per second instead of one per ~1,000 pages),
    /// long enough that its fsync is amortized over ~1,000 commits.
    static let defaultIntervalMilliseconds = 1_000
    /// 64 MB: matches the store's `journal_size_limit`; well past what one second of writes
    /// appends, so `RESTART` (the only mode that delays the writer) stays rare.
    static let defaultRestartBytes = 64 * 1024 * 1024

    let path: String
    let intervalMilliseconds: Int
    let restartBytes: Int
    private let stopSignal = DispatchSemaphore(value: 0)
    private let exited = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var stats = Stats()
    private var thread: Thread?

    struct Stats: Equatable {
        var passive = 0
        var restarts = 0
        var failures = 0
        /// Frames the last checkpoint copied into the database file.
        var lastCheckpointedFrames: Int64 = 0
    }

    init(path: String, intervalMilliseconds: Int = defaultIntervalMilliseconds, restartBytes: Int = defaultRestartBytes) {
        self.path = path
        self.intervalMilliseconds = intervalMilliseconds
        self.restartBytes = restartBytes
    }

    var current: Stats {
        lock.lock(); defer { lock.unlock() }
        return stats
    }

    func start() {
        let t = Thread { [self] in
            // Own connection, used only on this thread (NOMUTEX).
            let connection = try? SQLiteConnection(path: path)
            while stopSignal.wait(timeout: .now() + .milliseconds(intervalMilliseconds)) == .timedOut {
                guard let connection else { continue }
                checkpoint(connection)
            }
            connection?.close()
            exited.signal()
        }
        t.name = "sqlite-checkpoint"
        thread = t
        t.start()
    }

    /// Stops the thread and waits for it (the connection is closed before this returns).
    func stop() {
        guard thread != nil else { return }
        thread = nil
        stopSignal.signal()
        exited.wait()
    }

    /// One round: `PASSIVE`, then `RESTART` if the WAL file is over the bound.
    func checkpoint(_ connection: SQLiteConnection) {
        do {
            let copied = try Self.run("PASSIVE", on: connection).checkpointed
            var restarted = false
            if walBytes() > restartBytes {
                _ = try Self.run("RESTART", on: connection)
                restarted = true
            }
            lock.lock()
            stats.passive += 1
            if restarted { stats.restarts += 1 }
            stats.lastCheckpointedFrames = copied
            lock.unlock()
        } catch {
            lock.lock(); stats.failures += 1; lock.unlock()
        }
    }

    /// `PRAGMA wal_checkpoint(mode)` returns (busy, frames in the WAL, frames checkpointed).
    @discardableResult
    static func run(_ mode: String, on connection: SQLiteConnection) throws -> (frames: Int64, checkpointed: Int64) {
        try connection.with("PRAGMA wal_checkpoint(\(mode))") { statement in
            try statement.step() ? (statement.int64(1), statement.int64(2)) : (0, 0)
        }
    }

    /// Size of the `-wal` file, 0 if there is none.
    func walBytes() -> Int {
        let attributes = try? FileManager.default.attributesOfItem(atPath: path + "-wal")
        return (attributes?[.size] as? NSNumber)?.intValue ?? 0
    }
}
