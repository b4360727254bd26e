import Foundation
import Peer
import SignalingClient
import XCTest

/// Message building and parsing for docs/protocol.md §9 (the server side is not there yet).
final class RoomMessagesTests: XCTestCase {
    func testCommandsCarryTheProtocolFields() throws {
        XCTAssertEqual(try RoomMessages.join(room: "standup.daily").type, "room.join")
        XCTAssertEqual(try RoomMessages.join(room: "standup.daily").fields as NSDictionary, ["room": "standup.daily"])
        XCTAssertEqual(try RoomMessages.leave(room: "r1").type, "room.leave")
        let ring = try RoomMessages.ring(room: "r1", invitees: ["bob", "carol"])
        XCTAssertEqual(ring.fields as NSDictionary, ["room": "r1", "invitees": ["bob", "carol"]])
        let offer = try RoomMessages.offer(room: "r1", sdp: "v=0\r\n")
        XCTAssertEqual(offer.type, "sfu.offer")
        XCTAssertEqual(offer.fields as NSDictionary, ["room": "r1", "sdp": "v=0\r\n"])
        let answer = try RoomMessages.answer(room: "r1", generation: 7, sdp: "v=0\r\n")
        XCTAssertEqual(answer.type, "sfu.answer")
        XCTAssertEqual(answer.fields as NSDictionary, ["room": "r1", "generation": 7, "sdp": "v=0\r\n"])
        // The frame SignalingClient sends is valid JSON with these fields.
        let data = try JSONSerialization.data(withJSONObject: answer.fields)
        let back = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
        XCTAssertEqual((back["generation"] as? NSNumber)?.int64Value, 7)
    }

    func testRoomNamesAreValidated() {
        for bad in ["", String(repeating: "a", count: 65), "room with spaces", "r/1", "ünï"] {
            XCTAssertThrowsError(try RoomMessages.join(room: bad)) { XCTAssertEqual(($0 as? PeerError)?.code, "invalidParameter") }
        }
        XCTAssertNoThrow(try RoomMessages.join(room: String(repeating: "a", count: 64)))
        XCTAssertNoThrow(try RoomMessages.join(room: "A-z_0.9:x"))
        XCTAssertThrowsError(try RoomMessages.ring(room: "r", invitees: []))
    }

    func testResultsParse() throws {
        func frame(_ text: String) throws -> [String: Any] { try XCTUnwrap(ServerFrame(text: text)).object }
        XCTAssertEqual(try RoomMessages.outcome(ofResult: frame(
            #"{"v":1,"type":"result","eventID":"e1","status":"accepted","generation":3,"sdp":"v=0"}"#)),
            .answered(generation: 3, sdp: "v=0"))
        XCTAssertEqual(try RoomMessages.outcome(ofResult: frame(
            #"{"v":1,"type":"result","eventID":"e2","status":"accepted","members":["alice/laptop",{"account":"bob","device":"phone"}]}"#)),
            .accepted(members: ["alice/laptop", "bob/phone"]))
        XCTAssertEqual(try RoomMessages.outcome(ofResult: frame(
            #"{"v":1,"type":"result","eventID":"e3","status":"rejected","code":"glare","message":"server offer pending"}"#)),
            .rejected(code: "glare", message: "server offer pending"))
        XCTAssertEqual(try RoomMessages.outcome(ofResult: frame(#"{"v":1,"type":"result","eventID":"e4","status":"duplicate","first":{}}"#)),
                       .duplicate)
        XCTAssertThrowsError(try RoomMessages.outcome(ofResult: frame(#"{"v":1,"type":"pong"}"#)))
        XCTAssertThrowsError(try RoomMessages.outcome(ofResult: frame(#"{"v":1,"type":"result","status":"maybe"}"#)))
    }

    func testEventsParse() throws {
        func event(_ text: String) throws -> RoomMessages.Event? { RoomMessages.event(try XCTUnwrap(ServerFrame(text: text)).object) }
        XCTAssertEqual(try event(#"{"v":1,"type":"sfu.offer","room":"r1","generation":4,"sdp":"v=0"}"#),
                       .serverOffer(room: "r1", generation: 4, sdp: "v=0"))
        XCTAssertEqual(try event(#"{"v":1,"type":"room.memberJoined","room":"r1","member":"bob/phone"}"#),
                       .memberJoined(room: "r1", member: "bob/phone"))
        XCTAssertEqual(try event(#"{"v":1,"type":"room.memberLeft","room":"r1","member":{"account":"bob","device":"phone"},"reason":"consentExpired"}"#),
                       .memberLeft(room: "r1", member: "bob/phone", reason: "consentExpired"))
        XCTAssertEqual(try event(#"{"v":1,"type":"room.incoming","seq":"5","room":"r1","from":"alice","expiresAt":1764440090000}"#),
                       .incoming(room: "r1", from: "alice", expiresAt: 1_764_440_090_000))
        XCTAssertEqual(try event(#"{"v":1,"type":"room.ringState","seq":"6","room":"r1","member":"bob","state":"busy"}"#),
                       .ringState(room: "r1", member: "bob", state: "busy"))
        XCTAssertNil(try event(#"{"v":1,"type":"sfu.offer","room":"r1","sdp":"v=0"}"#), "no generation")
        XCTAssertNil(try event(#"{"v":1,"type":"call.incoming","callID":"c1"}"#))
    }
}
