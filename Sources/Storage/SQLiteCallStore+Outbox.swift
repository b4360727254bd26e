import Foundation

/// Outbox reads, acknowledgement, and the device registry.
extension SQLiteCallStore {
    public func outbox(for device: StoredDeviceKey, after seq: Int64, limit: Int) throws -> [OutboxEntry] {
        guard limit > 0 else { return [] }  // SQLite treats a negative LIMIT as "no limit".
        return try locked { connection in
            try connection.readTransaction {
                if !connection.holdsWriteLock { try connection.dropDerivedStateIfOthersCommitted() }
                let locations = try Self.outboxIndex(in: connection).pending(of: device, after: seq, limit: limit)
                var entries: [OutboxEntry] = []
                entries.reserveCapacity(locations.count)
                var current: (row: Int64, record: OutboxLogRecord, createdAt: Int64)?
                for location in locations {
                    if current?.row != location.row {
                        current = try Self.logRow(location.row, in: connection)
                    }
                    guard let current, Int(location.slot) < current.record.entries.count else {
                        throw StorageError.corrupt("outbox log row \(location.row) is missing")
                    }
                    let entry = current.record.entry(Int(location.slot), createdAt: current.createdAt)
                    guard entry.device == device, entry.seq == location.seq else {
                        throw StorageError.corrupt("outbox log row \(location.row) does not hold seq \(location.seq)")
                    }
                    entries.append(entry)
                }
                return entries
            }
        }
    }

    private static func logRow(_ row: Int64, in connection: SQLiteConnection) throws -> (row: Int64, record: OutboxLogRecord, createdAt: Int64)? {
        try connection.with("SELECT created_at, entries FROM outbox_log WHERE id = ?1") { statement in
            try statement.bind(1, row)
            guard try statement.step() else { return nil }
            return (row, try OutboxLogRecord(decoding: statement.data(1)), statement.int64(0))
        }
    }

    public func lastSeq(for device: StoredDeviceKey) throws -> Int64 {
        try locked { connection in
            try connection.readTransaction {
                if !connection.holdsWriteLock { try connection.dropDerivedStateIfOthersCommitted() }
                return try Self.lastSeq(of: device, in: connection)
            }
        }
    }

    public func acknowledge(device: StoredDeviceKey, upTo seq: Int64) throws {
        try locked { connection in
            try connection.immediateTransaction {
                // Clamped to the last seq: acknowledging seqs not yet assigned must not hide
                // them later, and `append` derives the last seq from `acked_seq` once the
                // entries are trimmed. The cursor row is created by the first ack; an ack
                // that moves nothing writes nothing.
                let index = try Self.outboxIndex(in: connection)
                try Self.knowCursor(of: device, index: index, in: connection)
                let last = index.lastSeq(of: device)
                let acked = min(seq, last)
                guard acked > 0, acked > index.ackedSeq(of: device) else { return }
                try connection.with("""
                    INSERT INTO outbox_cursors (account, device, last_seq, acked_seq) VALUES (?1, ?2, ?4, ?3)
                    ON CONFLICT (account, device) DO UPDATE
                    SET acked_seq = MAX(acked_seq, excluded.acked_seq), last_seq = MAX(last_seq, excluded.last_seq)
                    """) { statement in
                    try statement.bind(1, device.account)
                    try statement.bind(2, device.device)
                    try statement.bind(3, acked)
                    try statement.bind(4, last)
                    try statement.run()
                }
                connection.derivedTouched = true
                index.deferDeletion(of: index.acknowledged(device, upTo: acked))
                try Self.deleteAcknowledgedRowsIfMany(index, in: connection)
            }
        }
    }

    /// 64 rows: about 5 setups' worth of log rows (12 steps each), ~100 KB of rows in ~25
    /// leaves, deleted in one go. Deleted as they emptied, each acknowledgement's COMMIT
    /// wrote the log leaves holding its rows (rows of the setups in flight share leaves), the
    /// interior page above them and the freelist pages: 11.6 WAL frames per acknowledgement
    /// of a setup's 6 devices in the replay (`SQLitePagesPerStepTests`, docs/benchmarks.md
    /// "Pages per committed step"), of which the cursor row is 1. Deleted together, rows
    /// acknowledged in order empty whole leaves, which go to the freelist unwritten.
    /// Bounded so the deletion stays a fraction of a millisecond inside the step that
    /// carries it, and the rows wait for at most this many more.
    static let acknowledgedRowsPerDeletion = 64

    /// Deletes the log rows whose entries were all acknowledged (`OutboxIndex.orphanRows`),
    /// oldest first, once there are `acknowledgedRowsPerDeletion` of them. Until then they
    /// are only garbage: every entry in them is at or below its device's `acked_seq`, which
    /// the acknowledgement's transaction stored, so no read returns them and a rebuild finds
    /// them orphaned again; `purge` deletes what is left. At most twice that many per call:
    /// all of them in steady state (one acknowledgement empties a few rows, not a group's
    /// worth), while a large backlog found by a rebuild (a migrated file) is worked off two
    /// groups per acknowledgement instead of in one.
    static func deleteAcknowledgedRowsIfMany(_ index: OutboxIndex, in connection: SQLiteConnection) throws {
        let threshold = max(1, connection.acknowledgedRowsPerDeletion ?? acknowledgedRowsPerDeletion)
        guard index.orphanRows.count >= threshold else { return }
        connection.derivedTouched = true
        // Runs of consecutive row IDs (acknowledged in order, they mostly are) go in one
        // range DELETE: one seek and one statement per run instead of per row.
        let rows = Array(index.orphanRows.sorted().prefix(2 * threshold))
        var start = 0
        while start < rows.count {
            var end = start
            while end + 1 < rows.count, rows[end + 1] == rows[end] + 1 { end += 1 }
            try deleteLogRows(rows[start] ... rows[end], in: connection)
            for row in rows[start ... end] { index.removedOrphan(row) }
            start = end + 1
        }
    }

    /// Deletes the log rows whose IDs are in `ids` (the caller passes runs of rows it knows
    /// to be orphaned, so nothing else is in the range).
    static func deleteLogRows(_ ids: ClosedRange<Int64>, in connection: SQLiteConnection) throws {
        guard ids.lowerBound < ids.upperBound else { return try deleteLogRow(ids.lowerBound, in: connection) }
        try connection.with("DELETE FROM outbox_log WHERE id BETWEEN ?1 AND ?2") { statement in
            try statement.bind(1, ids.lowerBound)
            try statement.bind(2, ids.upperBound)
            try statement.run()
        }
    }

    static func deleteLogRow(_ row: Int64, in connection: SQLiteConnection) throws {
        try connection.with("DELETE FROM outbox_log WHERE id = ?1") { statement in
            try statement.bind(1, row)
            try statement.run()
        }
    }

    public func registerDevice(_ device: StoredDeviceKey, now: Int64) throws {
        try locked { connection in
            try connection.with("""
                INSERT INTO devices (account, device, registered_at, last_seen_at) VALUES (?1, ?2, ?3, ?3)
                ON CONFLICT (account, device) DO UPDATE SET last_seen_at = excluded.last_seen_at
                """) { statement in
                try statement.bind(1, device.account)
                try statement.bind(2, device.device)
                try statement.bind(3, now)
                try statement.run()
            }
        }
    }

    public func devices(of account: String) throws -> [String] {
        try locked { connection in
            try connection.with("SELECT device FROM devices WHERE account = ?1 ORDER BY device") { statement in
                try statement.bind(1, account)
                var devices: [String] = []
                while try statement.step() { devices.append(statement.string(0)) }
                return devices
            }
        }
    }
}
