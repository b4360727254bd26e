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
}
