/// When a group-commit batch stops taking frames (``SwitchboardServer/flushFrames()``).
///
/// Nothing a batch produces leaves before its COMMIT, so every frame in a batch waits for
/// the hub's work on all the others. A count cap alone (256) let one loop pass's frames —
/// a burst of heartbeats from the idle fleet, or everything that queued while the thread
/// waited for a CPU — form a batch of tens of milliseconds. Cutting on the work's elapsed
/// time bounds what a frame waits behind in its own batch; the frames left over start the
/// next batch right after this one's sends, in arrival order.
struct BatchCut: Equatable {
    /// 2 ms of hub work: issue 2's target is 5 ms at p99 for an event relay, and a frame
    /// can wait for the batch in progress and then for its own; at ~0.1 ms per frame
    /// (docs/benchmarks.md) that is ~20 frames, enough that a commit (~0.1–0.3 ms on a quiet
    /// host) stays a small share of a saturated loop's time.
    static let defaultBudgetMicroseconds: Int64 = 2_000
    /// 256 frames: the old cap, kept as the bound on the actions one batch holds in memory.
    static let defaultMaxFrames = 256

    var budgetMicroseconds: Int64 = defaultBudgetMicroseconds
    var maxFrames: Int = defaultMaxFrames

    /// True when a batch whose work started at `startedAt` (µs) and that has taken `frames`
    /// frames should take no more and commit. Always false before the first frame, so a
    /// batch makes progress however slow one frame is.
    func isFull(frames: Int, startedAt: Int64, now: Int64) -> Bool {
        frames >= 1 && (frames >= maxFrames || now - startedAt >= budgetMicroseconds)
    }
}
