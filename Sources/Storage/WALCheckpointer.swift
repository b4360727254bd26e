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
/// writer needs. The writer restarts the WAL from the beginning at its next transaction only
/// once *every* frame was copied, and under a steady write load frames keep arriving while a
/// pass copies and `fsync`s, so a single pass per interval never caught up: the WAL grew to
/// `restartBytes` in ~10 s and then a `RESTART` held the writer off for its copy and two
/// `fsync`s. Measured on the hub's loop (docs/benchmarks.md, "Hub latency"): `BEGIN
/// IMMEDIATE` sleeping in SQLite's busy handler for 2+5+10+15+20+25 ms ≈ 100 ms every
/// ~2.5 s, plus a 10–40 ms `ftruncate` of the grown WAL back to `journal_size_limit`. So a
/// round now runs up to `catchUpPasses` passive passes back to back while the last one left
/// frames behind; each copies only what was committed during the one before, and the first
/// pass that ends with nothing left lets the writer restart the WAL (no lock taken, no
/// writer waiting). `RESTART` stays as the bound for a writer that outruns the passes: it
/// runs only when the WAL holds more than `restartBytes` of frames (counted from the
/// checkpoint's answer, not the file's size, which a restarted WAL keeps).
///
/// The passive passes run at the lowest priority (`passiveNice`): they hold nothing the
/// writer waits for, and at normal priority their ~40 ms of copying per second took a CPU
/// from the hub and shard threads in bursts. A `RESTART` or `TRUNCATE` does hold the writer
/// off, so it runs on a second thread at the process's own priority (`restartThreadName`),
/// which the passive thread hands it to and waits for: a starved low-priority thread never
/// holds the write lock (an unprivileged thread cannot lower its nice value again).
final class WALCheckpointer: @unchecked Sendable {
    /// 1 s: short enough that the WAL a passive checkpoint copies is a few MB at most at
    /// the benchmark's write rate (one fsync per second instead of one per ~1,000 pages),
    /// long enough that its fsync is amortized over ~1,000 commits.
    static let defaultIntervalMilliseconds = 1_000
    /// 256 MB: `RESTART` is the only mode that delays the writer, and each one held the
    /// hub off for ~50–70 ms (its copy and `fsync`s under the write load; counted in
    /// `switchboard_hub_batches_deferred_for_checkpoint_total`). At 200 pairs the WAL grew
    /// by ~64 MB/s when this was measured (~37 frames per setup; ~24 since time-ordered
    /// IDs), so with 64 MB a `RESTART` ran every round: 13–14 per 20 s run, 625–770 deferred
    /// batches; with 256 MB, 4 and 170–244, and +1…+11 % setups/s (docs/benchmarks.md,
    /// "Fewer RESTART checkpoints"). The price:
    /// the WAL file's high-water mark (~330 MB in that run: frames appended while the last
    /// passes ran), and a crash recovery that reads the frames left: 0.9 s from start to
    /// `/readyz` after `kill -9` with 264 MB of frames, cold page cache.
    static let defaultRestartBytes = 256 * 1024 * 1024
    /// 512 MB: twice the RESTART bound. The writer never truncates the WAL (the store's
    /// `journal_size_limit = -1`), so the file keeps its high-water mark, normally just
    /// past `restartBytes` (frames appended while a RESTART waited). A file past this
    /// size is what a burst the rounds could not follow left (or a reader that held
    /// checkpoints off): the round then runs `TRUNCATE` instead of `RESTART`, which copies,
    /// resets and truncates the file to zero on this thread.
    static let defaultTruncateBytes = 2 * defaultRestartBytes
    /// 6 passes: each copies what was committed during the previous one (its two `fsync`s
    /// are the pass's length), so the remainder shrinks fast when an `fsync` takes a few ms;
    /// a pass that copies nothing new costs no `fsync`, and one such pass ends the round. Bounds one round's I/O when the
    /// writer never pauses long enough (on a disk whose `fsync` takes ~100 ms under other
    /// load, measured in docs/benchmarks.md, no number of passes catches up).
    static let defaultCatchUpPasses = 6

    /// 19, the lowest priority (setpriority(2)): the passes get a CPU when the hub and shard
    /// threads leave one, which at 1,000 setups/s is ~20 % of the host's time, against the
    /// passes' ~4 %. Measured at `--rate 1000`: a lower relay p99 in 10 of 14 paired runs
    /// (medians 13.7 against 17.9 ms and 9.2 against 10.4 ms in two sets), no fewer setups/s
    /// in the closed loop (docs/benchmarks.md, "The checkpointer's passes at the lowest
    /// priority").
    static let passiveNice: Int32 = 19

