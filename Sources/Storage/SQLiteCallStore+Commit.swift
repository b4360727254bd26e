import Foundation

/// The atomic step commit.
extension SQLiteCallStore {
    @discardableResult
    public func commit(_ step: StepCommit) throws -> [OutboxEntry] {
        try Self.validate(step)
        return try locked { connection in
            try connection.immediateTransaction {
                // Checks before the first write, so that a step refused for a duplicate or a
                // stale revision writes nothing (inside a batch, steps have no savepoint of
                // their own, see `SQLiteConnection.immediateTransaction`).
                if let event = step.processedEvent {
                    if Self.revisionIsKnownCurrent(step, in: connection) {
                        // The revision check passed in memory, so the event's insert is the
                        // only check left: it writes nothing for a duplicate (the unique key
                        // refuses it), and one B-tree descent does both the lookup and the
                        // insert (a SELECT first was ~2.4 % of the hub's instructions per
                        // command, docs/benchmarks.md "Fewer statements per step").
                        guard try Self.insertEventIfNew(event, in: connection) else { throw StorageError.duplicateEvent }
                        try Self.writeCall(step, in: connection)
                    } else {
                        // The event first: a replayed event is reported as duplicateEvent even
                        // if the call has moved on since, so the hub answers with the stored
                        // result. A read under the write lock, so no other writer can record
                        // it before the insert.
                        if try Self.eventExists(event, in: connection) { throw StorageError.duplicateEvent }
                        // The revision compare-and-set: the step's first write, conditional in SQL.
                        try Self.writeCall(step, in: connection)
                        try Self.insertEvent(event, in: connection)
                    }
                } else {
                    try Self.writeCall(step, in: connection)
                }
                for key in step.cancelDeadlines {
                    try Self.deleteDeadline(callID: key.callID, kind: key.kind, in: connection)
                }
                for deadline in step.setDeadlines {
                    try Self.upsertDeadline(deadline, in: connection)
                }
                return try Self.append(step.outbox, now: step.now, in: connection)
            }
        }
    }

    static func validate(_ step: StepCommit) throws {
        guard let call = step.call else { return }
        if call.callID != step.callID {
            throw StorageError.invalidCommit("call ID \(call.callID) does not match step call ID \(step.callID)")
        }
        if let expected = step.expectedRevision, call.revision <= expected {
            throw StorageError.invalidCommit("new revision \(call.revision) is not greater than expected \(expected)")
        }
    }

    private static func eventExists(_ event: ProcessedEvent, in connection: SQLiteConnection) throws -> Bool {
        try connection.with("""
            SELECT 1 FROM processed_events WHERE account = ?1 AND device = ?2 AND event_id = ?3
            """) { statement in
            try statement.bind(1, event.account)
            try statement.bind(2, event.device)
            try statement.bind(3, event.eventID)
            return try statement.step()
        }
    }

    /// A plain INSERT: `eventExists` said no under the write lock, so the unique key can only
    /// fail here if the database changed under us, which is an error like any other.
    private static func insertEvent(_ event: ProcessedEvent, in connection: SQLiteConnection) throws {
        try connection.with("""
            INSERT INTO processed_events (account, device, event_id, payload_hash, result, processed_at)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6)
            """) { statement in
            try bindEvent(event, to: statement)
            try statement.run()
        }
    }

    /// Inserts the event unless its key is taken; false (nothing written) for a duplicate.
    private static func insertEventIfNew(_ event: ProcessedEvent, in connection: SQLiteConnection) throws -> Bool {
        try connection.with("""
            INSERT INTO processed_events (account, device, event_id, payload_hash, result, processed_at)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6)
            ON CONFLICT (account, device, event_id) DO NOTHING
            """) { statement in
            try bindEvent(event, to: statement)
            try statement.run()
        }
        return connection.changes == 1
    }

    /// The six values of a `processed_events` row, as ?1 … ?6.
    private static func bindEvent(_ event: ProcessedEvent, to statement: SQLiteStatement) throws {
        try statement.bind(1, event.account)
        try statement.bind(2, event.device)
        try statement.bind(3, event.eventID)
        try statement.bind(4, event.payloadHash)
        try statement.bind(5, event.result)
        try statement.bind(6, event.processedAt)
    }

    /// Whether the step's expected revision is the stored one by what this connection wrote
    /// last (``SQLiteConnection/knownCalls``, valid under the write lock). False when the
    /// connection does not know the call (a new call, one written by another connection or
    /// before a restart, an ended one): then SQL checks it.
    private static func revisionIsKnownCurrent(_ step: StepCommit, in connection: SQLiteConnection) -> Bool {
        guard let expected = step.expectedRevision, let known = connection.knownCalls[step.callID] else { return false }
        return known.revision == expected
    }

