import Foundation

/// Outbox appends: seqs from a per-connection cache, one INSERT per step, payloads sent to
/// several devices stored once.
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

    /// 1 KiB: payloads at least this large that one step sends to several devices are stored
    /// once (`outbox_payloads`, schema 5). In the WITHOUT ROWID outbox a record over ~1 KB
    /// (the index B-tree's local limit, (4096 − 12) × 64 / 255 − 23 = 1,002 bytes) spills to
    /// an overflow chain of its own per copy; smaller ones stay inline, where a shared row
    /// would cost one more insert than it saves.
    static let sharedPayloadMinBytes = 1024

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
        let shared = try storeSharedPayloads(outbox, in: connection)
        var start = 0
        while start < entries.count {
            let end = min(start + rowsPerInsert, entries.count)
            try connection.with(insertSQL(rows: end - start)) { statement in
                try statement.bind(1, now)
                var index: Int32 = 2
                for position in start..<end {
                    let entry = entries[position]
                    try statement.bind(index, entry.device.account)
                    try statement.bind(index + 1, entry.device.device)
                    try statement.bind(index + 2, entry.seq)
                    if let id = shared[position] {
                        try statement.bind(index + 3, Data())
                        try statement.bind(index + 4, id)
                    } else {
                        try statement.bind(index + 3, entry.payload)
                        try statement.bindNull(index + 4)
                    }
                    index += 5
                }
                try statement.run()
            }
            start = end
        }
        return entries
    }

    /// Stores each payload of at least ``sharedPayloadMinBytes`` that appears more than once
    /// in `outbox` once, and returns per entry the ID of its shared payload (nil: inline).
    /// Quadratic in the entries of one step, which are a handful (the devices of two accounts).
    static func storeSharedPayloads(_ outbox: [(StoredDeviceKey, Data)], in connection: SQLiteConnection) throws -> [Int64?] {
        var shared = [Int64?](repeating: nil, count: outbox.count)
        for first in outbox.indices where shared[first] == nil && outbox[first].1.count >= sharedPayloadMinBytes {
            let payload = outbox[first].1
            let twins = (first + 1..<outbox.count).filter { shared[$0] == nil && outbox[$0].1 == payload }
            guard !twins.isEmpty else { continue }
            try connection.with("INSERT INTO outbox_payloads (body) VALUES (?1)") { statement in
                try statement.bind(1, payload)
                try statement.run()
            }
            let id = connection.lastInsertRowID
            shared[first] = id
            for twin in twins { shared[twin] = id }
        }
        return shared
    }

    /// `INSERT … VALUES (?2, ?3, ?4, ?5, ?1, ?6), (?7, …, ?1, ?11), …`: `?1` is the shared
    /// time; the last value of a row is its shared payload's ID (NULL: inline payload).
    static func insertSQL(rows: Int) -> String {
        let values = (0..<rows).map { row -> String in
            let base = 2 + row * 5
            return "(?\(base), ?\(base + 1), ?\(base + 2), ?\(base + 3), ?1, ?\(base + 4))"
        }
        return "INSERT INTO outbox (account, device, seq, payload, created_at, payload_id) VALUES "
            + values.joined(separator: ", ")
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
