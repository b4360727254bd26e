import Foundation
import XCTest
@testable import Storage

/// Deadlines written by commits and queried by the timer loop.
final class SQLiteDeadlineTests: StorageTestCase {
    private func set(_ deadlines: [Deadline], cancel: [(callID: String, kind: String)] = [], store: SQLiteCallStore) throws {
        try store.commit(StepCommit(callID: "none", expectedRevision: nil, setDeadlines: deadlines, cancelDeadlines: cancel, now: 0))
    }

    func testDeadlinesSetReplaceCancel() throws {
        let store = try openStore()
        try set([Deadline(callID: "c1", kind: "ring", dueAt: 60), Deadline(callID: "c1", kind: "connect", dueAt: 30)], store: store)
        XCTAssertEqual(try store.allDeadlines(), [
            Deadline(callID: "c1", kind: "connect", dueAt: 30), Deadline(callID: "c1", kind: "ring", dueAt: 60),
        ])
        // Replace: same (callID, kind) gets a new due time, no duplicate row.
        try set([Deadline(callID: "c1", kind: "ring", dueAt: 10)], store: store)
        XCTAssertEqual(try store.allDeadlines(), [
            Deadline(callID: "c1", kind: "ring", dueAt: 10), Deadline(callID: "c1", kind: "connect", dueAt: 30),
        ])
        // Cancel, including one that does not exist; cancels apply before sets in one step.
        try set([Deadline(callID: "c2", kind: "ring", dueAt: 99)],
                cancel: [(callID: "c1", kind: "ring"), (callID: "c9", kind: "x"), (callID: "c2", kind: "ring")], store: store)
        XCTAssertEqual(try store.allDeadlines(), [
            Deadline(callID: "c1", kind: "connect", dueAt: 30), Deadline(callID: "c2", kind: "ring", dueAt: 99),
        ])
    }

    func testDueDeadlinesOrderingAndLimit() throws {
        let store = try openStore()
        try set([
            Deadline(callID: "b", kind: "ring", dueAt: 20), Deadline(callID: "a", kind: "ring", dueAt: 20),
            Deadline(callID: "c", kind: "ring", dueAt: 5), Deadline(callID: "a", kind: "answer", dueAt: 20),
            Deadline(callID: "d", kind: "ring", dueAt: 21),
        ], store: store)
        XCTAssertEqual(try store.nextDeadline(), Deadline(callID: "c", kind: "ring", dueAt: 5))
        XCTAssertEqual(try store.dueDeadlines(atOrBefore: 4, limit: 10), [])
        XCTAssertEqual(try store.dueDeadlines(atOrBefore: 20, limit: 10), [
            Deadline(callID: "c", kind: "ring", dueAt: 5), Deadline(callID: "a", kind: "answer", dueAt: 20),
            Deadline(callID: "a", kind: "ring", dueAt: 20), Deadline(callID: "b", kind: "ring", dueAt: 20),
        ])
        XCTAssertEqual(try store.dueDeadlines(atOrBefore: 100, limit: 2).map(\.callID), ["c", "a"])
        XCTAssertEqual(try store.dueDeadlines(atOrBefore: 100, limit: 0), [])
    }

    func testNextDeadlineOfEmptyStoreIsNil() throws {
        XCTAssertNil(try openStore().nextDeadline())
    }

    func testDeadlinesSurviveReopen() throws {
        var store: SQLiteCallStore? = try openStore()
        let deadlines = [Deadline(callID: "c1", kind: "ring", dueAt: 60_000), Deadline(callID: "c2", kind: "ring", dueAt: 61_000)]
        try set(deadlines, store: store!)
        store!.close()
        store = nil
        let reopened = try openStore()
        XCTAssertEqual(try reopened.allDeadlines(), deadlines)
        XCTAssertEqual(try reopened.nextDeadline(), deadlines[0])
    }
}
