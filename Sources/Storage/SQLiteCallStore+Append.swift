import Foundation

/// Outbox appends (schema 6): one `outbox_log` row per step, holding all of the step's
/// entries as an `OutboxLogRecord` (each distinct payload once), appended at the table's
/// rightmost leaf. A step's entries thus cost one B-tree insert next to the previous step's
/// row, instead of one leaf per recipient device in a table keyed by device, each dirtied
/// again by the acknowledgement's delete (schema ≤ 5: the outbox, its shared payloads and
/// their overflow pages were 22 % of the WAL frames of the setup replay,
/// `SQLiteBenchmarkTests.testSetupReplay`; the log is 4 %).
///
/// Seqs come from the connection's `OutboxIndex`, rebuilt from the log and the cursors
/// whenever another connection may have changed them, so assignment under the write lock
/// stays dense across processes. A device's last seq is derived:
///
///     last seq = max(outbox_cursors.last_seq, outbox_cursors.acked_seq, max seq in the log)
///
/// Rows leave only once all their entries are at or below their device's `acked_seq`, and
/// `acknowledge` clamps `acked_seq` to the last seq, so seqs are never reused.
extension SQLiteCallStore {
    /// Assigns the next seqs and stores the entries, in `outbox` order.
    static func append(_ outbox: [(StoredDeviceKey, Data)], now: Int64, in connection: SQLiteConnection) throws -> [OutboxEntry] {
        guard !outbox.isEmpty else { return [] }
        let index = try outboxIndex(in: connection)
        var entries: [OutboxEntry] = []
        entries.reserveCapacity(outbox.count)
        // The seqs this step took so far, per device. A step has a handful of recipients:
        // a linear search compares a few short strings where a dictionary hashed two per
        // lookup (the device-key lookups were ~10 % of a storage replay's instructions).
        var assigned: [(device: StoredDeviceKey, seq: Int64)] = []
        assigned.reserveCapacity(outbox.count)
        for (device, payload) in outbox {
            let seq: Int64
            if let slot = assigned.firstIndex(where: { $0.device == device }) {
                seq = assigned[slot].seq + 1
                assigned[slot].seq = seq
            } else if let last = index.knownLastSeq(of: device) {
                seq = last + 1
                assigned.append((device, seq))
            } else {
                try knowCursor(of: device, index: index, in: connection)
                seq = index.lastSeq(of: device) + 1
                assigned.append((device, seq))
            }
            entries.append(OutboxEntry(device: device, seq: seq, payload: payload, createdAt: now))
        }
        let record = OutboxLogRecord(entries: entries)
        try connection.with("INSERT INTO outbox_log (created_at, entries) VALUES (?1, ?2)") { statement in
            try statement.bind(1, now)
            try statement.bind(2, record.encoded())
            try statement.run()
        }
        connection.derivedTouched = true
        index.appended(row: connection.lastInsertRowID, record)
        return entries
    }

    /// The connection's outbox index, rebuilt from the log if it was dropped: the log's rows
    /// (the backlog) and the cursors of the devices that have entries in them; other devices'
    /// cursors are read on first use (``knowCursor(of:index:in:)``).
    /// Call inside a transaction (the rebuild must read one snapshot) after
    /// `dropDerivedStateIfOthersCommitted` (taking the write lock does that).
    static func outboxIndex(in connection: SQLiteConnection) throws -> OutboxIndex {
        if let index = connection.outboxIndex { return index }
        let index = OutboxIndex(settledLimit: connection.outboxSettledLimit ?? OutboxIndex.defaultSettledLimit)
        index.beginLoading()
        var rows: [(Int64, OutboxLogRecord)] = []
        try connection.with("SELECT id, entries FROM outbox_log ORDER BY id") { statement in
            while try statement.step() {
                rows.append((statement.int64(0), try OutboxLogRecord(decoding: statement.data(1))))
            }
        }
        for (_, record) in rows {
            for entry in record.entries where !index.isKnown(entry.device) {
                try knowCursor(of: entry.device, index: index, in: connection)
            }
        }
        for (row, record) in rows { index.loadRow(row, record) }
        index.finishLoading()
        connection.outboxIndex = index
        return index
    }

    /// Reads `device`'s cursor row into `index` unless it is known already (no row: 0, 0).
    static func knowCursor(of device: StoredDeviceKey, index: OutboxIndex, in connection: SQLiteConnection) throws {
        guard !index.isKnown(device) else { return }
        let (last, acked) = try connection.with("SELECT last_seq, acked_seq FROM outbox_cursors WHERE account = ?1 AND device = ?2") { statement -> (Int64, Int64) in
            try statement.bind(1, device.account)
            try statement.bind(2, device.device)
            return try statement.step() ? (statement.int64(0), statement.int64(1)) : (0, 0)
        }
        index.loadCursor(device, last: last, acked: acked)
    }

    /// The device's last assigned seq (0 if none).
    static func lastSeq(of device: StoredDeviceKey, in connection: SQLiteConnection) throws -> Int64 {
        let index = try outboxIndex(in: connection)
        try knowCursor(of: device, index: index, in: connection)
        return index.lastSeq(of: device)
    }
}
