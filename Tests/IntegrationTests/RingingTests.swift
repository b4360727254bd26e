import Foundation
import SignalingClient
import XCTest

/// Ringing outcomes across devices: decline, cancel, ring timeout, glare, busy
/// (call-design §4 cases 1, 3, 11, 13, 14).
final class RingingTests: IntegrationCase {
    func testDeclineOnOneDeviceEndsTheCallForAllDevices() throws {
        let server = try ServerProcess()
        let caller = try device(server, "alice", "laptop")
        let phone = try device(server, "bob", "phone")
        let tablet = try device(server, "bob", "tablet")
        let (callID, _) = try invite(caller, "bob")
        let revision = try XCTUnwrap(try phone.waitFor(type: "call.incoming", callID: callID).revision)
        _ = try tablet.waitFor(type: "call.incoming", callID: callID)
        let declined = try phone.request("call.decline", ["callID": callID, "revision": revision])
        XCTAssertEqual(declined.status, "accepted")
        XCTAssertEqual(declined.phase, "ended")
        XCTAssertEqual(try caller.waitFor(type: "call.ended", callID: callID).reason, "declined")
        XCTAssertEqual(try tablet.waitFor(type: "call.stopRinging", callID: callID).reason, "declinedElsewhere")
        // A late answer from the other device never re-rings: it gets the terminal snapshot.
        let late = try tablet.request("call.answer", ["callID": callID, "revision": revision])
        XCTAssertEqual(late.status, "rejected")
        XCTAssertEqual(late.code, "callEnded")
        XCTAssertEqual(late.phase, "ended")
    }

    func testCancelDuringRingStopsEveryDevice() throws {
        let server = try ServerProcess()
        let caller = try device(server, "alice", "laptop")
        let phone = try device(server, "bob", "phone")
        let tablet = try device(server, "bob", "tablet")
        let (callID, _) = try invite(caller, "bob")
        let revision = try XCTUnwrap(try phone.waitFor(type: "call.incoming", callID: callID).revision)
        XCTAssertEqual(try caller.request("call.cancel", ["callID": callID]).status, "accepted")
        for callee in [phone, tablet] {
            XCTAssertEqual(try callee.waitFor(type: "call.stopRinging", callID: callID).reason, "cancelled")
        }
        let late = try phone.request("call.answer", ["callID": callID, "revision": revision])
        XCTAssertEqual(late.code, "callEnded")
    }

    func testRingTimeoutEndsAsNoAnswer() throws {
        let server = try ServerProcess(settings: ["call.ring_timeout": "1500ms", "call.invite_lifetime": "3s"])
        let caller = try device(server, "alice", "laptop")
        let phone = try device(server, "bob", "phone")
        let (callID, _) = try invite(caller, "bob")
        _ = try phone.waitFor(type: "call.incoming", callID: callID)
        let ended = try caller.waitFor(type: "call.ended", callID: callID, timeout: 10)
        XCTAssertEqual(ended.reason, "noAnswer")
        XCTAssertEqual(try phone.waitFor(type: "call.stopRinging", callID: callID).reason, "noAnswer")
        let snapshot = try XCTUnwrap(ended.snapshot)
        let lasted = (snapshot["endedAt"] as! NSNumber).int64Value - (snapshot["createdAt"] as! NSNumber).int64Value
        XCTAssertGreaterThanOrEqual(lasted, 1500)
    }

    func testGlareSecondInviteIsRefusedAndNeitherUserHasTwoCalls() throws {
        let server = try ServerProcess()
        let alice = try device(server, "alice", "laptop")
        let bob = try device(server, "bob", "phone")
        let (first, _) = try invite(alice, "bob")
        _ = try bob.waitFor(type: "call.incoming", callID: first)
        let second = try bob.request("call.invite", ["callee": "alice"])
        XCTAssertEqual(second.status, "rejected")
        XCTAssertEqual(second.code, "glare")
        XCTAssertFalse(alice.pending.contains { $0.type == "call.incoming" }, "alice must not ring for a second call")
        // The documented resolution: bob answers the call that already rings.
        let revision = try XCTUnwrap(try bob.request("call.get", ["callID": first]).revision)
        XCTAssertEqual(try bob.request("call.answer", ["callID": first, "revision": revision]).status, "accepted")
    }

    func testCalleeInAnotherCallGetsBusy() throws {
        let server = try ServerProcess()
        let alice = try device(server, "alice", "laptop")
        let bob = try device(server, "bob", "phone")
        let carol = try device(server, "carol", "phone")
        let (callID, _) = try invite(alice, "bob")
        let revision = try XCTUnwrap(try bob.waitFor(type: "call.incoming", callID: callID).revision)
        XCTAssertEqual(try bob.request("call.answer", ["callID": callID, "revision": revision]).status, "accepted")
        let busy = try carol.request("call.invite", ["callee": "bob"])
        XCTAssertEqual(busy.status, "accepted")
        XCTAssertEqual(busy.phase, "ended")
        XCTAssertEqual(busy.endReason, "busy")
        XCTAssertNil(busy.snapshot, "an accepted result carries the phase, not the snapshot")
    }

    func testDuplicateEventIDReturnsTheFirstResultAndReuseIsRefused() throws {
        let server = try ServerProcess()
        let alice = try device(server, "alice", "laptop")
        let bob = try device(server, "bob", "phone")
        let first = try alice.request("call.invite", eventID: "inv-1", ["callee": "bob"])
        XCTAssertEqual(first.status, "accepted")
        let callID = try XCTUnwrap(first.callID)
        let retry = try alice.request("call.invite", eventID: "inv-1", ["callee": "bob"])
        XCTAssertEqual(retry.status, "duplicate")
        XCTAssertEqual((retry["first"] as? [String: Any])?["callID"] as? String, callID)
        let reused = try alice.request("call.cancel", eventID: "inv-1", ["callID": callID])
        XCTAssertEqual(reused.code, "eventIDReused")
        // Exactly one incoming call reached bob: the retry did not ring again.
        _ = try bob.waitFor(type: "call.incoming", callID: callID)
        Thread.sleep(forTimeInterval: 0.3)
        XCTAssertFalse(bob.pending.contains { $0.type == "call.incoming" })
    }

    func testAccountCannotActOnAnotherAccountsCall() throws {
        let server = try ServerProcess()
        let alice = try device(server, "alice", "laptop")
        _ = try device(server, "bob", "phone")
        let mallory = try device(server, "mallory", "phone")
        let (callID, revision) = try invite(alice, "bob")
        let answer = try mallory.request("call.answer", ["callID": callID, "revision": revision])
        XCTAssertEqual(answer.code, "callNotFound")
        XCTAssertNil(answer.snapshot, "no snapshot leaks to strangers")
        XCTAssertEqual(try mallory.request("call.hangup", ["callID": callID]).code, "callNotFound")
    }
}
