import Foundation
import SignalingClient
import XCTest

/// Ringing a group call: every device of each invitee rings; per-member accepted, declined,
/// busy, noAnswer; ring events are durable (docs/protocol.md §9).
final class RoomRingingTests: IntegrationCase {
    func testGroupRingEndsPerMemberAsAcceptedDeclinedBusyOrNoAnswer() throws {
        let server = try ServerProcess(settings: ["call.ring_timeout": "2s", "call.invite_lifetime": "3s"])
        let alice = try device(server, "alice", "laptop")
        let bobPhone = try device(server, "bob", "phone")
        let bobTablet = try device(server, "bob", "tablet")
        let carol = try device(server, "carol", "phone")
        let dave = try device(server, "dave", "phone")
        let erin = try device(server, "erin", "phone")
        let frank = try device(server, "frank", "phone")
        // carol is busy in a 1:1 call with dave.
        let (callID, _) = try invite(dave, "carol")
        let revision = try XCTUnwrap(try carol.waitFor(type: "call.incoming", callID: callID).revision)
        XCTAssertEqual(try carol.request("call.answer", ["callID": callID, "revision": revision]).status, "accepted")

        XCTAssertEqual(try alice.request("room.join", ["room": "team"]).status, "accepted")
        let rung = try alice.request("room.ring", ["room": "team", "invitees": ["bob", "carol", "erin", "frank"]])
        XCTAssertEqual(rung.status, "accepted", "\(rung)")
        let states = Dictionary(uniqueKeysWithValues: (rung["invitees"] as? [[String: Any]] ?? []).map {
            ($0["account"] as? String ?? "", $0["state"] as? String ?? "") })
        XCTAssertEqual(states, ["bob": "ringing", "carol": "busy", "erin": "ringing", "frank": "ringing"])

        for device in [bobPhone, bobTablet, erin, frank] {
            let incoming = try device.waitFor(type: "room.incoming")
            XCTAssertEqual(incoming["room"] as? String, "team")
            XCTAssertNotNil(incoming.seq, "ring events are durable")
        }
        XCTAssertFalse(carol.pending.contains { $0.type == "room.incoming" }, "a busy member never rings")

        // bob accepts on the tablet: his phone stops ringing, alice learns it.
        XCTAssertEqual(try bobTablet.request("room.accept", ["room": "team"]).status, "accepted")
        XCTAssertNotNil(try bobPhone.waitFor { $0.type == "room.ringState" && $0["account"] as? String == "bob" && $0["state"] as? String == "accepted" })
        XCTAssertEqual(try alice.waitFor { $0.type == "room.ringState" && $0["account"] as? String == "bob" && $0["state"] as? String == "accepted" }.type,
                       "room.ringState")
        XCTAssertEqual(try bobTablet.request("room.join", ["room": "team"]).status, "accepted")

        // frank declines; erin never answers.
        XCTAssertEqual(try frank.request("room.decline", ["room": "team"]).status, "accepted")
        XCTAssertNotNil(try alice.waitFor { $0.type == "room.ringState" && $0["account"] as? String == "frank" && $0["state"] as? String == "declined" })
        XCTAssertNotNil(try erin.waitFor(timeout: 10) { $0.type == "room.ringState" && $0["account"] as? String == "erin" && $0["state"] as? String == "noAnswer" })
        XCTAssertNotNil(try alice.waitFor { $0.type == "room.ringState" && $0["account"] as? String == "erin" && $0["state"] as? String == "noAnswer" })
        XCTAssertEqual(try frank.request("room.accept", ["room": "team"]).code, "notRinging")
        // Invited members may still join while the room is live.
        XCTAssertEqual(try erin.request("room.join", ["room": "team"]).status, "accepted")
    }

    func testOnlyMembersCanRing() throws {
        let server = try ServerProcess()
        let alice = try device(server, "alice", "laptop")
        XCTAssertEqual(try alice.request("room.ring", ["room": "team", "invitees": ["bob"]]).code, "notInRoom")
        alice.sendRaw(#"{"v":1,"type":"room.ring","eventID":"r1","room":"team","invitees":[]}"#)
        XCTAssertEqual(try alice.waitFor(type: "error").code, "malformed")
    }
}
