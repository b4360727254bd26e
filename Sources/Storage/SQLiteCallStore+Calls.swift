import Foundation

/// Reads of calls and processed events.
extension SQLiteCallStore {
    public func loadCall(_ callID: String) throws -> StoredCall? {
        try locked { connection in
            // Two SELECTs (call row, participants): one snapshot.
            try connection.readTransaction { try Self.loadCall(callID, in: connection) }
        }
    }

    public func activeCalls(involving account: String) throws -> [StoredCall] {
        try locked { connection in try connection.readTransaction {
            let ids = try connection.with("""
                SELECT DISTINCT p.call_id FROM call_participants p INDEXED BY call_participants_live
                JOIN calls c ON c.call_id = p.call_id
                WHERE p.account = ?1 AND p.is_terminal = 0 AND c.is_terminal = 0
                ORDER BY p.call_id
                """) { statement -> [String] in
                try statement.bind(1, account)
                var ids: [String] = []
                while try statement.step() { ids.append(statement.string(0)) }
                return ids
            }
            return try ids.compactMap { try Self.loadCall($0, in: connection) }
        } }
    }

    public func processedEvent(account: String, device: String, eventID: String) throws -> ProcessedEvent? {
        try locked { connection in
            try connection.with("""
                SELECT payload_hash, result, processed_at FROM processed_events
                WHERE account = ?1 AND device = ?2 AND event_id = ?3
                """) { statement in
                try statement.bind(1, account)
                try statement.bind(2, device)
                try statement.bind(3, eventID)
                guard try statement.step() else { return nil }
                return ProcessedEvent(
                    account: account, device: device, eventID: eventID,
                    payloadHash: statement.string(0), result: statement.data(1),
                    processedAt: statement.int64(2))
            }
        }
    }

    static func loadCall(_ callID: String, in connection: SQLiteConnection) throws -> StoredCall? {
        let row = try connection.with("""
            SELECT revision, state, is_terminal, created_at, updated_at FROM calls WHERE call_id = ?1
            """) { statement -> StoredCall? in
            try statement.bind(1, callID)
            guard try statement.step() else { return nil }
            return StoredCall(
                callID: callID, revision: statement.int64(0), state: statement.data(1),
                isTerminal: statement.bool(2), participants: [],
                createdAt: statement.int64(3), updatedAt: statement.int64(4))
        }
        guard var call = row else { return nil }
        call.participants = try participants(of: callID, in: connection)
        call.descriptions = try connection.with("SELECT body FROM call_descriptions WHERE call_id = ?1") { statement in
            try statement.bind(1, callID)
            return try statement.step() ? statement.data(0) : Data()
        }
        return call
    }

    static func participants(of callID: String, in connection: SQLiteConnection) throws -> [String] {
        try participantRows(of: callID, in: connection).accounts
    }

    /// The participants in position order, and whether any row's terminal flag differs
    /// from `isTerminal` (nil: do not compare).
    static func participantRows(of callID: String, isTerminal: Bool? = nil,
                                in connection: SQLiteConnection) throws -> (accounts: [String], flagDiffers: Bool) {
        try connection.with("SELECT account, is_terminal FROM call_participants WHERE call_id = ?1 ORDER BY position") { statement in
            try statement.bind(1, callID)
            var accounts: [String] = []
            var differs = false
            while try statement.step() {
                accounts.append(statement.string(0))
                if let isTerminal, statement.bool(1) != isTerminal { differs = true }
            }
            return (accounts, differs)
        }
    }

    /// Current revision, or nil if the call does not exist.
    static func revision(of callID: String, in connection: SQLiteConnection) throws -> Int64? {
        try connection.with("SELECT revision FROM calls WHERE call_id = ?1") { statement in
            try statement.bind(1, callID)
            return try statement.step() ? statement.int64(0) : nil
        }
    }
}
