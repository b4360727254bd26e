import Foundation
import XCTest
@testable import Storage

/// Outbox seq assignment, paging, acknowledgement; device registry.
final class SQLiteOutboxTests: StorageTestCase {
    private func send(_ messages: [(StoredDeviceKey, String)], store: SQLiteCallStore, now: Int64 = 1_000) throws -> [OutboxEntry] {
        try store.commit(StepCommit(
            callID: "c1", expectedRevision: nil,
            outbox: messages.map { ($0.0, Data($0.1.utf8)) }, now: now))
    }

    func testSeqsMonotonicPerDeviceAcrossCommitsAndReopen() throws {
        var store: SQLiteCallStore? = try openStore()
        let first = try send([(alicePhone, "a1"), (bobPhone, "b1"), (alicePhone, "a2")], store: store!)
        XCTAssertEqual(first.map(\.seq), [1, 1, 2])
        XCTAssertEqual(first.map(\.device), [alicePhone, bobPhone, alicePhone])
        let second = try send([(alicePhone, "a3"), (aliceLaptop, "l1")], store: store!)
        XCTAssertEqual(second.map(\.seq), [3, 1])
        store!.close()
        store = nil

        let reopened = try openStore()
        XCTAssertEqual(try reopened.lastSeq(for: alicePhone), 3)
        let third = try send([(alicePhone, "a4"), (bobPhone, "b2")], store: reopened)
        XCTAssertEqual(third.map(\.seq), [4, 2])
        XCTAssertEqual(try reopened.outbox(for: alicePhone, after: 0, limit: 100).map(\.payload),
                       ["a1", "a2", "a3", "a4"].map { Data($0.utf8) })
    }

    func testOutboxPagingAfterCursor() throws {
        let store = try openStore()
        for index in 1...7 { _ = try send([(alicePhone, "m\(index)")], store: store, now: Int64(index)) }
        _ = try send([(bobPhone, "other")], store: store)

        let page1 = try store.outbox(for: alicePhone, after: 0, limit: 3)
        XCTAssertEqual(page1.map(\.seq), [1, 2, 3])
        XCTAssertEqual(page1.map(\.createdAt), [1, 2, 3])
        let page2 = try store.outbox(for: alicePhone, after: page1.last!.seq, limit: 3)
        XCTAssertEqual(page2.map(\.seq), [4, 5, 6])
        XCTAssertEqual(page2.first?.payload, Data("m4".utf8))
        XCTAssertEqual(try store.outbox(for: alicePhone, after: 6, limit: 3).map(\.seq), [7])
        XCTAssertEqual(try store.outbox(for: alicePhone, after: 7, limit: 3), [])
        XCTAssertEqual(try store.outbox(for: alicePhone, after: 0, limit: 0), [])
        XCTAssertEqual(try store.outbox(for: alicePhone, after: 0, limit: -1), [])
    }

    func testAcknowledgeTrims() throws {
        let store = try openStore()
        _ = try send([(alicePhone, "1"), (alicePhone, "2"), (alicePhone, "3"), (bobPhone, "b")], store: store)
        try store.acknowledge(device: alicePhone, upTo: 2)
        XCTAssertEqual(try store.outbox(for: alicePhone, after: 0, limit: 10).map(\.seq), [3])
        XCTAssertEqual(try store.outbox(for: bobPhone, after: 0, limit: 10).map(\.seq), [1])
        // Trimming does not rewind seqs; an older ack is a no-op.
        XCTAssertEqual(try store.lastSeq(for: alicePhone), 3)
        try store.acknowledge(device: alicePhone, upTo: 1)
        XCTAssertEqual(try store.outbox(for: alicePhone, after: 0, limit: 10).map(\.seq), [3])
        XCTAssertEqual(try send([(alicePhone, "4")], store: store).map(\.seq), [4])
        // Unknown device: no-op.
        try store.acknowledge(device: StoredDeviceKey(account: "x", device: "y"), upTo: 5)
    }

    func testAcknowledgeBeyondLastSeqIsClamped() throws {
        let store = try openStore()
        _ = try send([(alicePhone, "1")], store: store)
        try store.acknowledge(device: alicePhone, upTo: 1_000)
        XCTAssertEqual(try store.outbox(for: alicePhone, after: 0, limit: 10), [])
        let later = try send([(alicePhone, "2")], store: store)
        XCTAssertEqual(later.map(\.seq), [2])
        XCTAssertEqual(try store.outbox(for: alicePhone, after: 0, limit: 10), later)
        // The row the acknowledgement emptied waits for more (`acknowledgedRowsPerDeletion`);
        // purge takes it, never the pending one.
        XCTAssertEqual(try store.purge(terminalCallsUpdatedBefore: 0, eventsProcessedBefore: 0).outboxEntries, 1)
        XCTAssertEqual(try store.outbox(for: alicePhone, after: 0, limit: 10), later)
    }

    func testRegisterDevicesPerAccount() throws {
        let store = try openStore()
        try store.registerDevice(alicePhone, now: 1)
        try store.registerDevice(aliceLaptop, now: 2)
        try store.registerDevice(alicePhone, now: 3)
        try store.registerDevice(bobPhone, now: 4)
        XCTAssertEqual(try store.devices(of: "alice"), ["laptop", "phone"])
        XCTAssertEqual(try store.devices(of: "bob"), ["phone"])
        XCTAssertEqual(try store.devices(of: "carol"), [])
    }

