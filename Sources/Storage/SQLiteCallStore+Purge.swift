import Foundation

/// Retention.
extension SQLiteCallStore {
    public func purge(terminalCallsUpdatedBefore: Int64, eventsProcessedBefore: Int64) throws -> PurgeCounts {
        try locked { connection in
            try connection.immediateTransaction {
                var counts = PurgeCounts()
                // Deadlines and descriptions first (they reference the calls about to go);
                // participants cascade.
                try connection.with("""
                    DELETE FROM deadlines WHERE call_id IN
                    (SELECT call_id FROM calls WHERE is_terminal = 1 AND updated_at < ?1)
                    """) { statement in
                    try statement.bind(1, terminalCallsUpdatedBefore)
                    try statement.run()
                }
                try connection.with("""
                    DELETE FROM call_descriptions WHERE call_id IN
                    (SELECT call_id FROM calls WHERE is_terminal = 1 AND updated_at < ?1)
                    """) { statement in
                    try statement.bind(1, terminalCallsUpdatedBefore)
                    try statement.run()
                }
                try connection.with("DELETE FROM calls WHERE is_terminal = 1 AND updated_at < ?1") { statement in
                    try statement.bind(1, terminalCallsUpdatedBefore)
                    try statement.run()
                }
                counts.calls = connection.changes
                // Processed events are in rowid (= processing) order (schema 6): delete up to
                // the first one still within retention. Cost ∝ rows deleted, no time index.
                // A record written after a clock step back stays until those before it go.
                try connection.with("""
                    DELETE FROM processed_events WHERE id < IFNULL(
                        (SELECT id FROM processed_events WHERE processed_at >= ?1 ORDER BY id LIMIT 1),
                        (SELECT MAX(id) FROM processed_events) + 1)
                    """) { statement in
                    try statement.bind(1, eventsProcessedBefore)
                    try statement.run()
                }
                counts.events = connection.changes
                // `acknowledge` deletes a log row once all its entries are acknowledged; this
                // catches rows left behind (e.g. migrated ones already acknowledged).
                let index = try Self.outboxIndex(in: connection)
                connection.derivedTouched = true
                for row in index.orphanRows.sorted() {
                    try Self.deleteLogRow(row, in: connection)
                    counts.outboxEntries += connection.changes
                }
                index.removedOrphans()
                return counts
            }
        }
    }
}
