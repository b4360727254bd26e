import Foundation
import XCTest
@testable import Storage

/// Schema 5: a large payload that one step sends to several devices is stored once and
/// referenced by each entry; reads, acks, purge and a schema-4 file all still see every
/// entry's own payload.
final class SQLiteSharedPayloadTests: StorageTestCase {
    /// ~3 KB, like a `call.incoming` with its SDP offer.
    private func big(_ tag: String) -> Data {
        Data((tag + String(repeating: "a=candidate:1 1 udp 2122260223 192.0.2.1 54400 typ host\r\n", count: 50)).utf8)
    }

    private let bobLaptop = StoredDeviceKey(account: "bob", device: "laptop")
    private let bobTablet = StoredDeviceKey(account: "bob", device: "tablet")

    private func count(_ sql: String) throws -> Int64? {
        let connection = try SQLiteConnection(path: databasePath)
        defer { connection.close() }
        return try connection.scalarInt(sql)
    }

    func testPayloadForSeveralDevicesIsStoredOnceAndEachEntryReadsIt() throws {
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
            let stored = try store.outbox(for: device, after: 0, limit: 10)
            XCTAssertEqual(stored, [OutboxEntry(device: device, seq: 1, payload: incoming, createdAt: 7)])
        }
        XCTAssertEqual(try store.outbox(for: aliceLaptop, after: 0, limit: 10).map(\.payload), [small])
        // One shared row; the small payload stays inline in both of its entries.
        XCTAssertEqual(try count("SELECT count(*) FROM outbox_payloads"), 1)
        XCTAssertEqual(try count("SELECT count(*) FROM outbox WHERE payload_id IS NOT NULL AND length(payload) = 0"), 3)
        XCTAssertEqual(try count("SELECT count(*) FROM outbox WHERE payload_id IS NULL AND length(payload) > 0"), 2)
        store.close()
    }

    func testLargePayloadForOneDeviceStaysInline() throws {
        let store = try openStore()
        try store.commit(StepCommit(callID: "c1", expectedRevision: nil,
                                    outbox: [(bobPhone, big("one")), (bobLaptop, big("two"))], now: 1))
        XCTAssertEqual(try store.outbox(for: bobLaptop, after: 0, limit: 10).map(\.payload), [big("two")])
        store.close()
        XCTAssertEqual(try count("SELECT count(*) FROM outbox_payloads"), 0)
    }

    func testPurgeDeletesASharedPayloadOnlyOnceNoEntryReferencesIt() throws {
        let store = try openStore()
        let incoming = big("incoming")
        try store.commit(StepCommit(callID: "c1", expectedRevision: nil,
                                    outbox: [(bobPhone, incoming), (bobLaptop, incoming)], now: 1))
        try store.acknowledge(device: bobPhone, upTo: 1)
        XCTAssertEqual(try store.purge(terminalCallsUpdatedBefore: 0, eventsProcessedBefore: 0).outboxPayloads, 0)
        // The laptop never acked: it still resumes with the whole payload.
        XCTAssertEqual(try store.outbox(for: bobLaptop, after: 0, limit: 10).map(\.payload), [incoming])
        try store.acknowledge(device: bobLaptop, upTo: 1)
        XCTAssertEqual(try store.purge(terminalCallsUpdatedBefore: 0, eventsProcessedBefore: 0),
                       PurgeCounts(outboxPayloads: 1))
        // A later shared payload (possibly reusing the freed rowid) is read back intact.
        let next = big("next")
        try store.commit(StepCommit(callID: "c2", expectedRevision: nil,
                                    outbox: [(bobPhone, next), (bobLaptop, next)], now: 2))
        XCTAssertEqual(try store.outbox(for: bobPhone, after: 1, limit: 10).map(\.payload), [next])
        XCTAssertEqual(try store.outbox(for: bobLaptop, after: 0, limit: 10).map(\.seq), [2])
        store.close()
    }

    /// A schema-4 file (inline payloads only) migrates: its backlog reads as before, seqs
    /// continue, and new fan-out entries share their payload.
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
        let store = try openStore()
        XCTAssertEqual(try count("PRAGMA user_version"), Int64(SQLiteCallStore.schemaVersion))
        XCTAssertEqual(try store.outbox(for: bobLaptop, after: 0, limit: 10),
                       [OutboxEntry(device: bobLaptop, seq: 1, payload: old, createdAt: 5)])
        let fresh = big("fresh")
        let entries = try store.commit(StepCommit(callID: "c1", expectedRevision: nil,
                                                  outbox: [(bobPhone, fresh), (bobLaptop, fresh)], now: 6))
        XCTAssertEqual(entries.map(\.seq), [2, 2])
        XCTAssertEqual(try store.outbox(for: bobPhone, after: 0, limit: 10).map(\.payload), [old, fresh])
        try store.acknowledge(device: bobPhone, upTo: 2)
        try store.acknowledge(device: bobLaptop, upTo: 2)
        XCTAssertEqual(try store.purge(terminalCallsUpdatedBefore: 0, eventsProcessedBefore: 0).outboxPayloads, 1)
        store.close()
        XCTAssertEqual(try count("SELECT count(*) FROM outbox"), 0)
    }
}
