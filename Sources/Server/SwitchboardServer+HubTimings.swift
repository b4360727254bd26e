import Storage

/// Where a frame's time goes on the hub's loop, as histograms on /metrics
/// (docs/benchmarks.md, "Hub latency"): a stall of the loop shows as a tail in one of them,
/// and the tick's lateness shows stalls that no frame was waiting behind.
struct HubTimings {
    /// µs from the shard thread's read of a frame to its arrival on the hub's loop: the
    /// hand-off (the shard's inbox, the wake-up of the hub's loop, the loop finishing what it
    /// was doing). 0 with `http.shards = 1`, where the hub's loop reads the sockets itself.
    var handoff = LatencyHistogram(bounds: LatencyHistogram.microsecondBounds)
    /// µs from a frame's arrival on the loop (after the socket read) until the hub starts on
    /// it: the batches before its own and the frames ahead of it in its batch.
    var frameWait = LatencyHistogram(bounds: LatencyHistogram.microsecondBounds)
    /// Frames per storage batch.
    var batchFrames = LatencyHistogram(bounds: LatencyHistogram.countBounds)
    /// µs of hub work inside a batch, before its COMMIT.
    var batchWork = LatencyHistogram(bounds: LatencyHistogram.microsecondBounds)
    /// µs of a batch's BEGIN IMMEDIATE: waits here are another connection holding the write
    /// lock (a `RESTART` checkpoint), in SQLite's busy handler.
    var begin = LatencyHistogram(bounds: LatencyHistogram.microsecondBounds)
    /// µs of a batch's COMMIT: the WAL writes, and the WAL header's `fsync` when the commit
    /// is the first after a WAL restart.
    var commit = LatencyHistogram(bounds: LatencyHistogram.microsecondBounds)
    /// µs carrying out a batch's actions (WebSocket sends, closes, pushes).
    var carryOut = LatencyHistogram(bounds: LatencyHistogram.microsecondBounds)
    /// µs of one tick (due deadlines, housekeeping), commit included.
    var tick = LatencyHistogram(bounds: LatencyHistogram.microsecondBounds)
    /// Times a batch waited a millisecond for a RESTART checkpoint instead of sleeping in
    /// SQLite's busy handler.
    var deferredForCheckpoint = 0
    /// Pings answered per pass after the batch (``SwitchboardServer/answerPings()``).
    var pings = LatencyHistogram(bounds: LatencyHistogram.countBounds)
    /// µs of one retention chunk (``PurgeRounds``), commit included.
    var purge = LatencyHistogram(bounds: LatencyHistogram.microsecondBounds)
    /// CPU µs of the loop thread in one retention chunk: the chunk's cost without the time
    /// the thread waited for a CPU (which dominated the wall time on the shared host).
    var purgeCPU = LatencyHistogram(bounds: LatencyHistogram.microsecondBounds)
    /// Rows deleted by retention chunks of the ticks and of the batches (``PurgeRounds``).
    var purgedInTicks = PurgeCounts()
    var purgedInBatches = PurgeCounts()
    /// µs the tick timer fired after it was due: the loop was busy (or the thread waited
    /// for a CPU) that long.
    var tickLateness = LatencyHistogram(bounds: LatencyHistogram.microsecondBounds)

    func expositionLines() -> [String] {
        handoff.exposition(name: "switchboard_hub_handoff_microseconds",
                           help: "Time from a shard's read of a frame until it arrives on the hub's loop.")
            + frameWait.exposition(name: "switchboard_hub_frame_wait_microseconds",
                             help: "Time from a frame's arrival on the hub's loop until the hub starts on it (in its batch).")
            + batchFrames.exposition(name: "switchboard_hub_batch_frames", help: "Frames per storage batch.")
            + batchWork.exposition(name: "switchboard_hub_batch_work_microseconds",
                                   help: "Hub work inside a storage batch, before its commit.")
            + begin.exposition(name: "switchboard_hub_batch_begin_microseconds",
                               help: "BEGIN IMMEDIATE of a storage batch (waits for another writer, e.g. a RESTART checkpoint).")
            + commit.exposition(name: "switchboard_hub_batch_commit_microseconds", help: "COMMIT of a storage batch.")
            + carryOut.exposition(name: "switchboard_hub_carry_out_microseconds",
                                  help: "Carrying out a batch's sends and closes after its commit.")
            + tick.exposition(name: "switchboard_hub_tick_microseconds", help: "One hub tick (deadlines, housekeeping).")
            + ["# HELP switchboard_hub_batches_deferred_for_checkpoint_total Batch starts put off 1 ms because a RESTART checkpoint held the write lock.",
               "# TYPE switchboard_hub_batches_deferred_for_checkpoint_total counter",
               "switchboard_hub_batches_deferred_for_checkpoint_total \(deferredForCheckpoint)"]
            + pings.exposition(name: "switchboard_hub_pings_per_pass", help: "Pings answered after a batch, per loop pass.")
            + purge.exposition(name: "switchboard_hub_purge_chunk_microseconds", help: "One retention purge chunk.")
            + purgeCPU.exposition(name: "switchboard_hub_purge_chunk_cpu_microseconds",
                                  help: "CPU time of the hub's thread in one retention purge chunk.")
            + tickLateness.exposition(name: "switchboard_hub_tick_lateness_microseconds",
                                      help: "How late the tick timer fired: time the loop was busy or waiting for a CPU.")
            + purgedRowsExposition()
    }

    private func purgedRowsExposition() -> [String] {
        var lines = ["# HELP switchboard_purged_rows_total Rows deleted by retention, by kind and by what carried the chunk (a tick's own transaction, or a storage batch).",
                     "# TYPE switchboard_purged_rows_total counter"]
        for (carrier, counts) in [("tick", purgedInTicks), ("batch", purgedInBatches)] {
            lines += ["switchboard_purged_rows_total{kind=\"calls\",in=\"\(carrier)\"} \(counts.calls)",
                      "switchboard_purged_rows_total{kind=\"events\",in=\"\(carrier)\"} \(counts.events)",
                      "switchboard_purged_rows_total{kind=\"outbox\",in=\"\(carrier)\"} \(counts.outboxEntries)"]
        }
        return lines
    }
}
