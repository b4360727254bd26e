import Foundation
import XCTest
@testable import Storage

/// Schema 6: one `outbox_log` row per step with all its entries (a payload sent to several
/// devices stored once), the in-memory index rebuilt when another connection wrote or a
/// change was rolled back, and migration of a schema-4/5 backlog.
final class SQLiteOutboxLogTests: StorageTestCase {
    /// ~3 KB, like a `call.incoming` with its SDP offer.
    private func big(_ tag: String) -> Data {
        Data((tag + String(repeating: "a=candidate:1 1 udp 2122260223 192.0.2.1 54400 typ host\r\n", count: 50)).utf8)
    }

    private let bobLaptop = StoredDeviceKey(account: "bob", device: "laptop")
    private let bobTablet = StoredDeviceKey(account: "bob", device: "tablet")

    /// `store` deletes each log row in the acknowledgement that empties it (the default
    /// waits for `SQLiteCallStore.acknowledgedRowsPerDeletion` of them).
    @discardableResult
    private func deletingAtOnce(_ store: SQLiteCallStore) throws -> SQLiteCallStore {
        try store.locked { $0.acknowledgedRowsPerDeletion = 1 }
        return store
    }

    private func count(_ sql: String) throws -> Int64? {
        let connection = try SQLiteConnection(path: databasePath)
        defer { connection.close() }
        return try connection.scalarInt(sql)
    }

    func testStepIsOneRowAndAPayloadForSeveralDevicesIsStoredOnce() throws {
        let store = try openStore()
        let incoming = big("incoming")
        let small = Data("{\"v\":1,\"type\":\"call.ringing\"}".utf8)
        let entries = try store.commit(StepCommit(
            callID: "c1", expectedRevision: nil,
            outbox: [(bobPhone, incoming), (bobLaptop, incoming), (aliceLaptop, small), (bobTablet, incoming),
                     (alicePhone, small)],
            now: 7))
        XCTAssertEqual(entries.map(\.payload), [incoming, incoming, small, incoming, small])
        XCTAssertEqual(entries.map(\.seq), [1, 1, 1, 1, 1])
        for device in [bobPhone, bobLaptop, bobTablet] {
            XCTAssertEqual(try store.outbox(for: device, after: 0, limit: 10),
                           [OutboxEntry(device: device, seq: 1, payload: incoming, createdAt: 7)])
        }
        XCTAssertEqual(try store.outbox(for: aliceLaptop, after: 0, limit: 10).map(\.payload), [small])
        XCTAssertEqual(try count("SELECT count(*) FROM outbox_log"), 1)
        let stored = try XCTUnwrap(try count("SELECT length(entries) FROM outbox_log"))
        XCTAssertLessThan(stored, Int64(incoming.count + small.count + 200))
        store.close()
    }

    func testRowLeavesOnceEveryDeviceAcknowledgedItsEntries() throws {
        let store = try deletingAtOnce(openStore())
        let incoming = big("incoming")
        try store.commit(StepCommit(callID: "c1", expectedRevision: nil,
                                    outbox: [(bobPhone, incoming), (bobLaptop, incoming)], now: 1))
        try store.commit(StepCommit(callID: "c1", expectedRevision: nil, outbox: [(bobPhone, Data("2".utf8))], now: 2))
        try store.acknowledge(device: bobPhone, upTo: 2)
        XCTAssertEqual(try count("SELECT count(*) FROM outbox_log"), 1)
        // The laptop never acked: it still resumes with the whole payload, also after reopening.
        store.close()
        let reopened = try deletingAtOnce(openStore())
        XCTAssertEqual(try reopened.outbox(for: bobLaptop, after: 0, limit: 10).map(\.payload), [incoming])
        XCTAssertEqual(try reopened.outbox(for: bobPhone, after: 0, limit: 10), [])
        XCTAssertEqual(try reopened.lastSeq(for: bobPhone), 2)
        try reopened.acknowledge(device: bobLaptop, upTo: 1)
        XCTAssertEqual(try count("SELECT count(*) FROM outbox_log"), 0)
        // Seqs are not reused after every row is gone, nor after reopening.
        reopened.close()
        let again = try openStore()
        XCTAssertEqual(try again.commit(StepCommit(callID: "c2", expectedRevision: nil,
                                                   outbox: [(bobPhone, Data("3".utf8)), (bobLaptop, Data("2".utf8))],
                                                   now: 3)).map(\.seq), [3, 2])
    }

