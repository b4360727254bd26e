import Foundation

/// Deadline queries and the per-row writes used by `commit`.
extension SQLiteCallStore {
    public func dueDeadlines(atOrBefore now: Int64, limit: Int) throws -> [Deadline] {
        guard limit > 0 else { return [] }  // SQLite treats a negative LIMIT as "no limit".
        return try locked { connection in
            try connection.with("""
                SELECT call_id, kind, due_at FROM deadlines WHERE due_at <= ?1
                ORDER BY due_at, call_id, kind LIMIT ?2
                """) { statement in
                try statement.bind(1, now)
                try statement.bind(2, Int64(limit))
                return try Self.readDeadlines(statement)
            }
        }
    }

    public func nextDeadline() throws -> Deadline? {
        try locked { connection in
            try connection.with("SELECT call_id, kind, due_at FROM deadlines ORDER BY due_at, call_id, kind LIMIT 1") {
                try Self.readDeadlines($0).first
            }
        }
    }

    public func allDeadlines() throws -> [Deadline] {
        try locked { connection in
            try connection.with("SELECT call_id, kind, due_at FROM deadlines ORDER BY due_at, call_id, kind") {
                try Self.readDeadlines($0)
            }
        }
    }

    private static func readDeadlines(_ statement: SQLiteStatement) throws -> [Deadline] {
        var deadlines: [Deadline] = []
        while try statement.step() {
            deadlines.append(Deadline(callID: statement.string(0), kind: statement.string(1), dueAt: statement.int64(2)))
        }
        return deadlines
    }

    static func upsertDeadline(_ deadline: Deadline, in connection: SQLiteConnection) throws {
        try connection.with("""
            INSERT INTO deadlines (call_id, kind, due_at) VALUES (?1, ?2, ?3)
            ON CONFLICT (call_id, kind) DO UPDATE SET due_at = excluded.due_at
            """) { statement in
            try statement.bind(1, deadline.callID)
            try statement.bind(2, deadline.kind)
            try statement.bind(3, deadline.dueAt)
            try statement.run()
        }
    }

    static func deleteDeadline(callID: String, kind: String, in connection: SQLiteConnection) throws {
        try connection.with("DELETE FROM deadlines WHERE call_id = ?1 AND kind = ?2") { statement in
            try statement.bind(1, callID)
            try statement.bind(2, kind)
            try statement.run()
        }
    }
}
