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
        var assigned: [StoredDeviceKey: Int64] = [:]
        for (device, payload) in outbox {
            let seq = (assigned[device] ?? index.lastSeq(of: device)) + 1
            assigned[device] = seq
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

    /// The connection's outbox index, rebuilt from the log and the cursors if it was dropped.
    /// Call inside a transaction (the rebuild must read one snapshot) after
    /// `dropDerivedStateIfOthersCommitted` (taking the write lock does that).
    static func outboxIndex(in connection: SQLiteConnection) throws -> OutboxIndex {
        if let index = connection.outboxIndex { return index }
        let index = OutboxIndex()
        try connection.with("SELECT account, device, last_seq, acked_seq FROM outbox_cursors") { statement in
            while try statement.step() {
                index.loadCursor(StoredDeviceKey(account: statement.string(0), device: statement.string(1)),
                                 last: statement.int64(2), acked: statement.int64(3))
            }
        }
        try connection.with("SELECT id, entries FROM outbox_log ORDER BY id") { statement in
            while try statement.step() {
                index.loadRow(statement.int64(0), try OutboxLogRecord(decoding: statement.data(1)))
            }
        }
        index.finishLoading()
        connection.outboxIndex = index
        return index
    }

    /// The device's last assigned seq (0 if none).
    static func lastSeq(of device: StoredDeviceKey, in connection: SQLiteConnection) throws -> Int64 {
        try outboxIndex(in: connection).lastSeq(of: device)
    }
}