    /// The index is per connection: appends and acknowledgements of another connection (or
    /// process) sharing the file are seen by reads and continue seqs densely.
    func testAnotherConnectionsAppendsAndAcknowledgementsAreSeen() throws {
        let first = try deletingAtOnce(openStore())
        let second = try deletingAtOnce(openStore())
        XCTAssertEqual(try first.commit(StepCommit(callID: "c", expectedRevision: nil,
                                                   outbox: [(bobPhone, Data("a".utf8))], now: 1)).map(\.seq), [1])
        XCTAssertEqual(try second.lastSeq(for: bobPhone), 1)
        XCTAssertEqual(try second.commit(StepCommit(callID: "c", expectedRevision: nil,
                                                    outbox: [(bobPhone, Data("b".utf8))], now: 2)).map(\.seq), [2])
        XCTAssertEqual(try first.outbox(for: bobPhone, after: 0, limit: 10).map(\.payload), [Data("a".utf8), Data("b".utf8)])
        try second.acknowledge(device: bobPhone, upTo: 1)
        XCTAssertEqual(try first.outbox(for: bobPhone, after: 0, limit: 10).map(\.seq), [2])
        XCTAssertEqual(try first.commit(StepCommit(callID: "c", expectedRevision: nil,
                                                   outbox: [(bobPhone, Data("c".utf8))], now: 3)).map(\.seq), [3])
        try first.acknowledge(device: bobPhone, upTo: 3)
        XCTAssertEqual(try second.outbox(for: bobPhone, after: 0, limit: 10), [])
        XCTAssertEqual(try count("SELECT count(*) FROM outbox_log"), 0)
    }

    /// A batch that throws takes its appends with it: the seqs they took are handed out again,
    /// and nothing of them is readable.
    func testRolledBackAppendsAreForgotten() throws {
        struct Abort: Error {}
        let store = try openStore()
        XCTAssertThrowsError(try store.batch {
            try store.commit(StepCommit(callID: "c", expectedRevision: nil, outbox: [(bobPhone, Data("lost".utf8))], now: 1))
            throw Abort()
        })
        XCTAssertEqual(try store.lastSeq(for: bobPhone), 0)
        XCTAssertEqual(try store.outbox(for: bobPhone, after: 0, limit: 10), [])
        // A failing step inside a batch after another step's append keeps that append.
        try store.batch {
            try store.commit(StepCommit(callID: "c", expectedRevision: nil, outbox: [(bobPhone, Data("kept".utf8))], now: 2))
            XCTAssertThrowsError(try store.commit(StepCommit(callID: "c", expectedRevision: 4,
                                                             outbox: [(bobPhone, Data("conflict".utf8))], now: 2)))
            try store.commit(StepCommit(callID: "c", expectedRevision: nil, outbox: [(bobPhone, Data("next".utf8))], now: 2))
        }
        XCTAssertEqual(try store.outbox(for: bobPhone, after: 0, limit: 10).map(\.payload), [Data("kept".utf8), Data("next".utf8)])
        XCTAssertEqual(try store.outbox(for: bobPhone, after: 0, limit: 10).map(\.seq), [1, 2])
    }

    func testUnreadableLogRowIsCorruptNotATrap() throws {
        let store = try openStore()
        try store.commit(StepCommit(callID: "c", expectedRevision: nil, outbox: [(bobPhone, Data("a".utf8))], now: 1))
        let other = try SQLiteConnection(path: databasePath)
        try other.executeScript("UPDATE outbox_log SET entries = x'0102ff'")
        other.close()
        XCTAssertThrowsError(try store.outbox(for: bobPhone, after: 0, limit: 10)) { error in
            XCTAssertEqual((error as? StorageError)?.code, "corrupt")
        }
    }

    func testRecordRoundTripAndTruncationsAreRefused() throws {
        let entries = [
            OutboxEntry(device: bobPhone, seq: 1, payload: big("x"), createdAt: 0),
            OutboxEntry(device: StoredDeviceKey(account: "ünï", device: ""), seq: 300, payload: Data(), createdAt: 0),
            OutboxEntry(device: bobLaptop, seq: Int64(Int32.max) * 4, payload: big("x"), createdAt: 0),
        ]
        let record = OutboxLogRecord(entries: entries)
        XCTAssertEqual(record.payloads.count, 2)
        let encoded = record.encoded()
        let decoded = try OutboxLogRecord(decoding: encoded)
        XCTAssertEqual(decoded, record)
        XCTAssertEqual((0..<3).map { decoded.entry($0, createdAt: 0) }, entries)
        for length in [0, 1, 2, 10, encoded.count / 2, encoded.count - 1] {
            XCTAssertThrowsError(try OutboxLogRecord(decoding: encoded.prefix(length)), "length \(length)")
        }
        XCTAssertThrowsError(try OutboxLogRecord(decoding: encoded + Data([0])))
        XCTAssertThrowsError(try OutboxLogRecord(decoding: Data([1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01])))
    }

