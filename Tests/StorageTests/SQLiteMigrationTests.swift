import Foundation
import XCTest
@testable import Storage

/// Migration 2 (terminal flag on participant rows, live-participant index) on a database
/// written by schema 1, and the flag kept in step by commits.
final class SQLiteMigrationTests: StorageTestCase {
    /// A schema-1 file: migration 1 only, rows written with schema 1's columns.
    private func writeVersion1Database() throws {
        let connection = try SQLiteConnection(path: databasePath)
        defer { connection.close() }
        try connection.executeScript(SQLiteMigrations.steps[0])
        try connection.executeScript("""
            PRAGMA user_version = 1;
            INSERT INTO calls VALUES ('live', 1, x'7b7d', 0, 1000, 1000);
            INSERT INTO calls VALUES ('ended', 3, x'7b7d', 1, 1000, 2000);
            INSERT INTO call_participants VALUES ('live', 0, 'alice'), ('live', 1, 'bob');
            INSERT INTO call_participants VALUES ('ended', 0, 'alice'), ('ended', 1, 'carol');
            """)
    }

    func testVersion1DatabaseMigratesWithTerminalFlagsFromCalls() throws {
        try writeVersion1Database()
        let store = try openStore()
        XCTAssertEqual(try store.activeCalls(involving: "alice").map(\.callID), ["live"])
        XCTAssertEqual(try store.activeCalls(involving: "carol"), [])
        XCTAssertEqual(try store.loadCall("ended")?.participants, ["alice", "carol"])
        store.close()
        let connection = try SQLiteConnection(path: databasePath)
        defer { connection.close() }
        XCTAssertEqual(try connection.scalarInt("PRAGMA user_version"), Int64(SQLiteCallStore.schemaVersion))
        XCTAssertEqual(try connection.scalarInt("SELECT count(*) FROM call_participants WHERE is_terminal = 1"), 2)
        XCTAssertEqual(try connection.scalarInt("SELECT count(*) FROM sqlite_master WHERE name = 'call_participants_account'"), 0)
    }

    func testEndingACallFlagsItsParticipantRowsAndLookupUsesTheLiveIndex() throws {
        let store = try openStore()
        try insert("c1", into: store, participants: ["alice", "bob"])
        XCTAssertEqual(try store.activeCalls(involving: "bob").map(\.callID), ["c1"])
        // Same participants, now terminal: only the flag changes.
        try store.commit(StepCommit(callID: "c1", expectedRevision: 1, call: call("c1", revision: 2, terminal: true), now: 0))
        XCTAssertEqual(try store.activeCalls(involving: "bob"), [])
        XCTAssertEqual(try store.loadCall("c1")?.participants, ["alice", "bob"])
        // A raw store user may write a non-terminal state again: the rows rejoin the index.
        try store.commit(StepCommit(callID: "c1", expectedRevision: 2, call: call("c1", revision: 3), now: 0))
        XCTAssertEqual(try store.activeCalls(involving: "bob").map(\.callID), ["c1"])
        // Inserted terminal (a tombstone written in one step): never live.
        try store.commit(StepCommit(callID: "c2", expectedRevision: nil, call: call("c2", revision: 1, terminal: true), now: 0))
        XCTAssertEqual(try store.activeCalls(involving: "alice").map(\.callID), ["c1"])
        store.close()

        let connection = try SQLiteConnection(path: databasePath)
        defer { connection.close() }
        XCTAssertEqual(try connection.scalarInt("SELECT count(*) FROM call_participants WHERE is_terminal = 1"), 2)
        let plan = try connection.with("""
            EXPLAIN QUERY PLAN SELECT DISTINCT p.call_id FROM call_participants p
            JOIN calls c ON c.call_id = p.call_id WHERE p.account = 'a' AND p.is_terminal = 0 AND c.is_terminal = 0
            ORDER BY p.call_id
            """) { statement -> String in
            var rows: [String] = []
            while try statement.step() { rows.append(statement.string(3)) }
            return rows.joined(separator: "\n")
        }
        XCTAssertTrue(plan.contains("call_participants_live"), plan)
    }
}