    let path: String
    let intervalMilliseconds: Int
    let restartBytes: Int
    let truncateBytes: Int
    let catchUpPasses: Int
    private let stopSignal = DispatchSemaphore(value: 0)
    private let exited = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var stats = Stats()
    private var thread: Thread?
    /// The thread that runs `RESTART` and `TRUNCATE` (see the type's documentation); nil
    /// when the checkpointer is driven by hand (`checkpoint(_:)` then runs them inline).
    private var restartThread: Thread?
    private let restartRequest = DispatchSemaphore(value: 0)
    private let restartDone = DispatchSemaphore(value: 0)
    private let restartExited = DispatchSemaphore(value: 0)
    /// The checkpoint the restart thread runs next; nil with a request: stop. Under `lock`.
    private var restartJob: (() -> Void)?

    struct Stats: Equatable {
        var passive = 0
        var restarts = 0
        var failures = 0
        /// Rounds that ended with every frame copied (the writer restarts the WAL next).
        var caughtUp = 0
        /// Passive passes run, first passes and catch-up passes together.
        var passes = 0
        /// Frames the last checkpoint copied into the database file.
        var lastCheckpointedFrames: Int64 = 0
        /// WAL frames (pages) the writer appended, summed over rounds: the WAL's growth,
        /// which sets how often a round cannot catch up.
        var framesWritten: Int64 = 0
        /// WAL size (frames) at the previous pass, to compute `framesWritten`.
        var lastFrames: Int64 = 0
        /// True while a `RESTART` is waiting for or holding the write lock.
        var restarting = false
        /// `RESTART`s run as `TRUNCATE` because the WAL file was past `truncateBytes`
        /// (also counted in `restarts`).
        var truncations = 0
        /// Nice value of the thread that ran the last `RESTART` or `TRUNCATE`.
        var lastRestartNice: Int32?
    }

    init(path: String, intervalMilliseconds: Int = defaultIntervalMilliseconds, restartBytes: Int = defaultRestartBytes,
         truncateBytes: Int = defaultTruncateBytes, catchUpPasses: Int = defaultCatchUpPasses) {
        self.path = path
        self.intervalMilliseconds = intervalMilliseconds
        self.restartBytes = restartBytes
        self.truncateBytes = truncateBytes
        self.catchUpPasses = max(1, catchUpPasses)
    }

    var current: Stats {
        lock.lock(); defer { lock.unlock() }
        return stats
    }

    /// The thread's name in the kernel (`top -H`, `perf`, `/proc/PID/task/*/comm`): without
    /// it the thread shows the process's name, and its CPU reads as the hub thread's
    /// (docs/benchmarks.md, "Parsing on the shards"). 14 bytes: the kernel keeps 15.
    static let threadName = "wal-checkpoint"
    /// The kernel name of the thread that runs `RESTART` and `TRUNCATE`.
    static let restartThreadName = "wal-restart"

    func start() {
        let restarter = Thread { [self] in
            _ = sb_sqlite_set_thread_name(Self.restartThreadName)
            while true {
                restartRequest.wait()
                lock.lock()
                let job = restartJob
                restartJob = nil
                lock.unlock()
                guard let job else { break }
                job()
                restartDone.signal()
            }
            restartExited.signal()
        }
        restarter.name = Self.restartThreadName
        restartThread = restarter
        restarter.start()
        let t = Thread { [self] in
            _ = sb_sqlite_set_thread_name(Self.threadName)
            _ = sb_sqlite_set_thread_nice(Self.passiveNice)
            // Own connection, used only on this thread (NOMUTEX).
            let connection = try? SQLiteConnection(path: path)
            while stopSignal.wait(timeout: .now() + .milliseconds(intervalMilliseconds)) == .timedOut {
                guard let connection else { continue }
                checkpoint(connection)
            }
            connection?.close()
            exited.signal()
        }
        t.name = Self.threadName
        thread = t
        t.start()
    }

    /// Stops the thread and waits for it (the connection is closed before this returns).
    func stop() {
        guard thread != nil else { return }
        thread = nil
        stopSignal.signal()
        exited.wait()
        // The passive thread is gone, so no checkpoint is pending: a request without one
        // stops the restart thread.
        restartThread = nil
        restartRequest.signal()
        restartExited.wait()
    }

    /// Runs `checkpoint` (one that holds the writer off) on the restart thread and waits for
    /// it; inline on a checkpointer without threads.
    private func onRestartThread(_ checkpoint: @escaping () throws -> Void) throws {
        guard restartThread != nil else { try checkpoint(); return }
        var failure: Error?
        lock.lock()
        restartJob = { do { try checkpoint() } catch { failure = error } }
        lock.unlock()
        restartRequest.signal()
        restartDone.wait()
        if let failure { throw failure }
    }

