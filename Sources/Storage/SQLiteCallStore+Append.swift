import Foundation

/// Outbox appends: seqs from a per-connection cache, one INSERT per step.
///
/// A device's last assigned seq is not stored as a counter that every append bumps (one
/// more upserted row, i.e. one more statement and dirty page per recipient of every step);
/// it is derived: entries are only ever deleted up to the device's `acked_seq` (by
/// `acknowledge` and `purge`), and `acknowledge` clamps `acked_seq` to the last seq, so
///
///     last seq = max(outbox_cursors.last_seq, outbox_cursors.acked_seq, max(outbox.seq))
///
/// (`last_seq` is what schema ≤ 3 counted and what `acknowledge` still records). The
/// connection caches it per device (`SQLiteConnection.seqCache`) while no other connection
/// has committed and nothing was rolled back.
extension SQLiteCallStore {
    /// 8 rows per INSERT: more than one step delivers to in a 1:1 call (the callee's devices
    /// and the caller's other devices); a longer list is split, so at most 8 statement texts
    /// are ever cached.
    static let rowsPerInsert = 8

    /// Assigns the next seqs and stores the entries, in `outbox` order.
    static func append(_ outbox: [(StoredDeviceKey, Data)], now: Int64, in connection: SQLiteConnection) throws -> [OutboxEntry] {
        guard !outbox.isEmpty else { return [] }
        var entries: [OutboxEntry] = []
        entries.reserveCapacity(outbox.count)
        for (device, payload) in outbox {
            let seq = try lastSeq(of: device, in: connection) + 1
            connection.seqCache[device] = seq
            entries.append(OutboxEntry(device: device, seq: seq, payload: payload, createdAt: now))
        }
        var start = 0
        while start < entries.count {
            let chunk = entries[start..<min(start + rowsPerInsert, entries.count)]
            try connection.with(insertSQL(rows: chunk.count)) { statement in
                try statement.bind(1, now)
                var index: Int32 = 2
                for entry in chunk {
                    try statement.bind(index, entry.device.account)
                    try statement.bind(index + 1, entry.device.device)
                    try statement.bind(index + 2, entry.seq)
                    try statement.bind(index + 3, entry.payload)
                    index += 4
                }
                try statement.run()
            }
            start += chunk.count
        }
        return entries
    }

    /// `INSERT … VALUES (?2, ?3, ?4, ?5, ?1), (?6, …, ?1), …`: `?1` is the shared time.
    static func insertSQL(rows: Int) -> String {
        let values = (0..<rows).map { row -> String in
            let base = 2 + row * 4
            return "(?\(base), ?\(base + 1), ?\(base + 2), ?\(base + 3), ?1)"
        }
        return "INSERT INTO outbox (account, device, seq, payload, created_at) VALUES " + values.joined(separator: ", ")
    }

    /// The device's last assigned seq (0 if none), from the cache or derived (see above).
    static func lastSeq(of device: StoredDeviceKey, in connection: SQLiteConnection) throws -> Int64 {
        if connection.holdsWriteLock, let cached = connection.seqCache[device] { return cached }
        let seq = try connection.with("""
            SELECT MAX(
                IFNULL((SELECT MAX(last_seq, acked_seq) FROM outbox_cursors WHERE account = ?1 AND device = ?2), 0),
                IFNULL((SELECT seq FROM outbox WHERE account = ?1 AND device = ?2 ORDER BY seq DESC LIMIT 1), 0))
            """) { statement -> Int64 in
            try statement.bind(1, device.account)
            try statement.bind(2, device.device)
            return try statement.step() ? statement.int64(0) : 0
        }
        // Only under the write lock: outside a write transaction another connection may
        // append right after this read.
        if connection.holdsWriteLock { connection.seqCache[device] = seq }
        return seq
    }
}
