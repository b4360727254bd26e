#if canImport(Glibc)
import Glibc
#endif

/// When a group-commit batch stops taking frames (``SwitchboardServer/flushFrames()``).
///
/// Nothing a batch produces leaves before its COMMIT, so every frame in a batch waits for
/// the hub's work on all the others. A count cap alone (256) let one loop pass's frames —
/// a burst of heartbeats from the idle fleet, or everything that queued while the thread
/// waited for a CPU — form a batch of tens of milliseconds. Cutting on the work's time
/// bounds what a frame waits behind in its own batch; the frames left over start the next
/// batch right after this one's sends, in arrival order.
///
/// The time is the loop thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`), not wall time: on a
/// shared host the thread is often preempted mid-batch, and cutting then would not make
/// the wait shorter, only add commits (CPU and WAL pages) to a thread already short of CPU.
struct BatchCut: Equatable {
    /// 5 ms of the thread's CPU (~45 frames at ~0.1 ms each, docs/benchmarks.md): it bounds
    /// a burst, and it rarely binds under a steady load. A 2 ms cut was measured first
    /// ("Hub latency"): on the shared host it halved the frames per batch (22 → 10), so
    /// twice the commits — each COMMIT writes every page the batch dirtied, ~50 pages, and
    /// took ~2.5 ms there — and CPU per setup rose from 7.4 to 9.0 ms on a server already
    /// short of CPU.
    static let defaultBudgetMicroseconds: Int64 = 5_000
    /// 256 frames: the old cap, kept as the bound on the actions one batch holds in memory.
    static let defaultMaxFrames = 256

    var budgetMicroseconds: Int64 = defaultBudgetMicroseconds
    var maxFrames: Int = defaultMaxFrames

    /// True when a batch whose work started at CPU time `startedAt` (µs) and that has taken `frames`
    /// frames should take no more and commit. Always false before the first frame, so a
    /// batch makes progress however slow one frame is.
    func isFull(frames: Int, startedAt: Int64, now: Int64) -> Bool {
        frames >= 1 && (frames >= maxFrames || now - startedAt >= budgetMicroseconds)
    }

    /// False when ``isFull(frames:startedAt:now:)`` must be false, knowing only the wall
    /// time elapsed since the batch's work started (µs): a thread's CPU time cannot grow
    /// faster than the wall clock, so under the budget in wall time it is under it in CPU
    /// time too. Reading `CLOCK_THREAD_CPUTIME_ID` is a system call (no vDSO path, unlike
    /// the monotonic clock); read after every frame it was 1 % of the hub's CPU
    /// (docs/benchmarks.md, "Hub CPU per setup").
    func mayBeFull(frames: Int, wallElapsed: Int64) -> Bool {
        frames >= 1 && (frames >= maxFrames || wallElapsed >= budgetMicroseconds)
    }
}

extension BatchCut {
    /// CPU time of the calling thread in µs (clock_gettime(2), `CLOCK_THREAD_CPUTIME_ID`).
    static func threadCPUMicroseconds() -> Int64 {
        var ts = timespec()
        guard clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0 else { return 0 }
        return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1_000
    }
}