    // MARK: Derived seqs (schema 4): no cursor write per append, a per-connection cache.

    func testSeqsContinueAfterEverythingWasTrimmedAndReopened() throws {
        var store: SQLiteCallStore? = try openStore()
        _ = try send([(alicePhone, "1"), (alicePhone, "2"), (alicePhone, "3")], store: store!)
        try store!.acknowledge(device: alicePhone, upTo: 3)
        XCTAssertEqual(try store!.outbox(for: alicePhone, after: 0, limit: 10), [])
        store!.close()
        store = nil
        let reopened = try openStore()
        XCTAssertEqual(try reopened.lastSeq(for: alicePhone), 3, "derived from acked_seq once the entries are gone")
        XCTAssertEqual(try send([(alicePhone, "4")], store: reopened).map(\.seq), [4])
    }

    func testTwoConnectionsAppendingToOneDeviceNeverReuseASeq() throws {
        let first = try openStore()
        let second = try openStore()
        var seqs: [Int64] = []
        for round in 0..<5 {
            // Each store caches the last seq it assigned; the other's commit must invalidate it.
            seqs += try send([(alicePhone, "a\(round)")], store: first).map(\.seq)
            seqs += try second.batch { try send([(alicePhone, "b\(round)"), (alicePhone, "c\(round)")], store: second).map(\.seq) }
        }
        XCTAssertEqual(seqs, Array(1...15))
        XCTAssertEqual(try first.outbox(for: alicePhone, after: 0, limit: 100).map(\.seq), Array(1...15))
    }

    func testABatchThatFailsAfterAppendingLeavesNoGap() throws {
        let store = try openStore()
        _ = try send([(alicePhone, "1")], store: store)
        struct Abort: Error {}
        XCTAssertThrowsError(try store.batch {
            XCTAssertEqual(try send([(alicePhone, "lost")], store: store).map(\.seq), [2])
            throw Abort()
        })
        XCTAssertEqual(try send([(alicePhone, "2")], store: store).map(\.seq), [2], "the rolled-back seq is assigned again")
        try store.batch {
            _ = try send([(alicePhone, "3")], store: store)
            // A step that fails inside the batch (a replayed event) appends nothing and
            // leaves no hole either.
            try store.commit(StepCommit(callID: "c9", expectedRevision: nil, processedEvent: event("e1"), now: 1))
            XCTAssertThrowsError(try store.commit(StepCommit(callID: "c9", expectedRevision: nil, processedEvent: event("e1"),
                                                             outbox: [(alicePhone, Data("dup".utf8))], now: 1)))
            _ = try send([(alicePhone, "4")], store: store)
        }
        XCTAssertEqual(try store.outbox(for: alicePhone, after: 0, limit: 10).map { String(decoding: $0.payload, as: UTF8.self) },
                       ["1", "2", "3", "4"])
        XCTAssertEqual(try store.outbox(for: alicePhone, after: 0, limit: 10).map(\.seq), [1, 2, 3, 4])
    }

    func testAStepToManyDevicesKeepsOrderAndSeqs() throws {
        let store = try openStore()
        let devices = (0..<19).map { StoredDeviceKey(account: "bob", device: "d\($0 % 7)") }
        let entries = try send(devices.enumerated().map { ($0.element, "m\($0.offset)") }, store: store)
        XCTAssertEqual(entries.map(\.device), devices)
        var expected: [StoredDeviceKey: Int64] = [:]
        for (index, device) in devices.enumerated() {
            expected[device, default: 0] += 1
            XCTAssertEqual(entries[index].seq, expected[device])
        }
        for (device, last) in expected {
            XCTAssertEqual(try store.outbox(for: device, after: 0, limit: 100).map(\.seq), Array(1...last))
        }
    }

    /// A file written by schema 3, where every append bumped `outbox_cursors.last_seq`.
    func testSeqsContinueFromCursorsWrittenBySchema3() throws {
        let connection = try SQLiteConnection(path: databasePath)
        for script in SQLiteMigrations.steps.prefix(3) { try connection.executeScript(script) }
        try connection.executeScript("""
            PRAGMA user_version = 3;
            INSERT INTO outbox_cursors VALUES ('alice', 'phone', 5, 3), ('bob', 'phone', 7, 7);
            INSERT INTO outbox VALUES ('alice', 'phone', 4, x'34', 1), ('alice', 'phone', 5, x'35', 1);
            """)
        connection.close()
        let store = try openStore()
        XCTAssertEqual(try store.lastSeq(for: alicePhone), 5)
        XCTAssertEqual(try store.lastSeq(for: bobPhone), 7)
        XCTAssertEqual(try send([(alicePhone, "6"), (bobPhone, "8")], store: store).map(\.seq), [6, 8])
        try store.acknowledge(device: bobPhone, upTo: 100)
        XCTAssertEqual(try store.lastSeq(for: bobPhone), 8)
    }
}