    /// One round: `PASSIVE` passes until one finds nothing new to copy (at most
    /// `catchUpPasses`), then `RESTART` if the WAL still holds more than `restartBytes`.
    func checkpoint(_ connection: SQLiteConnection) {
        do {
            var passes = 0
            var copied: Int64 = 0
            var last = (frames: Int64(0), checkpointed: Int64(0))
            var caughtUp = false
            repeat {
                let previous = last
                last = try Self.run("PASSIVE", on: connection)
                passes += 1
                copied = max(copied, last.checkpointed)
                // A pass reports the WAL's size as it was when the pass started: frames the
                // writer appended meanwhile are not in `frames`. Only a pass that found
                // nothing new to copy (no fsync, so it is short) shows that the copy caught
                // up with the writer; measured, 17 RESTARTs in 80 s came after rounds whose
                // last copying pass looked complete.
                caughtUp = last.checkpointed >= 0 && last.checkpointed == last.frames
                    && passes > 1 && last.frames == previous.frames && last.checkpointed == previous.checkpointed
            } while passes < catchUpPasses && last.checkpointed >= 0 && !caughtUp
                && !(last.frames == 0 && last.checkpointed == 0)
            if last.frames == 0 && last.checkpointed == 0 { caughtUp = true }
            var restarted = false, truncated = false
            let oversized = walFileBytes() > truncateBytes
            // Also when caught up: then it copies nothing and holds the writer only for the
            // header reset, and the file is reused from its start at once.
            if oversized || walFrameBytes(frames: last.frames, on: connection) > restartBytes {
                setRestarting(true)
                defer { setRestarting(false) }
                try onRestartThread { [self] in
                    _ = try Self.run(oversized ? "TRUNCATE" : "RESTART", on: connection)
                    let nice = sb_sqlite_thread_nice()
                    lock.lock(); stats.lastRestartNice = nice; lock.unlock()
                }
                restarted = true
                truncated = oversized
            }
            lock.lock()
            // A smaller count than last time: the writer restarted the WAL in between.
            if last.frames >= 0 {
                stats.framesWritten += last.frames >= stats.lastFrames ? last.frames - stats.lastFrames : last.frames
                stats.lastFrames = restarted ? 0 : last.frames
            }
            stats.passive += 1
            stats.passes += passes
            if caughtUp { stats.caughtUp += 1 }
            if restarted { stats.restarts += 1 }
            if truncated { stats.truncations += 1 }
            stats.lastCheckpointedFrames = copied
            lock.unlock()
        } catch {
            lock.lock(); stats.failures += 1; lock.unlock()
        }
    }

    private func setRestarting(_ value: Bool) {
        lock.lock(); stats.restarting = value; lock.unlock()
    }

    /// Bytes the WAL's frames take (a frame is a page plus its 24-byte header,
    /// https://sqlite.org/fileformat.html#the_write_ahead_log). The file's size is no measure:
    /// after a restart the writer reuses the file from its start without shrinking it.
    func walFrameBytes(frames: Int64, on connection: SQLiteConnection) -> Int {
        let pageSize = (try? connection.scalarInt("PRAGMA page_size")) ?? 4096
        return Int(frames) * (Int(pageSize) + 24)
    }

    /// The WAL file's size on disk (0 if it does not exist).
    func walFileBytes() -> Int {
        var info = stat()
        return stat(path + "-wal", &info) == 0 ? Int(info.st_size) : 0
    }

    /// `PRAGMA wal_checkpoint(mode)` returns (busy, frames in the WAL, frames checkpointed).
    @discardableResult
    static func run(_ mode: String, on connection: SQLiteConnection) throws -> (frames: Int64, checkpointed: Int64) {
        try connection.with("PRAGMA wal_checkpoint(\(mode))") { statement in
            try statement.step() ? (statement.int64(1), statement.int64(2)) : (0, 0)
        }
    }
}

/// Background checkpoint totals for /metrics (``SQLiteCallStore/walCheckpoints``).
public struct WALCheckpointCounts: Sendable, Equatable {
    /// Rounds run (one per interval).
    public var rounds: Int
    /// Passive passes run, first and catch-up passes together.
    public var passes: Int
    /// Rounds that ended with every frame copied: the writer restarts the WAL without waiting.
    public var caughtUp: Int
    /// `RESTART` checkpoints: each holds the writer off for a copy and `fsync`s.
    public var restarts: Int
    public var failures: Int
    /// WAL frames (pages) appended by the writer, as seen by the rounds.
    public var framesWritten: Int64
}

extension SQLiteCallStore {
    /// True while the background checkpointer runs a `RESTART`: a write transaction begun
    /// now would wait in SQLite's busy handler (sleeps of 1, 2, 5, 10, 15, 20, 25 … ms) until
    /// it is done. The hub's loop checks this before a batch and retries a millisecond later
    /// instead, so that its wait ends when the lock is free, not at the next sleep's end,
    /// and the loop keeps reading sockets meanwhile.
    public var isCheckpointRestarting: Bool {
        checkpointStats?.restarting ?? false
    }

    /// Totals of the background checkpointer; nil without one (in-memory database, or
    /// `backgroundCheckpoints: false`).
    public var walCheckpoints: WALCheckpointCounts? {
        checkpointStats.map {
            WALCheckpointCounts(rounds: $0.passive, passes: $0.passes, caughtUp: $0.caughtUp, restarts: $0.restarts,
                                failures: $0.failures, framesWritten: $0.framesWritten)
        }
    }
}
