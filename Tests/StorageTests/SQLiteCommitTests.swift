import Foundation
import XCTest
@testable import Storage

/// `commit`: revision CAS, idempotency records, atomicity, active calls.
final class SQLiteCommitTests: StorageTestCase {
    func testInsertThenUpdateWithRevision() throws {
        let store = try openStore()
        let first = try insert("c1", into: store)
        XCTAssertEqual(try store.loadCall("c1"), first)

        let second = call("c1", revision: 2, state: "{\"s\":\"ringing\"}", at: 2_000)
        try store.commit(StepCommit(callID: "c1", expectedRevision: 1, call: second, now: 2_000))
        XCTAssertEqual(try store.loadCall("c1"), second)

        let third = call("c1", revision: 3, state: "{\"s\":\"ended\"}", terminal: true, at: 3_000)
        try store.commit(StepCommit(callID: "c1", expectedRevision: 2, call: third, now: 3_000))
        XCTAssertEqual(try store.loadCall("c1"), third)
        XCTAssertNil(try store.loadCall("other"))
    }

    func testInsertOfExistingCallConflicts() throws {
        let store = try openStore()
        let first = try insert("c1", into: store)
        assertThrows(.revisionConflict(current: 1)) {
            try store.commit(StepCommit(callID: "c1", expectedRevision: nil, call: call("c1", revision: 1, state: "{\"x\":1}"), now: 0))
        }
        XCTAssertEqual(try store.loadCall("c1"), first)
    }

    func testUpdateOfMissingCallConflicts() throws {
        let store = try openStore()
        assertThrows(.revisionConflict(current: nil)) {
            try store.commit(StepCommit(callID: "c1", expectedRevision: 4, call: call("c1", revision: 5), now: 0))
        }
        XCTAssertNil(try store.loadCall("c1"))
    }

    func testConflictWritesNothing() throws {
        let store = try openStore()
        let first = try insert("c1", into: store)
        let stale = StepCommit(
            callID: "c1", expectedRevision: 7, call: call("c1", revision: 8, state: "{\"stale\":true}"),
            processedEvent: event("e1"), outbox: [(alicePhone, Data("m".utf8)), (bobPhone, Data("n".utf8))],
            setDeadlines: [Deadline(callID: "c1", kind: "ring", dueAt: 60_000)], now: 2_000)
        assertThrows(.revisionConflict(current: 1)) { try store.commit(stale) }

        XCTAssertEqual(try store.loadCall("c1"), first)
        XCTAssertNil(try store.processedEvent(account: "alice", device: "phone", eventID: "e1"))
        XCTAssertEqual(try store.outbox(for: alicePhone, after: 0, limit: 10), [])
        XCTAssertEqual(try store.lastSeq(for: alicePhone), 0)
        XCTAssertEqual(try store.lastSeq(for: bobPhone), 0)
        XCTAssertEqual(try store.allDeadlines(), [])

        // The same step with the right revision then goes through, with seqs starting at 1.
        var fixed = stale
        fixed.expectedRevision = 1
        fixed.call = call("c1", revision: 2)
        let entries = try store.commit(fixed)
        XCTAssertEqual(entries.map(\.seq), [1, 1])
    }

    func testDuplicateEventThrowsAndWritesNothing() throws {
        let store = try openStore()
        try store.commit(StepCommit(
            callID: "c1", expectedRevision: nil, call: call("c1", revision: 1),
            processedEvent: event("e1"), outbox: [(bobPhone, Data("invite".utf8))], now: 1_000))

        let replay = StepCommit(
            callID: "c1", expectedRevision: 1, call: call("c1", revision: 2, state: "{\"again\":1}"),
            processedEvent: event("e1", at: 9_999), outbox: [(bobPhone, Data("invite again".utf8))],
            setDeadlines: [Deadline(callID: "c1", kind: "ring", dueAt: 5)], now: 9_999)
        assertThrows(.duplicateEvent) { try store.commit(replay) }

        XCTAssertEqual(try store.loadCall("c1")?.revision, 1)
        XCTAssertEqual(try store.processedEvent(account: "alice", device: "phone", eventID: "e1"), event("e1"))
        XCTAssertEqual(try store.outbox(for: bobPhone, after: 0, limit: 10).map(\.payload), [Data("invite".utf8)])
        XCTAssertEqual(try store.lastSeq(for: bobPhone), 1)
        XCTAssertEqual(try store.allDeadlines(), [])
    }

    func testSameEventIDOnAnotherDeviceIsNotDuplicate() throws {
        let store = try openStore()
        try insert("c1", into: store)
        try store.commit(StepCommit(callID: "c1", expectedRevision: 1, processedEvent: event("e1", device: "phone"), now: 0))
        try store.commit(StepCommit(callID: "c1", expectedRevision: 1, processedEvent: event("e1", device: "laptop"), now: 0))
        XCTAssertNotNil(try store.processedEvent(account: "alice", device: "laptop", eventID: "e1"))
        XCTAssertNil(try store.processedEvent(account: "alice", device: "tablet", eventID: "e1"))
    }

