import IO
import Signaling
import Storage

/// When the next retention chunk runs. A round starts every `intervalMs`; within a round one
/// chunk (at most `chunkRows` rows of each kind, one transaction) runs per tick until a chunk
/// comes back short, so a minute's deletions are spread over ticks instead of one statement
/// that holds the loop (docs/benchmarks.md, "Hub latency").
///
/// Under sustained load the ticks alone cannot keep up: every command leaves one processed
/// event that expires a retention period later, so at 30 setups/s (12 commands each) 360
/// events/s expire, past the ticks' 320 rows/s, and the database would grow without bound.
/// So while the last chunk found something to delete (``backlog``), every storage batch also
/// carries a chunk sized to its frames (``batchLimit(frames:)``): the deletions scale with
/// the load that creates them and share the batch's COMMIT instead of a transaction of
/// their own. The first chunk that finds nothing ends that until the next round.
struct PurgeRounds: Equatable {
    /// 60 s: retention is a day; starting rounds more often only costs queries.
    static let defaultIntervalMs: Int64 = 60_000
    /// 64 rows of each kind per tick (5 ticks/s: up to 320 rows/s per kind). Measured
    /// (docs/benchmarks.md, "Hub latency"): ~4,500 shared payloads after a minute took 258 ms
    /// in one statement; in chunks of 256 they took ~24 ms a chunk (max 67 ms) on the loaded
    /// host — a deleted ~3 KB payload frees a whole page, so a chunk's COMMIT writes about
    /// one WAL page per row. 64 rows keeps a chunk to a few ms and the rate above what
    /// ~160 setups/s leave behind (one shared payload per invite); at higher rates the
    /// rounds simply run back to back.
    static let defaultChunkRows = 64
    /// 2 rows of each kind per frame of a batch: a frame records at most one processed event
    /// and ends at most one call, so a backlog drains at twice the rate it can grow, while a
    /// batch's extra work stays a couple of row deletions per frame (a chunk finds its rows
    /// from the low end of an index: no scan).
    static let batchRowsPerFrame = 2

    let intervalMs: Int64
    let chunkRows: Int
    /// Wall time the next round starts; `.min` = at the first tick.
    private(set) var nextRoundAtWall: Int64 = .min
    /// True while the last chunk reached `chunkRows` of some kind.
    private(set) var inRound = false
    /// True while the last chunk (of a tick or a batch) deleted something: batches then carry
    /// a chunk of their own.
    private(set) var backlog = false

    init(intervalMs: Int64 = defaultIntervalMs, chunkRows: Int = defaultChunkRows) {
        self.intervalMs = intervalMs
        self.chunkRows = max(1, chunkRows)
    }

    /// True when a chunk should run at wall time `now`.
    func isDue(now: Int64) -> Bool {
        inRound || now >= nextRoundAtWall
    }

    /// A chunk ran at `now` and deleted `counts`: go on next tick if it was full, else the
    /// round is over and the next one starts `intervalMs` after this round started.
    mutating func ran(_ counts: PurgeCounts, now: Int64) {
        if !inRound { nextRoundAtWall = now + intervalMs }
        inRound = counts.mayHaveMore(limit: chunkRows)
        backlog = counts != PurgeCounts()
    }

    /// Rows of each kind the chunk riding along a batch of `frames` frames may delete; nil =
    /// no chunk (nothing was due at the last look).
    func batchLimit(frames: Int) -> Int? {
        backlog && frames > 0 ? frames * Self.batchRowsPerFrame : nil
    }

    /// A batch's chunk deleted `counts`: batches go on carrying chunks while they find rows.
    mutating func ranInBatch(_ counts: PurgeCounts) {
        backlog = counts != PurgeCounts()
    }

    /// A chunk failed at `now`: the round ends and the next starts one interval later (a
    /// failing purge must not retry on every tick, nor on every batch).
    mutating func failed(now: Int64) {
        inRound = false
        backlog = false
        nextRoundAtWall = now + intervalMs
    }
}

extension SwitchboardServer {
    /// One retention chunk if due, in its own transaction after the tick's (so the tick's
    /// sends do not wait for it). Loop thread.
    func purgeIfDue(time: HubTime) {
        guard purgeRounds.isDue(now: time.wall) else { return }
        let cutoff = hub.retentionCutoff(time: time)
        let started = EventLoop.monotonicMicroseconds()
        let cpuStarted = BatchCut.threadCPUMicroseconds()
        defer {
            timings.purge.record(EventLoop.monotonicMicroseconds() - started)
            timings.purgeCPU.record(BatchCut.threadCPUMicroseconds() - cpuStarted)
        }
        do {
            let counts = try store.purgeChunk(terminalCallsUpdatedBefore: cutoff, eventsProcessedBefore: cutoff,
                                              limit: purgeRounds.chunkRows)
            purgeRounds.ran(counts, now: time.wall)
            timings.purgedInTicks.add(counts)
            if counts != PurgeCounts() { log.debug("purged", ["counts": .string("\(counts)")]) }
        } catch {
            purgeRounds.failed(now: time.wall)
            log.error("purge failed", ["error": .string("\(error)")])
        }
    }

    /// The retention chunk that rides along a storage batch of `frames` frames while there is
    /// a backlog (``PurgeRounds``). Call inside the batch, after its steps: the deletions
    /// commit with them; a chunk that fails undoes only itself (a savepoint, see
    /// `SQLiteCallStore.purgeChunk`), so the batch's frames are answered as usual. Loop thread.
    func purgeInBatch(frames: Int, time: HubTime) {
        guard let limit = purgeRounds.batchLimit(frames: frames) else { return }
        let cutoff = hub.retentionCutoff(time: time)
        do {
            let counts = try store.purgeChunk(terminalCallsUpdatedBefore: cutoff, eventsProcessedBefore: cutoff, limit: limit)
            purgeRounds.ranInBatch(counts)
            timings.purgedInBatches.add(counts)
        } catch {
            purgeRounds.failed(now: time.wall)
            log.error("purge failed", ["error": .string("\(error)"), "in": .string("batch")])
        }
    }
}
