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
                try connection.with("DELETE FROM processed_events WHERE processed_at < ?1") { statement in
                    try statement.bind(1, eventsProcessedBefore)
                    try statement.run()
                }
                counts.events = connection.changes
                // `acknowledge` trims eagerly; this catches anything left behind (e.g. by an
                // older build or a crash between the two statements of another writer).
                try connection.execute("""
                    DELETE FROM outbox WHERE seq <= (SELECT c.acked_seq FROM outbox_cursors c
                    WHERE c.account = outbox.account AND c.device = outbox.device)
                    """)
                counts.outboxEntries = connection.changes
                // Shared payloads (schema 5) outlive their entries until here: acknowledge
                // only deletes entries, so the ack path (every device, every few events)
                // does not pay for this. The subquery reads the partial index only.
                try connection.execute("""
                    DELETE FROM outbox_payloads WHERE id NOT IN
                    (SELECT payload_id FROM outbox WHERE payload_id IS NOT NULL)
                    """)
                counts.outboxPayloads = connection.changes
                return counts
            }
        }
    }
}
