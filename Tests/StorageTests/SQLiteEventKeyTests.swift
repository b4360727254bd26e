import Foundation
import XCTest
@testable import Storage

/// Migration 7: the processed-event key index starts with the eventID, so time-ordered
/// eventIDs from many devices share one index leaf per batch; lookups and the duplicate check
/// are unchanged, and a version-6 file migrates with its rows.
final class SQLiteEventKeyTests: StorageTestCase {
    /// A time-ordered eventID (milliseconds first, fixed width), as docs/protocol.md recommends.
    func timeOrderedID(_ n: Int) -> String {
        let hex = String(1_796_000_000_000 + n, radix: 16)
        return String(repeating: "0", count: 12 - hex.count) + hex + "-\(n)"
    }

    func keyColumns(_ store: SQLiteCallStore) throws -> [String] {
        try store.locked { connection in
            try connection.withUncached("SELECT name FROM pragma_index_info('processed_events_key') ORDER BY seqno") { statement in
                var names: [String] = []
                while try statement.step() { names.append(statement.string(0)) }
                return names
            }
        }
    }

    /// One step from `device` of `account` that opens call `callID` with event `eventID`.
    func step(_ callID: String, eventID: String, account: String, device: String) -> StepCommit {
        StepCommit(callID: callID, expectedRevision: nil, call: call(callID, revision: 1, participants: [account, "bob"]),
                   processedEvent: event(eventID, account: account, device: device), now: 1_000)
    }

    func testTheKeyStartsWithTheEventID() throws {
        let store = try openStore()
        XCTAssertEqual(try keyColumns(store), ["event_id", "account", "device"])
        XCTAssertGreaterThanOrEqual(SQLiteCallStore.schemaVersion, 7)
    }

    /// Key-index leaves that one batch of 16 steps from 16 devices writes, after 3,000 events
    /// of 200 devices, all with time-ordered eventIDs; with the schema-6 key
    /// (account, device, event_id) when `deviceFirst`.
    func keyLeavesWrittenByOneBatch(deviceFirst: Bool) throws -> Int {
        let path = directory.appendingPathComponent(deviceFirst ? "device-first.sqlite" : "event-first.sqlite").path
        let store = try SQLiteCallStore(path: path, backgroundCheckpoints: false)
        defer { store.close() }
        if deviceFirst {
            try store.locked { connection in
                try connection.executeScript("""
                    DROP INDEX processed_events_key;
                    CREATE UNIQUE INDEX processed_events_key ON processed_events(account, device, event_id);
                    """)
            }
        }
        var n = 0
        for _ in 0 ..< 150 {
            try store.batch {
                for _ in 0 ..< 20 {
                    n += 1
                    try store.commit(step("c\(n)", eventID: timeOrderedID(n), account: "acct-\(n % 200)", device: "phone"))
                }
            }
        }
        var reader = WALFrameReader(path: path + "-wal")
        try store.batch {
            for k in 0 ..< 16 {
                n += 1
                try store.commit(step("c\(n)", eventID: timeOrderedID(n), account: "acct-\(k * 12)", device: "phone"))
            }
        }
        let owners = try SQLitePagesPerStepTests.pageOwners(store)
        return Set(try reader.newFrames().map(\.page).filter { owners[$0] == "processed_events_key (leaf)" }).count
    }

    /// Keyed by account and device first, each device's entries sat together and the batch
    /// wrote a leaf per device; keyed by a time-ordered eventID first, the entries go to the
    /// right edge: one leaf, or up to 4 when that leaf splits (an index B-tree's split
    /// rebalances the new leaf with up to two siblings, btree.c balance_nonroot).
    func testABatchOfTimeOrderedEventsFromManyDevicesWritesFewKeyLeaves() throws {
        let eventFirst = try keyLeavesWrittenByOneBatch(deviceFirst: false)
        let deviceFirst = try keyLeavesWrittenByOneBatch(deviceFirst: true)
        print("key-index leaves written by a batch of 16 devices: event-first \(eventFirst), device-first \(deviceFirst)")
        XCTAssertGreaterThanOrEqual(eventFirst, 1)
        XCTAssertLessThanOrEqual(eventFirst, 4, "event-first key")
        XCTAssertGreaterThanOrEqual(deviceFirst, 10, "device-first key (schema 6)")
    }

    /// Lookups and duplicates through the new key, for events stored before the migration.
    func testAVersion6FileMigratesWithItsEvents() throws {
        var store: SQLiteCallStore? = try openStore()
        try store!.commit(step("c1", eventID: "e-old", account: "alice", device: "phone"))
        try store!.locked { connection in
            try connection.executeScript("""
                DROP INDEX processed_events_key;
                CREATE UNIQUE INDEX processed_events_key ON processed_events(account, device, event_id);
                PRAGMA user_version = 6;
                """)
        }
        store!.close()
        store = nil

        let migrated = try openStore()
        XCTAssertEqual(try keyColumns(migrated), ["event_id", "account", "device"])
        XCTAssertEqual(try migrated.processedEvent(account: "alice", device: "phone", eventID: "e-old")?.eventID, "e-old")
        XCTAssertNil(try migrated.processedEvent(account: "alice", device: "laptop", eventID: "e-old"))
        // The same eventID from another device is another event; from the same device, a duplicate.
        try migrated.commit(step("c2", eventID: "e-old", account: "alice", device: "laptop"))
        assertThrows(.duplicateEvent) { try migrated.commit(step("c3", eventID: "e-old", account: "alice", device: "phone")) }
    }
}
