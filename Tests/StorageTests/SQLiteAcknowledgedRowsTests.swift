import Foundation
import XCTest
@testable import Storage

/// Log rows emptied by acknowledgements are deleted in groups
/// (`SQLiteCallStore.acknowledgedRowsPerDeletion`): until then they are garbage that no read
/// returns, that a rebuild (reopen) recognizes as acknowledged, and that purge deletes.
final class SQLiteAcknowledgedRowsTests: StorageTestCase {
    private func rows(_ store: SQLiteCallStore) throws -> Int64? {
        try store.locked { try $0.scalarInt("SELECT count(*) FROM outbox_log") }
    }

    private func append(_ text: String, to device: StoredDeviceKey, store: SQLiteCallStore) throws -> Int64 {
        try XCTUnwrap(try store.commit(StepCommit(callID: "c", expectedRevision: nil,
                                                  outbox: [(device, Data(text.utf8))], now: 1)).first).seq
    }

    func testEmptiedRowsWaitForAGroupAndAreThenDeletedTogether() throws {
        let store = try openStore()
        try store.locked { $0.acknowledgedRowsPerDeletion = 3 }
        for i in 1 ... 4 { XCTAssertEqual(try append("m\(i)", to: bobPhone, store: store), Int64(i)) }
        try store.acknowledge(device: bobPhone, upTo: 1)
        try store.acknowledge(device: bobPhone, upTo: 2)
        XCTAssertEqual(try rows(store), 4, "2 emptied rows wait")
        XCTAssertEqual(try store.outbox(for: bobPhone, after: 0, limit: 10).map(\.seq), [3, 4])
        try store.acknowledge(device: bobPhone, upTo: 3)
        XCTAssertEqual(try rows(store), 1, "the third emptied row deletes all three")
        XCTAssertEqual(try store.outbox(for: bobPhone, after: 0, limit: 10).map(\.seq), [4])
        // Seqs go on after the deletion.
        XCTAssertEqual(try append("m5", to: bobPhone, store: store), 5)
        XCTAssertEqual(try store.lastSeq(for: bobPhone), 5)
    }

    /// A reopen that finds many emptied rows (left by a build that deleted nothing) deletes
    /// at most two groups per acknowledgement, oldest first, not all in one.
    func testABacklogOfEmptiedRowsLeavesAGroupPerAcknowledgement() throws {
        let store = try openStore()
        for i in 1 ... 7 { _ = try append("m\(i)", to: bobPhone, store: store) }
        _ = try append("l1", to: aliceLaptop, store: store)
        _ = try append("l2", to: aliceLaptop, store: store)
        try store.acknowledge(device: bobPhone, upTo: 7)
        store.close()
        let reopened = try openStore()
        try reopened.locked { $0.acknowledgedRowsPerDeletion = 3 }
        XCTAssertEqual(try reopened.outbox(for: bobPhone, after: 0, limit: 10), [])
        XCTAssertEqual(try rows(reopened), 9)
        try reopened.acknowledge(device: aliceLaptop, upTo: 1)
        XCTAssertEqual(try rows(reopened), 3, "6 of the 8 emptied rows")
        XCTAssertEqual(try reopened.locked { try $0.scalarInt("SELECT min(id) FROM outbox_log") }, 7, "oldest first")
        try reopened.acknowledge(device: aliceLaptop, upTo: 2)
        XCTAssertEqual(try rows(reopened), 0)
        XCTAssertEqual(try append("m8", to: bobPhone, store: reopened), 8)
    }

    /// Waiting rows across a reopen: the cursor the acknowledgement stored keeps them out of
    /// every read, seqs are not reused, and purge deletes them.
    func testWaitingRowsSurviveAReopenAsAcknowledgedAndPurgeDeletesThem() throws {
        let store = try openStore()
        for i in 1 ... 3 { _ = try append("m\(i)", to: bobPhone, store: store) }
        _ = try append("l1", to: aliceLaptop, store: store)
        try store.acknowledge(device: bobPhone, upTo: 3)
        XCTAssertEqual(try rows(store), 4, "fewer than acknowledgedRowsPerDeletion rows emptied")
        store.close()

        let reopened = try openStore()
        XCTAssertEqual(try reopened.outbox(for: bobPhone, after: 0, limit: 10), [])
        XCTAssertEqual(try reopened.outbox(for: aliceLaptop, after: 0, limit: 10).map(\.payload), [Data("l1".utf8)])
        XCTAssertEqual(try append("m4", to: bobPhone, store: reopened), 4)
        XCTAssertEqual(try reopened.purge(terminalCallsUpdatedBefore: 0, eventsProcessedBefore: 0).outboxEntries, 3)
        XCTAssertEqual(try rows(reopened), 2)
        XCTAssertEqual(try reopened.outbox(for: bobPhone, after: 0, limit: 10).map(\.seq), [4])
    }

    /// A batch that rolls back after its acknowledgement deleted a group keeps the rows and
    /// the entries: the rebuilt index hands out nothing twice and loses nothing.
    func testARolledBackGroupDeletionKeepsTheRows() throws {
        struct Abort: Error {}
        let store = try openStore()
        try store.locked { $0.acknowledgedRowsPerDeletion = 2 }
        for i in 1 ... 2 { _ = try append("m\(i)", to: bobPhone, store: store) }
        XCTAssertThrowsError(try store.batch {
            try store.acknowledge(device: bobPhone, upTo: 2)
            XCTAssertEqual(try rows(store), 0)
            throw Abort()
        })
        XCTAssertEqual(try rows(store), 2)
        XCTAssertEqual(try store.outbox(for: bobPhone, after: 0, limit: 10).map(\.seq), [1, 2])
        XCTAssertEqual(try append("m3", to: bobPhone, store: store), 3)
    }
}
