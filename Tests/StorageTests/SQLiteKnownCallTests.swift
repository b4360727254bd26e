import Foundation
import XCTest
@testable import Storage

/// Steps on a call the connection wrote itself check the revision in memory
/// (`SQLiteConnection.knownCalls`) and let the event's insert be the duplicate check; the
/// outcomes must be those of the SQL checks, in and out of batches.
final class SQLiteKnownCallTests: StorageTestCase {
    func testTheConnectionKnowsTheRevisionItWroteAndForgetsEndedCalls() throws {
        let store = try openStore()
        try insert("c1", into: store)
        XCTAssertEqual(store.knownCall("c1"), KnownCall(revision: 1, accounts: ["alice", "bob"], isTerminal: false))
        try store.commit(StepCommit(callID: "c1", expectedRevision: 1, call: call("c1", revision: 2),
                                    processedEvent: event("e1"), now: 2_000))
        XCTAssertEqual(store.knownCall("c1")?.revision, 2)
        try store.commit(StepCommit(callID: "c1", expectedRevision: 2, call: call("c1", revision: 3, terminal: true),
                                    processedEvent: event("e2"), now: 3_000))
        XCTAssertNil(store.knownCall("c1"), "ended calls leave")
    }

    /// A duplicate found by the insert writes nothing, so the batch goes on and commits the
    /// steps around it.
    func testADuplicateOnAKnownCallInABatchWritesNothingAndTheBatchGoesOn() throws {
        let store = try openStore()
        try insert("c1", into: store)
        try store.batch {
            try store.commit(StepCommit(callID: "c1", expectedRevision: 1, call: call("c1", revision: 2),
                                        processedEvent: event("e1"), outbox: [(bobPhone, Data("a".utf8))], now: 1_000))
            assertThrows(.duplicateEvent) {
                try store.commit(StepCommit(callID: "c1", expectedRevision: 2, call: call("c1", revision: 3, state: "{\"again\":1}"),
                                            processedEvent: event("e1", at: 9_999), outbox: [(bobPhone, Data("b".utf8))],
                                            setDeadlines: [Deadline(callID: "c1", kind: "ring", dueAt: 5)], now: 9_999))
            }
            try store.commit(StepCommit(callID: "c1", expectedRevision: 2, call: call("c1", revision: 3),
                                        processedEvent: event("e3"), outbox: [(bobPhone, Data("c".utf8))], now: 1_000))
        }
        let reopened = try openStore()
        XCTAssertEqual(try reopened.loadCall("c1")?.revision, 3)
        XCTAssertEqual(try reopened.processedEvent(account: "alice", device: "phone", eventID: "e1"), event("e1"),
                       "the first record is kept")
        XCTAssertEqual(try reopened.outbox(for: bobPhone, after: 0, limit: 10).map { String(decoding: $0.payload, as: UTF8.self) },
                       ["a", "c"])
        XCTAssertEqual(try reopened.outbox(for: bobPhone, after: 0, limit: 10).map(\.seq), [1, 2])
        XCTAssertEqual(try reopened.allDeadlines(), [])
    }

    /// A retry computed from an older state is still reported as a duplicate, not as a
    /// revision conflict (the hub then answers with the stored result).
    func testAReplayAfterTheCallMovedOnIsStillADuplicate() throws {
        let store = try openStore()
        try insert("c1", into: store)
        try store.commit(StepCommit(callID: "c1", expectedRevision: 1, call: call("c1", revision: 2),
                                    processedEvent: event("e1"), now: 2_000))
        try store.commit(StepCommit(callID: "c1", expectedRevision: 2, call: call("c1", revision: 3),
                                    processedEvent: event("e2"), now: 3_000))
        assertThrows(.duplicateEvent) {
            try store.commit(StepCommit(callID: "c1", expectedRevision: 1, call: call("c1", revision: 2),
                                        processedEvent: event("e1", at: 4_000), now: 4_000))
        }
        assertThrows(.duplicateEvent) {
            try store.commit(StepCommit(callID: "c1", expectedRevision: 1, processedEvent: event("e2", at: 4_000), now: 4_000))
        }
        XCTAssertEqual(try store.loadCall("c1")?.revision, 3)
    }

    /// Another connection's commit makes the known revisions stale: the next write lock
    /// drops them and SQL decides, so the step conflicts and writes nothing, and the batch
    /// it rides in goes on (had the stale view let the event's insert go first, the failed
    /// update after it would have failed the whole batch).
    func testAnotherConnectionsCommitIsSeenByTheRevisionCheck() throws {
        let store = try openStore()
        let other = try openStore()
        try insert("c1", into: store)
        try other.commit(StepCommit(callID: "c1", expectedRevision: 1, call: call("c1", revision: 2),
                                    processedEvent: event("theirs", device: "laptop"), now: 2_000))
        XCTAssertEqual(store.knownCall("c1")?.revision, 1, "still the stale view until the next write lock")
        try store.batch {
            try insert("c2", into: store)
            assertThrows(.revisionConflict(current: 2)) {
                try store.commit(StepCommit(callID: "c1", expectedRevision: 1, call: call("c1", revision: 2, state: "{\"mine\":1}"),
                                            processedEvent: event("mine"), outbox: [(bobPhone, Data("x".utf8))], now: 2_000))
            }
            // The same with a step that writes no call (a rejection recorded at a revision).
            assertThrows(.revisionConflict(current: 2)) {
                try store.commit(StepCommit(callID: "c1", expectedRevision: 1, processedEvent: event("mine2"), now: 2_000))
            }
        }
        XCTAssertNotNil(try other.loadCall("c2"), "the batch committed")
        XCTAssertNil(try other.processedEvent(account: "alice", device: "phone", eventID: "mine"))
        XCTAssertNil(try other.processedEvent(account: "alice", device: "phone", eventID: "mine2"))
        XCTAssertEqual(try other.lastSeq(for: bobPhone), 0)
        try store.commit(StepCommit(callID: "c1", expectedRevision: 2, call: call("c1", revision: 3),
                                    processedEvent: event("mine"), now: 3_000))
        XCTAssertEqual(try other.loadCall("c1")?.revision, 3)
    }

    /// A rolled-back batch must not leave revisions that never became durable.
    func testARolledBackBatchForgetsTheRevisionsItWrote() throws {
        let store = try openStore()
        try insert("c1", into: store)
        struct Abort: Error {}
        XCTAssertThrowsError(try store.batch {
            try store.commit(StepCommit(callID: "c1", expectedRevision: 1, call: call("c1", revision: 2),
                                        processedEvent: event("e1"), now: 2_000))
            throw Abort()
        })
        XCTAssertNotEqual(store.knownCall("c1")?.revision, 2)
        try store.commit(StepCommit(callID: "c1", expectedRevision: 1, call: call("c1", revision: 2),
                                    processedEvent: event("e1"), now: 2_000))
        XCTAssertEqual(try openStore().loadCall("c1")?.revision, 2)
    }
}

extension SQLiteCallStore {
    /// The connection's ``KnownCall`` for `callID`, for tests.
    func knownCall(_ callID: String) -> KnownCall? {
        try? locked { $0.knownCalls[callID] } ?? nil
    }
}
