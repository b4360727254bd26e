import Foundation
import XCTest
@testable import Storage

/// Group commit: many steps in one transaction, each step atomic on its own.
final class SQLiteBatchTests: StorageTestCase {
    func testStepsInABatchBecomeVisibleToOtherConnectionsOnlyWhenItEnds() throws {
        let store = try openStore()
        let reader = try openStore()
        try store.batch {
            try insert("c1", into: store)
            try store.commit(StepCommit(callID: "c1", expectedRevision: 1, call: call("c1", revision: 2),
                                        processedEvent: event("e1"), outbox: [(bobPhone, Data("x".utf8))], now: 1_000))
            XCTAssertEqual(try store.loadCall("c1")?.revision, 2, "the batch sees its own writes")
            XCTAssertNil(try reader.loadCall("c1"), "others see nothing before the batch commits")
        }
        XCTAssertEqual(try reader.loadCall("c1")?.revision, 2)
        XCTAssertEqual(try reader.outbox(for: bobPhone, after: 0, limit: 10).map(\.seq), [1])
    }

    func testAFailedStepUndoesOnlyItselfAndTheBatchGoesOn() throws {
        let store = try openStore()
        try insert("c1", into: store)
        try store.batch {
            try store.commit(StepCommit(callID: "c1", expectedRevision: 1, call: call("c1", revision: 2),
                                        processedEvent: event("e1"), outbox: [(bobPhone, Data("a".utf8))], now: 1_000))
            assertThrows(.revisionConflict(current: 2)) {
                try store.commit(StepCommit(callID: "c1", expectedRevision: 1, call: call("c1", revision: 2, state: "{\"lost\":1}"),
                                            processedEvent: event("e2"), outbox: [(bobPhone, Data("b".utf8))], now: 1_000))
            }
            try store.commit(StepCommit(callID: "c1", expectedRevision: 2, call: call("c1", revision: 3),
                                        processedEvent: event("e3"), outbox: [(bobPhone, Data("c".utf8))], now: 1_000))
        }
        let reopened = try openStore()
        XCTAssertEqual(try reopened.loadCall("c1")?.revision, 3)
        XCTAssertNil(try reopened.processedEvent(account: "alice", device: "phone", eventID: "e2"))
        XCTAssertEqual(try reopened.outbox(for: bobPhone, after: 0, limit: 10).map { String(decoding: $0.payload, as: UTF8.self) }, ["a", "c"])
        XCTAssertEqual(try reopened.outbox(for: bobPhone, after: 0, limit: 10).map(\.seq), [1, 2], "no seq hole from the undone step")
    }

    struct Abort: Error {}

    func testABatchThatThrowsWritesNothing() throws {
        let store = try openStore()
        XCTAssertThrowsError(try store.batch {
            try insert("c1", into: store)
            throw Abort()
        })
        XCTAssertNil(try openStore().loadCall("c1"))
        try insert("c2", into: store)  // the store is usable afterwards
        XCTAssertNotNil(try openStore().loadCall("c2"))
    }

    /// A step that fails after writing (here: the outbox append, made to fail by a trigger
    /// standing in for a full disk) cannot be undone alone: the batch fails as a whole, later
    /// steps write nothing, and nothing of the batch is durable.
    func testAStepThatFailsAfterWritingFailsTheWholeBatch() throws {
        let store = try openStore()
        try insert("c1", into: store)
        let other = try SQLiteConnection(path: databasePath)
        try other.executeScript("""
            CREATE TRIGGER full_disk BEFORE INSERT ON outbox_log WHEN length(NEW.entries) > 40
            BEGIN SELECT RAISE(ABORT, 'disk full'); END;
            """)
        var later: Error?
        XCTAssertThrowsError(try store.batch {
            try store.commit(StepCommit(callID: "c0", expectedRevision: nil, call: call("c0", revision: 1),
                                        processedEvent: event("e0"), outbox: [(bobPhone, Data("a".utf8))], now: 1_000))
            XCTAssertThrowsError(try store.commit(StepCommit(
                callID: "c1", expectedRevision: 1, call: call("c1", revision: 2), processedEvent: event("e1"),
                outbox: [(bobPhone, Data(String(repeating: "x", count: 100).utf8))], now: 1_000)))
            do {
                try store.commit(StepCommit(callID: "c1", expectedRevision: 1, call: call("c1", revision: 2),
                                            processedEvent: event("e2"), now: 1_000))
            } catch {
                later = error
            }
        })
        XCTAssertNotNil(later, "a step after the failure must not run")
        try other.executeScript("DROP TRIGGER full_disk")
        other.close()
        let reopened = try openStore()
        XCTAssertNil(try reopened.loadCall("c0"))
        XCTAssertEqual(try reopened.loadCall("c1")?.revision, 1)
        XCTAssertNil(try reopened.processedEvent(account: "alice", device: "phone", eventID: "e1"))
        XCTAssertEqual(try reopened.lastSeq(for: bobPhone), 0)
        // The failed store goes on: seqs start over where the durable state is.
        XCTAssertEqual(try store.commit(StepCommit(callID: "c1", expectedRevision: 1, call: call("c1", revision: 2),
                                                   outbox: [(bobPhone, Data("b".utf8))], now: 1_000)).map(\.seq), [1])
    }
}
