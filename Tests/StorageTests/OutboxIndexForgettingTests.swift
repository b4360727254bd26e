import Foundation
import XCTest
@testable import Storage

/// The outbox index knows devices lazily and forgets settled ones (`OutboxIndex`): seqs stay
/// dense and never reused whether a device's cursor comes from memory or from its row.
final class OutboxIndexForgettingTests: StorageTestCase {
    private func device(_ i: Int) -> StoredDeviceKey { StoredDeviceKey(account: "acct-\(i)", device: "phone") }

    private func index(of store: SQLiteCallStore) throws -> OutboxIndex {
        try store.locked { connection in try connection.readTransaction { try SQLiteCallStore.outboxIndex(in: connection) } }
    }

    func testSettledDevicesAreForgottenAndReadBackFromTheirCursors() throws {
        let store = try openStore()
        try store.locked { connection in
            connection.outboxSettledLimit = 4
            connection.dropDerivedState()
        }
        for i in 0 ..< 20 {
            let entries = try store.commit(StepCommit(callID: "c\(i)", expectedRevision: nil,
                                                      outbox: [(device(i), Data("first".utf8))], now: 1))
            XCTAssertEqual(entries.map(\.seq), [1])
            try store.acknowledge(device: device(i), upTo: 1)
        }
        let settled = try index(of: store)
        XCTAssertEqual(settled.settledLimit, 4)
        XCTAssertLessThanOrEqual(settled.queues.count, 2 * 4, "settled devices beyond the limit are forgotten")
        XCTAssertFalse(settled.isKnown(device(0)))
        XCTAssertTrue(settled.isKnown(device(19)))
        // A forgotten device's seqs go on from its cursor: no seq is handed out twice.
        for i in 0 ..< 20 {
            let entries = try store.commit(StepCommit(callID: "c\(i)", expectedRevision: nil,
                                                      outbox: [(device(i), Data("second".utf8)), (device(i), Data("third".utf8))], now: 2))
            XCTAssertEqual(entries.map(\.seq), [2, 3], "device \(i)")
            XCTAssertEqual(try store.outbox(for: device(i), after: 1, limit: 10).map(\.payload), [Data("second".utf8), Data("third".utf8)])
            XCTAssertEqual(try store.lastSeq(for: device(i)), 3)
        }
        // Acknowledging past the last seq is still clamped for a forgotten device.
        try store.acknowledge(device: device(0), upTo: 99)
        try store.locked { connection in connection.dropDerivedState() }
        XCTAssertEqual(try store.commit(StepCommit(callID: "c0", expectedRevision: nil,
                                                   outbox: [(device(0), Data("fourth".utf8))], now: 3)).map(\.seq), [4])
    }

    func testARebuildLoadsOnlyTheCursorsOfDevicesWithEntries() throws {
        let store = try openStore()
        // Each emptied row deleted at once: rows waiting for a group deletion are still in
        // the log, and a rebuild reads their devices' cursors to see them acknowledged.
        try store.locked { $0.acknowledgedRowsPerDeletion = 1 }
        for i in 0 ..< 10 {
            _ = try store.commit(StepCommit(callID: "c\(i)", expectedRevision: nil, outbox: [(device(i), Data("x".utf8))], now: 1))
            try store.acknowledge(device: device(i), upTo: 1)
        }
        _ = try store.commit(StepCommit(callID: "p", expectedRevision: nil,
                                        outbox: [(device(100), Data("pending".utf8)), (device(101), Data("pending".utf8))], now: 1))
        store.close()

        let reopened = try openStore()
        XCTAssertEqual(try reopened.outbox(for: device(100), after: 0, limit: 10).map(\.seq), [1])
        let rebuilt = try index(of: reopened)
        XCTAssertEqual(Set(rebuilt.queues.keys), [device(100), device(101)], "only the backlog's devices")
        // The others are read from their cursors on first use.
        XCTAssertEqual(try reopened.lastSeq(for: device(3)), 1)
        XCTAssertTrue(rebuilt.isKnown(device(3)))
        XCTAssertEqual(try reopened.commit(StepCommit(callID: "c3", expectedRevision: nil,
                                                      outbox: [(device(3), Data("y".utf8))], now: 2)).map(\.seq), [2])
        XCTAssertEqual(try reopened.outbox(for: device(3), after: 0, limit: 10).map(\.seq), [2])
        // A device never seen has no cursor: seqs start at 1.
        XCTAssertEqual(try reopened.lastSeq(for: device(500)), 0)
    }

    /// A rebuild over more backlog devices than the settled limit forgets none of them while
    /// it loads (their cursors come before their rows): every device keeps its acknowledged
    /// seq and only its unacknowledged entries are pending.
    func testARebuildOverManyDevicesKeepsEveryCursor() throws {
        let store = try openStore()
        for i in 0 ..< 12 {
            _ = try store.commit(StepCommit(callID: "c\(i)", expectedRevision: nil,
                                            outbox: [(device(i), Data("1".utf8)), (device(i), Data("2".utf8))], now: 1))
        }
        // Another connection moves every cursor to 1 without deleting anything.
        let other = try SQLiteConnection(path: databasePath)
        for i in 0 ..< 12 {
            try other.executeScript("INSERT INTO outbox_cursors (account, device, last_seq, acked_seq) VALUES ('acct-\(i)', 'phone', 0, 1)")
        }
        other.close()
        try store.locked { connection in
            connection.outboxSettledLimit = 2
            connection.dropDerivedState()
        }
        for i in 0 ..< 12 {
            XCTAssertEqual(try store.outbox(for: device(i), after: 0, limit: 10).map(\.seq), [2], "device \(i)")
        }
        XCTAssertEqual(try index(of: store).queues.count, 12)
    }
}
