import Foundation
import XCTest
@testable import Storage

/// `StoredCall.descriptions` (schema 3): kept in `call_descriptions`, apart from the call row,
/// and written only by the steps that say they changed them.
final class SQLiteDescriptionsTests: StorageTestCase {
    private let offer = Data(("v=0\r\n" + String(repeating: "a=candidate:1 1 udp 1 192.0.2.1 5000 typ host\r\n", count: 60)).utf8)
    private let answer = Data("v=0\r\na=ice-ufrag:wxyz\r\n".utf8)

    private func descriptionRows(_ path: String) throws -> Int64? {
        let connection = try SQLiteConnection(path: path)
        defer { connection.close() }
        return try connection.scalarInt("SELECT count(*) FROM call_descriptions")
    }

    func testDescriptionsAreStoredApartAndWrittenOnlyWhenChanged() throws {
        let store = try openStore()
        var stored = call("c1", revision: 1)
        stored.descriptions = offer
        try store.commit(StepCommit(callID: "c1", expectedRevision: nil, call: stored, now: 1_000, descriptionsChanged: false))
        XCTAssertEqual(try store.loadCall("c1")?.descriptions, offer, "an insert always stores them")

        // A step that says nothing changed leaves the stored bodies alone, whatever it carries.
        var next = call("c1", revision: 2, state: "{\"step\":2}")
        next.descriptions = Data("ignored".utf8)
        try store.commit(StepCommit(callID: "c1", expectedRevision: 1, call: next, now: 1_001, descriptionsChanged: false))
        XCTAssertEqual(try store.loadCall("c1")?.state, Data("{\"step\":2}".utf8))
        XCTAssertEqual(try store.loadCall("c1")?.descriptions, offer)

        next = call("c1", revision: 3)
        next.descriptions = answer
        try store.commit(StepCommit(callID: "c1", expectedRevision: 2, call: next, now: 1_002))
        XCTAssertEqual(try openStore().loadCall("c1")?.descriptions, answer, "durable, seen by another connection")

        next = call("c1", revision: 4)
        try store.commit(StepCommit(callID: "c1", expectedRevision: 3, call: next, now: 1_003, descriptionsChanged: true))
        XCTAssertEqual(try store.loadCall("c1")?.descriptions, Data())
        XCTAssertEqual(try descriptionRows(databasePath), 0, "empty descriptions delete the row")
    }

    func testConflictingStepWritesNoDescriptions() throws {
        let store = try openStore()
        var first = call("c1", revision: 1)
        first.descriptions = offer
        try store.commit(StepCommit(callID: "c1", expectedRevision: nil, call: first, now: 1_000))
        var stale = call("c1", revision: 8)
        stale.descriptions = answer
        assertThrows(.revisionConflict(current: 1)) {
            try store.commit(StepCommit(callID: "c1", expectedRevision: 7, call: stale, now: 1_001))
        }
        XCTAssertEqual(try store.loadCall("c1")?.descriptions, offer)
    }

    func testPurgeRemovesDescriptionsOfPurgedCalls() throws {
        let store = try openStore()
        var ended = call("old", revision: 1, terminal: true, at: 10)
        ended.descriptions = offer
        var live = call("live", revision: 1, at: 10)
        live.descriptions = answer
        try store.commit(StepCommit(callID: "old", expectedRevision: nil, call: ended, now: 10))
        try store.commit(StepCommit(callID: "live", expectedRevision: nil, call: live, now: 10))
        XCTAssertEqual(try store.purge(terminalCallsUpdatedBefore: 100, eventsProcessedBefore: 0).calls, 1)
        XCTAssertEqual(try descriptionRows(databasePath), 1)
        XCTAssertEqual(try store.loadCall("live")?.descriptions, answer)
        // A new call reusing the purged ID starts without the old bodies.
        try store.commit(StepCommit(callID: "old", expectedRevision: nil, call: call("old", revision: 1), now: 200))
        XCTAssertEqual(try store.loadCall("old")?.descriptions, Data())
    }

    // MARK: Schema 8: a rowid table with a unique callID index.