    /// A schema-5 file with a backlog (inline and shared payloads, a partly acknowledged
    /// device, processed events) migrates: the backlog reads as before, acknowledged entries
    /// stay gone, seqs continue, duplicates are still recognized.
    func testVersion5DatabaseMigratesWithItsBacklog() throws {
        let shared = big("shared"), own = big("own")
        do {
            let connection = try SQLiteConnection(path: databasePath)
            defer { connection.close() }
            for script in SQLiteMigrations.steps.prefix(5) { try connection.executeScript(script) }
            try connection.executeScript("PRAGMA user_version = 5")
            try connection.with("INSERT INTO outbox_payloads (id, body) VALUES (1, ?1)") { statement in
                try statement.bind(1, shared)
                try statement.run()
            }
            try connection.with("""
                INSERT INTO outbox (account, device, seq, payload, created_at, payload_id) VALUES
                ('bob', 'phone', 1, x'', 5, 1), ('bob', 'laptop', 1, x'', 5, 1),
                ('bob', 'phone', 2, ?1, 6, NULL), ('alice', 'phone', 4, x'61', 6, NULL)
                """) { statement in
                try statement.bind(1, own)
                try statement.run()
            }
            try connection.executeScript("""
                INSERT INTO outbox_cursors VALUES ('bob', 'laptop', 1, 1), ('alice', 'phone', 3, 3), ('carol', 'phone', 9, 9);
                INSERT INTO processed_events VALUES ('alice', 'phone', 'e1', 'h1', x'7b7d', 100), ('bob', 'phone', 'e2', 'h2', x'5b5d', 50);
                """)
        }
        let store = try openStore()
        XCTAssertEqual(try count("PRAGMA user_version"), Int64(SQLiteCallStore.schemaVersion))
        XCTAssertEqual(try store.outbox(for: bobPhone, after: 0, limit: 10),
                       [OutboxEntry(device: bobPhone, seq: 1, payload: shared, createdAt: 5),
                        OutboxEntry(device: bobPhone, seq: 2, payload: own, createdAt: 6)])
        XCTAssertEqual(try store.outbox(for: bobLaptop, after: 0, limit: 10), [])
        XCTAssertEqual(try store.outbox(for: alicePhone, after: 0, limit: 10).map(\.seq), [4])
        let entries = try store.commit(StepCommit(
            callID: "c1", expectedRevision: nil,
            outbox: [(bobPhone, Data("n".utf8)), (bobLaptop, Data("n".utf8)), (alicePhone, Data("n".utf8)),
                     (StoredDeviceKey(account: "carol", device: "phone"), Data("n".utf8))], now: 7))
        XCTAssertEqual(entries.map(\.seq), [3, 2, 5, 10])
        XCTAssertEqual(try store.processedEvent(account: "alice", device: "phone", eventID: "e1")?.result, Data("{}".utf8))
        assertThrows(.duplicateEvent) {
            try store.commit(StepCommit(callID: "c2", expectedRevision: nil, processedEvent: event("e1"), now: 8))
        }
        // Retention still goes by processing time.
        XCTAssertEqual(try store.purge(terminalCallsUpdatedBefore: 0, eventsProcessedBefore: 60).events, 1)
        XCTAssertNil(try store.processedEvent(account: "bob", device: "phone", eventID: "e2"))
        XCTAssertNotNil(try store.processedEvent(account: "alice", device: "phone", eventID: "e1"))
        store.close()
        XCTAssertEqual(try count("SELECT count(*) FROM sqlite_master WHERE name IN ('outbox', 'outbox_payloads')"), 0)
    }

    /// A schema-4 file (inline payloads only) migrates through 5 and 6.
    func testVersion4DatabaseMigratesAndKeepsItsBacklog() throws {
        let old = big("old")
        do {
            let connection = try SQLiteConnection(path: databasePath)
            defer { connection.close() }
            for script in SQLiteMigrations.steps.prefix(4) { try connection.executeScript(script) }
            try connection.executeScript("PRAGMA user_version = 4")
            for device in ["phone", "laptop"] {
                try connection.with("INSERT INTO outbox (account, device, seq, payload, created_at) VALUES ('bob', ?1, 1, ?2, 5)") { statement in
                    try statement.bind(1, device)
                    try statement.bind(2, old)
                    try statement.run()
                }
            }
        }
        let store = try deletingAtOnce(openStore())
        XCTAssertEqual(try store.outbox(for: bobLaptop, after: 0, limit: 10),
                       [OutboxEntry(device: bobLaptop, seq: 1, payload: old, createdAt: 5)])
        let fresh = big("fresh")
        let entries = try store.commit(StepCommit(callID: "c1", expectedRevision: nil,
                                                  outbox: [(bobPhone, fresh), (bobLaptop, fresh)], now: 6))
        XCTAssertEqual(entries.map(\.seq), [2, 2])
        XCTAssertEqual(try store.outbox(for: bobPhone, after: 0, limit: 10).map(\.payload), [old, fresh])
        try store.acknowledge(device: bobPhone, upTo: 2)
        try store.acknowledge(device: bobLaptop, upTo: 2)
        store.close()
        XCTAssertEqual(try count("SELECT count(*) FROM outbox_log"), 0)
    }
}
