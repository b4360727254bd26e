import Foundation
import XCTest
@testable import Storage

/// Retention of tombstones, idempotency records, and acknowledged outbox entries.
final class SQLitePurgeTests: StorageTestCase {
    func testPurgeRetention() throws {
        let store = try openStore()
        // old terminal (purged), recent terminal (kept), old active (kept).
        try insert("old-ended", into: store)
        try store.commit(StepCommit(
            callID: "old-ended", expectedRevision: 1, call: call("old-ended", revision: 2, terminal: true, at: 100),
            setDeadlines: [Deadline(callID: "old-ended", kind: "cleanup", dueAt: 5)], now: 100))
        try insert("new-ended", into: store)
        try store.commit(StepCommit(
            callID: "new-ended", expectedRevision: 1, call: call("new-ended", revision: 2, terminal: true, at: 900), now: 900))
        try store.commit(StepCommit(
            callID: "old-active", expectedRevision: nil, call: call("old-active", revision: 1, at: 50),
            setDeadlines: [Deadline(callID: "old-active", kind: "ring", dueAt: 7)], now: 50))
        // Events at 100 and 900.
        try store.commit(StepCommit(callID: "x", expectedRevision: nil, processedEvent: event("e-old", at: 100), now: 100))
        try store.commit(StepCommit(callID: "x", expectedRevision: nil, processedEvent: event("e-new", at: 900), now: 900))
        // Outbox: 3 entries, 2 acknowledged (already trimmed eagerly), 1 pending.
        try store.commit(StepCommit(callID: "x", expectedRevision: nil, outbox: [
            (alicePhone, Data("1".utf8)), (alicePhone, Data("2".utf8)), (alicePhone, Data("3".utf8)),
        ], now: 0))
        try store.acknowledge(device: alicePhone, upTo: 2)

        let counts = try store.purge(terminalCallsUpdatedBefore: 500, eventsProcessedBefore: 500)
        XCTAssertEqual(counts, PurgeCounts(calls: 1, events: 1, outboxEntries: 0))

        XCTAssertNil(try store.loadCall("old-ended"))
        XCTAssertNotNil(try store.loadCall("new-ended"))
        XCTAssertNotNil(try store.loadCall("old-active"))
        XCTAssertNil(try store.processedEvent(account: "alice", device: "phone", eventID: "e-old"))
        XCTAssertNotNil(try store.processedEvent(account: "alice", device: "phone", eventID: "e-new"))
        XCTAssertEqual(try store.allDeadlines(), [Deadline(callID: "old-active", kind: "ring", dueAt: 7)])
        XCTAssertEqual(try store.outbox(for: alicePhone, after: 0, limit: 10).map(\.seq), [3])
        XCTAssertEqual(try store.lastSeq(for: alicePhone), 3)

        // Participants of the purged call went with it (cascade), and the ID can be reused.
        try insert("old-ended", into: store, participants: ["zed"])
        XCTAssertEqual(try store.loadCall("old-ended")?.participants, ["zed"])

        XCTAssertEqual(try store.purge(terminalCallsUpdatedBefore: 500, eventsProcessedBefore: 500), PurgeCounts())
    }

    /// A log row whose entries are all acknowledged but which is still there (e.g. the
    /// cursor was advanced by another writer, or a migrated row): purge deletes it.
    func testPurgeRemovesAcknowledgedEntriesLeftBehind() throws {
        let store = try openStore()
        try store.commit(StepCommit(callID: "x", expectedRevision: nil,
                                    outbox: [(bobPhone, Data("1".utf8)), (bobPhone, Data("2".utf8))], now: 0))
        try store.commit(StepCommit(callID: "x", expectedRevision: nil, outbox: [(bobPhone, Data("3".utf8))], now: 0))
        // Another connection advances the cursor without deleting anything.
        let other = try SQLiteConnection(path: databasePath)
        try other.executeScript("INSERT INTO outbox_cursors (account, device, last_seq, acked_seq) VALUES ('bob', 'phone', 0, 2)")
        other.close()
        XCTAssertEqual(try store.outbox(for: bobPhone, after: 0, limit: 10).map(\.seq), [3])
        XCTAssertEqual(try store.purge(terminalCallsUpdatedBefore: 0, eventsProcessedBefore: 0).outboxEntries, 1)
        XCTAssertEqual(try store.outbox(for: bobPhone, after: 0, limit: 10).map(\.seq), [3])
        XCTAssertEqual(try store.lastSeq(for: bobPhone), 3)
        XCTAssertEqual(try store.purge(terminalCallsUpdatedBefore: 0, eventsProcessedBefore: 0).outboxEntries, 0)
    }
}