    func testRejectedStepRecordsOnlyEvent() throws {
        let store = try openStore()
        let first = try insert("c1", into: store)
        let rejection = event("bad", at: 1_500)
        try store.commit(StepCommit(callID: "c1", expectedRevision: 1, call: nil, processedEvent: rejection, now: 1_500))
        XCTAssertEqual(try store.loadCall("c1"), first)
        XCTAssertEqual(try store.processedEvent(account: "alice", device: "phone", eventID: "bad"), rejection)

        // For an unknown call the check is "still absent".
        try store.commit(StepCommit(callID: "nope", expectedRevision: nil, processedEvent: event("bad2"), now: 0))
        XCTAssertNil(try store.loadCall("nope"))
    }

    func testRejectedStepOnStaleRevisionConflicts() throws {
        let store = try openStore()
        try insert("c1", into: store)
        assertThrows(.revisionConflict(current: 1)) {
            try store.commit(StepCommit(callID: "c1", expectedRevision: nil, processedEvent: event("bad"), now: 0))
        }
        XCTAssertNil(try store.processedEvent(account: "alice", device: "phone", eventID: "bad"))
    }

    func testInconsistentStepIsRejected() throws {
        let store = try openStore()
        try insert("c1", into: store)
        assertThrows(.invalidCommit("call ID c2 does not match step call ID c1")) {
            try store.commit(StepCommit(callID: "c1", expectedRevision: 1, call: call("c2", revision: 2), now: 0))
        }
        assertThrows(.invalidCommit("new revision 1 is not greater than expected 1")) {
            try store.commit(StepCommit(callID: "c1", expectedRevision: 1, call: call("c1", revision: 1), now: 0))
        }
        XCTAssertEqual(try store.loadCall("c1")?.revision, 1)
    }

    func testParticipantsReplacedOnUpdateAndOrderKept() throws {
        let store = try openStore()
        try insert("c1", into: store, participants: ["bob", "alice"])
        XCTAssertEqual(try store.loadCall("c1")?.participants, ["bob", "alice"])
        try store.commit(StepCommit(callID: "c1", expectedRevision: 1, call: call("c1", revision: 2, participants: ["bob", "carol"]), now: 0))
        XCTAssertEqual(try store.loadCall("c1")?.participants, ["bob", "carol"])
        XCTAssertEqual(try store.activeCalls(involving: "alice"), [])
        XCTAssertEqual(try store.activeCalls(involving: "carol").map(\.callID), ["c1"])
    }

    func testActiveCallsExcludesTerminalAndOthers() throws {
        let store = try openStore()
        try insert("c2", into: store, participants: ["alice", "bob"])
        try insert("c1", into: store, participants: ["alice", "carol"])
        try insert("c3", into: store, participants: ["bob", "carol"])
        try store.commit(StepCommit(callID: "c3", expectedRevision: 1, call: call("c3", revision: 2, participants: ["bob", "alice"]), now: 0))
        try store.commit(StepCommit(callID: "c2", expectedRevision: 1, call: call("c2", revision: 2, terminal: true), now: 0))

        let active = try store.activeCalls(involving: "alice")
        XCTAssertEqual(active.map(\.callID), ["c1", "c3"])
        XCTAssertEqual(active.first, try store.loadCall("c1"))
        XCTAssertEqual(try store.activeCalls(involving: "bob").map(\.callID), ["c3"])
        XCTAssertEqual(try store.activeCalls(involving: "nobody"), [])
    }

    func testEmptyAndBinaryBlobsAndUnicodeRoundTrip() throws {
        let store = try openStore()
        let binary = Data([0, 1, 2, 0, 255])
        let stored = StoredCall(callID: "ç-📞", revision: 1, state: Data(), isTerminal: false,
                                participants: ["", "ünï"], createdAt: -5, updatedAt: Int64.max)
        let entries = try store.commit(StepCommit(
            callID: "ç-📞", expectedRevision: nil, call: stored,
            processedEvent: ProcessedEvent(account: "ünï", device: "", eventID: "é", payloadHash: "", result: binary, processedAt: 0),
            outbox: [(StoredDeviceKey(account: "ünï", device: ""), Data())], now: 7))
        XCTAssertEqual(try store.loadCall("ç-📞"), stored)
        XCTAssertEqual(try store.processedEvent(account: "ünï", device: "", eventID: "é")?.result, binary)
        XCTAssertEqual(try store.outbox(for: StoredDeviceKey(account: "ünï", device: ""), after: 0, limit: 5), entries)
        XCTAssertEqual(entries.first?.payload, Data())
    }
}
