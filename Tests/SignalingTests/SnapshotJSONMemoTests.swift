import CallCore
import Foundation
@testable import Signaling
import XCTest

/// ``SnapshotJSONMemo``: a step's result and notices share one rendering of their common
/// snapshot, and any difference in the snapshot gets its own.
final class SnapshotJSONMemoTests: XCTestCase {
    private func snapshot(revision: Int64, tablet: DeviceParticipation) -> CallSnapshot {
        CallSnapshot(
            callID: "c1", revision: revision, phase: .ringing, caller: DeviceKey(account: "alice", device: "laptop"),
            callee: "bob",
            devices: [DeviceEntry(device: DeviceKey(account: "alice", device: "laptop"), participation: .callerDevice),
                      DeviceEntry(device: DeviceKey(account: "bob", device: "phone"), participation: .ringing),
                      DeviceEntry(device: DeviceKey(account: "bob", device: "tablet"), participation: tablet)],
            answeredBy: nil, endReason: nil, endedBy: nil, createdAt: 1_000, endedAt: nil,
            deadlines: CallDeadlines(ring: 61_000), generation: 0)
    }

    func testEqualSnapshotsGetTheSameTextAndAnyDifferenceItsOwn() {
        var memo = SnapshotJSONMemo()
        let ringing = snapshot(revision: 2, tablet: .ringing)
        // Same call and revision, one device's participation differs: must not be reused.
        let acknowledged = snapshot(revision: 2, tablet: .ringingAcknowledged)
        let first = memo.render(ringing)
        XCTAssertEqual(first, SnapshotJSON.render(ringing))
        XCTAssertEqual(memo.render(ringing), first)
        let second = memo.render(acknowledged)
        XCTAssertEqual(second, SnapshotJSON.render(acknowledged))
        XCTAssertNotEqual(second, first)
        XCTAssertTrue(second.contains("\"participation\":\"ringingAcknowledged\""), second)
        XCTAssertEqual(memo.render(ringing), first)
    }

    /// The memo variants of the result and notice renderers give the plain ones' bytes.
    func testResultAndNoticeRenderTheSameBytesThroughTheMemo() throws {
        guard case .command(let command) = try ClientMessage.parse(#"{"v":1,"type":"call.ringing","eventID":"e1","callID":"c1"}"#).get()
        else { return XCTFail("not a command") }
        let state = snapshot(revision: 3, tablet: .ringing)
        let result = StoredResult(callID: "c1", status: .accepted(revision: 3, noop: false), call: .snapshot(state),
                                  serverTime: 5)
        let notice = CallNotice.ringingOnCallee(state)
        var memo = SnapshotJSONMemo()
        XCTAssertEqual(result.render(command, snapshots: &memo), result.render(command))
        XCTAssertEqual(NoticeJSON.render(notice, callID: "c1", serverTime: 5, snapshots: &memo),
                       NoticeJSON.render(notice, callID: "c1", serverTime: 5))
        let rejected = StoredResult(callID: nil, status: .rejected(code: "staleRevision", message: "m"),
                                    call: .snapshot(snapshot(revision: 4, tablet: .answered)), serverTime: 6)
        XCTAssertEqual(rejected.render(command, snapshots: &memo), rejected.render(command))
    }
}