    /// The revision check and, if `step.call` is set, the conditional write. The check is the
    /// write's own WHERE / ON CONFLICT clause, evaluated under the transaction's write lock.
    private static func writeCall(_ step: StepCommit, in connection: SQLiteConnection) throws {
        guard let call = step.call else {
            // No write, but the step was computed from a state: it must still be current.
            let current = try connection.knownCalls[step.callID].map(\.revision) ?? revision(of: step.callID, in: connection)
            if current != step.expectedRevision { throw StorageError.revisionConflict(current: current) }
            return
        }
        if let expected = step.expectedRevision {
            try connection.with("""
                UPDATE calls SET revision = ?3, state = ?4, is_terminal = ?5, created_at = ?6, updated_at = ?7
                WHERE call_id = ?1 AND revision = ?2
                """) { statement in
                try statement.bind(1, call.callID)
                try statement.bind(2, expected)
                try bindCallValues(call, to: statement)
                try statement.run()
            }
            guard connection.changes == 1 else {
                throw StorageError.revisionConflict(current: try revision(of: call.callID, in: connection))
            }
            if step.descriptionsChanged { try writeDescriptions(of: call, in: connection) }
            let stored: (accounts: [String], flagDiffers: Bool)
            if let cached = connection.knownCalls[call.callID] {
                stored = (cached.accounts, cached.isTerminal != call.isTerminal)
            } else {
                stored = try participantRows(of: call.callID, isTerminal: call.isTerminal, in: connection)
            }
            if stored.accounts != call.participants {
                try connection.with("DELETE FROM call_participants WHERE call_id = ?1") { statement in
                    try statement.bind(1, call.callID)
                    try statement.run()
                }
                try insertParticipants(of: call, in: connection)
            } else if stored.flagDiffers {
                // The call ended (or, through a raw store user, came back): its rows leave
                // (or rejoin) the live-participant index.
                try connection.with("UPDATE call_participants SET is_terminal = ?2 WHERE call_id = ?1") { statement in
                    try statement.bind(1, call.callID)
                    try statement.bind(2, call.isTerminal)
                    try statement.run()
                }
            }
            remember(call, in: connection)
        } else {
            try connection.with("""
                INSERT INTO calls (call_id, revision, state, is_terminal, created_at, updated_at)
                VALUES (?1, ?3, ?4, ?5, ?6, ?7)
                ON CONFLICT (call_id) DO NOTHING
                """) { statement in
                try statement.bind(1, call.callID)
                try bindCallValues(call, to: statement)
                try statement.run()
            }
            guard connection.changes == 1 else {
                throw StorageError.revisionConflict(current: try revision(of: call.callID, in: connection))
            }
            try insertParticipants(of: call, in: connection)
            remember(call, in: connection)
            if !call.descriptions.isEmpty { try writeDescriptions(of: call, in: connection) }
        }
    }

    /// 10,000 live calls: far more than one hub holds in progress (each is a ringing or
    /// connected call); a connection that somehow collects more starts over.
    static let knownCallsLimit = 10_000

    /// Records the call just written (see `SQLiteConnection.knownCalls`).
    /// Ended calls leave: they are rarely written again.
    private static func remember(_ call: StoredCall, in connection: SQLiteConnection) {
        connection.derivedTouched = true
        if call.isTerminal {
            connection.knownCalls[call.callID] = nil
            return
        }
        if connection.knownCalls.count >= knownCallsLimit { connection.knownCalls.removeAll() }
        connection.knownCalls[call.callID] = KnownCall(revision: call.revision, accounts: call.participants, isTerminal: false)
    }

    /// Upserts the call's descriptions row, or deletes it when they are empty. An upsert
    /// on insert too: a row of a purged call with the same ID must not survive.
    private static func writeDescriptions(of call: StoredCall, in connection: SQLiteConnection) throws {
        if call.descriptions.isEmpty {
            try connection.with("DELETE FROM call_descriptions WHERE call_id = ?1") { statement in
                try statement.bind(1, call.callID)
                try statement.run()
            }
            return
        }
        try connection.with("""
            INSERT INTO call_descriptions (call_id, body) VALUES (?1, ?2)
            ON CONFLICT (call_id) DO UPDATE SET body = excluded.body
            """) { statement in
            try statement.bind(1, call.callID)
            try statement.bind(2, call.descriptions)
            try statement.run()
        }
    }

    private static func bindCallValues(_ call: StoredCall, to statement: SQLiteStatement) throws {
        try statement.bind(3, call.revision)
        try statement.bind(4, call.state)
        try statement.bind(5, call.isTerminal)
        try statement.bind(6, call.createdAt)
        try statement.bind(7, call.updatedAt)
    }

    private static func insertParticipants(of call: StoredCall, in connection: SQLiteConnection) throws {
        for (position, account) in call.participants.enumerated() {
            try connection.with("""
                INSERT INTO call_participants (call_id, position, account, is_terminal) VALUES (?1, ?2, ?3, ?4)
                """) { statement in
                try statement.bind(1, call.callID)
                try statement.bind(2, Int64(position))
                try statement.bind(3, account)
                try statement.bind(4, call.isTerminal)
                try statement.run()
            }
        }
    }
}
