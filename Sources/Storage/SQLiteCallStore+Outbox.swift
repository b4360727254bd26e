import Foundation

/// Outbox reads, acknowledgement, and the device registry.
extension SQLiteCallStore {
    public func outbox(for device: StoredDeviceKey, after seq: Int64, limit: Int) throws -> [OutboxEntry] {
        guard limit > 0 else { return [] }  // SQLite treats a negative LIMIT as "no limit".
        return try locked { connection in
            try connection.with("""
                SELECT o.seq, IFNULL(p.body, o.payload), o.created_at FROM outbox o
                LEFT JOIN outbox_payloads p ON p.id = o.payload_id
                WHERE o.account = ?1 AND o.device = ?2 AND o.seq > ?3
                ORDER BY o.seq LIMIT ?4
                """) { statement in
                try statement.bind(1, device.account)
                try statement.bind(2, device.device)
                try statement.bind(3, seq)
                try statement.bind(4, Int64(limit))
                var entries: [OutboxEntry] = []
                while try statement.step() {
                    entries.append(OutboxEntry(
                        device: device, seq: statement.int64(0), payload: statement.data(1),
                        createdAt: statement.int64(2)))
                }
                return entries
            }
        }
    }

    public func lastSeq(for device: StoredDeviceKey) throws -> Int64 {
        try locked { connection in
            try Self.lastSeq(of: device, in: connection)
        }
    }

    public func acknowledge(device: StoredDeviceKey, upTo seq: Int64) throws {
        try locked { connection in
            try connection.immediateTransaction {
                // Clamped to the last seq: acknowledging seqs not yet assigned must not hide
                // them later, and `append` derives the last seq from `acked_seq` once the
                // entries are trimmed. The cursor row is created by the first ack.
                let last = try Self.lastSeq(of: device, in: connection)
                let acked = min(seq, last)
                guard acked > 0 else { return }
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
                try connection.with("""
                    DELETE FROM outbox WHERE account = ?1 AND device = ?2
                    AND seq <= (SELECT acked_seq FROM outbox_cursors WHERE account = ?1 AND device = ?2)
                    """) { statement in
                    try statement.bind(1, device.account)
                    try statement.bind(2, device.device)
                    try statement.run()
                }
            }
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