    /// Bytes of cell payload in the B-tree `name` (dbstat, https://sqlite.org/dbstat.html).
    private func payloadBytes(_ name: String, in store: SQLiteCallStore) throws -> Int64 {
        try store.locked { connection in
            try connection.withUncached("SELECT IFNULL(sum(payload), 0) FROM dbstat WHERE name = ?1") { statement in
                try statement.bind(1, name)
                return try statement.step() ? statement.int64(0) : 0
            }
        }
    }

    /// The index that lookups, upserts and deletes search holds the callIDs only, so a search
    /// never compares (and copies) a body; the bodies live in the rowid table.
    func testLookupsSearchAnIndexOfCallIDsOnly() throws {
        let store = try openStore()
        let table = try store.locked { connection in
            try connection.withUncached("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'call_descriptions'") { statement in
                try statement.step() ? statement.string(0) : ""
            }
        }
        XCTAssertFalse(table.uppercased().contains("WITHOUT ROWID"), table)
        for index in 0..<40 {
            var stored = call("call-\(index)", revision: 1)
            stored.descriptions = offer + Data(" \(index)".utf8)
            try store.commit(StepCommit(callID: stored.callID, expectedRevision: nil, call: stored, now: 1_000))
        }
        let index = try store.locked { connection in
            try connection.withUncached("""
                SELECT name FROM pragma_index_list('call_descriptions') WHERE "unique" = 1
                """) { statement in try statement.step() ? statement.string(0) : "" }
        }
        XCTAssertFalse(index.isEmpty, "a unique index on call_id")
        let indexBytes = try payloadBytes(index, in: store), tableBytes = try payloadBytes("call_descriptions", in: store)
        XCTAssertLessThan(indexBytes, 40 * 32, "callIDs and rowids only")
        XCTAssertGreaterThan(tableBytes, Int64(40 * offer.count), "the bodies are in the table")
        XCTAssertEqual(try store.loadCall("call-7")?.descriptions, offer + Data(" 7".utf8))
    }

    /// A version-7 file (WITHOUT ROWID descriptions) migrates with its live calls' bodies
    /// (an ended call's are dropped, as the hub now does when a call ends), and the upsert,
    /// the delete and the purge work on the new table.
    func testAVersion7FileMigratesWithItsDescriptions() throws {
        var store: SQLiteCallStore? = try openStore()
        try store!.locked { connection in
            try connection.executeScript("""
                DROP TABLE call_descriptions;
                CREATE TABLE call_descriptions (
                    call_id TEXT NOT NULL PRIMARY KEY,
                    body    BLOB NOT NULL
                ) STRICT, WITHOUT ROWID;
                PRAGMA user_version = 7;
                """)
        }
        var live = call("live", revision: 1, at: 10)
        live.descriptions = offer
        var ended = call("ended", revision: 1, terminal: true, at: 10)
        ended.descriptions = answer
        try store!.commit(StepCommit(callID: "live", expectedRevision: nil, call: live, now: 10))
        try store!.commit(StepCommit(callID: "ended", expectedRevision: nil, call: ended, now: 10))
        store!.close()
        store = nil

        let migrated = try openStore()
        XCTAssertEqual(try migrated.locked { try $0.scalarInt("PRAGMA user_version") }, Int64(SQLiteCallStore.schemaVersion))
        XCTAssertEqual(try migrated.loadCall("live")?.descriptions, offer)
        XCTAssertEqual(try migrated.loadCall("ended")?.descriptions, Data(), "an ended call keeps no bodies")
        XCTAssertEqual(try descriptionRows(databasePath), 1)
        var next = call("live", revision: 2, at: 11)
        next.descriptions = answer
        try migrated.commit(StepCommit(callID: "live", expectedRevision: 1, call: next, now: 11))
        XCTAssertEqual(try migrated.loadCall("live")?.descriptions, answer, "the upsert replaces the body")
        XCTAssertEqual(try migrated.purge(terminalCallsUpdatedBefore: 100, eventsProcessedBefore: 0).calls, 1)
        XCTAssertEqual(try migrated.loadCall("live")?.descriptions, answer, "the purge leaves live calls alone")
        next = call("live", revision: 3, at: 12)
        try migrated.commit(StepCommit(callID: "live", expectedRevision: 2, call: next, now: 12, descriptionsChanged: true))
        XCTAssertEqual(try descriptionRows(databasePath), 0)
    }
}
