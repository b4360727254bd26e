import Foundation

/// Retention.
///
/// A purge deletes at most `limit` rows of each kind per chunk, each chunk its own
/// transaction (or savepoint inside a batch), so that the hub's loop can spread a minute's
/// worth of deletions over its ticks instead of running them in one statement: measured on
/// the benchmark (docs/benchmarks.md, "Hub latency"), the shared-payload delete of a minute
/// at ~160 setups/s held the loop for tens of ms once a minute. Every statement deletes only
/// rows that the single-statement purge deleted — tombstones past retention with their
/// deadlines and descriptions, idempotency records past retention, outbox log rows whose
/// entries were all acknowledged — so a chunk that stops early leaves nothing inconsistent
/// behind: the next chunk goes on from there.
extension SQLiteCallStore {
    /// 256 rows of each kind per chunk when ``purge(terminalCallsUpdatedBefore:eventsProcessedBefore:)``
    /// purges everything in one transaction (its chunks only bound each statement's size).
    static let purgeChunkRows = 256

    /// Everything past retention, in one transaction.
    public func purge(terminalCallsUpdatedBefore: Int64, eventsProcessedBefore: Int64) throws -> PurgeCounts {
        try locked { connection in
            try connection.immediateTransaction {
                var total = PurgeCounts()
                while true {
                    let chunk = try Self.purgeChunk(terminalCallsUpdatedBefore: terminalCallsUpdatedBefore,
                                                    eventsProcessedBefore: eventsProcessedBefore,
                                                    limit: Self.purgeChunkRows, in: connection)
                    total.add(chunk)
                    if !chunk.mayHaveMore(limit: Self.purgeChunkRows) { return total }
                }
            }
        }
    }

    /// At most `limit` rows of each kind (calls, events, outbox log rows) in
    /// one transaction. When the answer ``PurgeCounts/mayHaveMore(limit:)``, call again.
    ///
    /// Inside ``batch(_:)`` the chunk rides along the batch: its deletions commit with the
    /// batch's steps (one COMMIT for both), and it runs in a savepoint, so a chunk that fails
    /// undoes only itself and the batch's steps still commit (unless SQLite rolled the whole
    /// transaction back itself; then the batch fails as it would have anyway).
    /// - Throws: `invalidCommit` for a `limit` below 1 (a chunk must make progress).
    public func purgeChunk(terminalCallsUpdatedBefore: Int64, eventsProcessedBefore: Int64, limit: Int) throws -> PurgeCounts {
        guard limit >= 1 else { throw StorageError.invalidCommit("purge chunk limit \(limit) is below 1") }
        return try locked { connection in
            try connection.isolatedTransaction {
                try Self.purgeChunk(terminalCallsUpdatedBefore: terminalCallsUpdatedBefore,
                                    eventsProcessedBefore: eventsProcessedBefore, limit: limit, in: connection)
            }
        }
    }

    /// Deletes processed events (bound ?1 = retention cutoff, ?2 = limit). They are in rowid
    /// (= processing) order (schema 6), so the expired ones are a prefix: the statement reads
    /// the oldest `limit` rows (`head`) and deletes those before the first one still within
    /// retention, so it reads at most `limit` rows however long the backlog (no time index).
    /// A record written after a clock step back stays until those before it go.
    ///
    /// (Until 2026-11-30 the statement looked for the first record within retention in the
    /// whole table, i.e. read the entire expired backlog at every chunk: harmless while the
    /// ticks kept the backlog short, but a backlog of 100,000 events made each chunk a scan of
    /// them all, `SQLitePurgeTests.testAnEventChunkReadsOnlyItsLimitWhateverTheBacklog`.)
    static let expiredEventsDelete = """
        WITH head AS MATERIALIZED (SELECT id, processed_at FROM processed_events ORDER BY id LIMIT ?2)
        DELETE FROM processed_events WHERE id IN
        (SELECT id FROM head WHERE id < IFNULL(
            (SELECT MIN(id) FROM head WHERE processed_at >= ?1),
            (SELECT MAX(id) FROM head) + 1))
        """

    private static func purgeChunk(terminalCallsUpdatedBefore: Int64, eventsProcessedBefore: Int64, limit: Int,
                                   in connection: SQLiteConnection) throws -> PurgeCounts {
        var counts = PurgeCounts()
        // The same oldest `limit` tombstones in all three statements (the partial index's
        // order, updated_at then rowid, and nothing writes calls in between). Deadlines and
        // descriptions first (they reference the calls about to go); participants cascade.
        let tombstones = """
            SELECT call_id FROM calls WHERE is_terminal = 1 AND updated_at < ?1 ORDER BY updated_at, rowid LIMIT ?2
            """
        for sql in ["DELETE FROM deadlines WHERE call_id IN (\(tombstones))",
                    "DELETE FROM call_descriptions WHERE call_id IN (\(tombstones))",
                    "DELETE FROM calls WHERE call_id IN (\(tombstones))"] {
            try connection.with(sql) { statement in
                try statement.bind(1, terminalCallsUpdatedBefore)
                try statement.bind(2, Int64(limit))
                try statement.run()
            }
        }
        counts.calls = connection.changes
        try connection.with(Self.expiredEventsDelete) { statement in
            try statement.bind(1, eventsProcessedBefore)
            try statement.bind(2, Int64(limit))
            try statement.run()
        }
        counts.events = connection.changes
        // `acknowledge` deletes a log row once all its entries are acknowledged; this
        // catches rows left behind (e.g. migrated ones already acknowledged), oldest first.
        let index = try outboxIndex(in: connection)
        connection.derivedTouched = true
        for row in index.orphanRows.sorted().prefix(limit) {
            try deleteLogRow(row, in: connection)
            counts.outboxEntries += connection.changes
            index.removedOrphan(row)
        }
        return counts
    }
}

extension PurgeCounts {
    /// True when some kind reached `limit` in a chunk: more rows of it may be due.
    public func mayHaveMore(limit: Int) -> Bool {
        calls >= limit || events >= limit || outboxEntries >= limit
    }

    public mutating func add(_ other: PurgeCounts) {
        calls += other.calls
        events += other.events
        outboxEntries += other.outboxEntries
    }
}
