import CallCore
import Foundation
@testable import Signaling
import Storage
import XCTest

/// Replay of outbox entries after a reconnect (docs/protocol.md §3): call events stored
/// compactly (``StoredNotice``) come back as the bytes a live device got; JSON payloads
/// (rows of older builds, room ringing) as stored; a row that does not decode is skipped and
/// logged, and the rest still arrive.
final class OutboxReplayTests: XCTestCase {
    private func sent(_ actions: [HubAction], to id: ConnectionID) -> [String] {
        actions.compactMap { action in
            guard case .send(let target, let text) = action, target == id else { return nil }
            return text.text
        }
    }

    /// An event replayed after a reconnect has the bytes it had live (its seq and server
    /// time are stored; no TURN is configured here).
    func testAReplayedEventHasTheBytesOfTheLiveOne() throws {
        let h = try HubHarness()
        let (tablet, _) = h.connect("bob", "tablet")
        let (caller, _) = h.connect("alice", "laptop")
        let invite = h.send(caller, ["type": "call.invite", "eventID": "i1", "callee": "bob", "sdp": "v=0\r\ns=\u{e9}\"\r\n"])
        let live = sent(invite, to: tablet)
        XCTAssertEqual(live.count, 1)
        XCTAssertTrue(live[0].hasPrefix(#"{"v":1,"seq":"1","type":"call.incoming""#), live[0])
        h.hub.connectionClosed(tablet, time: h.time)
        h.advance(ms: 1_000)
        let (back, replay) = h.connect("bob", "tablet", cursor: 0)
        XCTAssertEqual(HubHarness.types(replay, to: back), ["welcome", "call.incoming", "caughtUp"])
        XCTAssertEqual(sent(replay, to: back)[1], live[0])
    }

    /// A payload stored as JSON (by an older build) is spliced and sent as before, and so is
    /// the next, compact one.
    func testJSONPayloadsOfOlderBuildsAreReplayedAsStored() throws {
        let h = try HubHarness()
        let (first, _) = h.connect("bob", "phone")
        h.hub.connectionClosed(first, time: h.time)
        let json = #"{"v":1,"type":"call.state","callID":"old","revision":3,"serverTime":5,"phase":"active"}"#
        try h.store.commit(StepCommit(callID: "#legacy", expectedRevision: nil,
                                      outbox: [(StoredDeviceKey(account: "bob", device: "phone"), Data(json.utf8))], now: 5))
        let notice = StoredNotice(callID: "c9", serverTime: 6,
                                  notice: .sdpOffer(from: DeviceKey(account: "alice", device: "laptop"), generation: 1,
                                                    sdp: SessionDescription(sdp: "v=0\r\n")))
        try h.store.commit(StepCommit(callID: "#compact", expectedRevision: nil,
                                      outbox: [(StoredDeviceKey(account: "bob", device: "phone"), notice.encode())], now: 6))
        let (id, actions) = h.connect("bob", "phone", cursor: 0)
        let frames = sent(actions, to: id)
        XCTAssertEqual(frames.count, 4)
        XCTAssertEqual(frames[1], #"{"v":1,"seq":"1","type":"call.state","callID":"old","revision":3,"serverTime":5,"phase":"active"}"#)
        XCTAssertEqual(frames[2], #"{"v":1,"seq":"2","type":"sdp.offer","callID":"c9","serverTime":6,"generation":1,"from":{"account":"alice","device":"laptop"},"sdp":"v=0\r\n"}"#)
    }

    /// A compact row that does not decode is skipped (logged with the device and seq); the
    /// entries after it still arrive, in order.
    func testAnUnreadableRowIsSkippedAndLogged() throws {
        let h = try HubHarness()
        let (first, _) = h.connect("bob", "phone")
        h.hub.connectionClosed(first, time: h.time)
        let json = #"{"v":1,"type":"room.ringing","room":"r1"}"#
        try h.store.commit(StepCommit(callID: "#bad", expectedRevision: nil,
                                      outbox: [(StoredDeviceKey(account: "bob", device: "phone"), Data([StoredNotice.formatTag, 0, 0xFF])),
                                               (StoredDeviceKey(account: "bob", device: "phone"), Data(json.utf8))], now: 5))
        let (id, actions) = h.connect("bob", "phone", cursor: 0)
        XCTAssertEqual(HubHarness.types(actions, to: id), ["welcome", "room.ringing", "caughtUp"])
        XCTAssertTrue(sent(actions, to: id)[1].hasPrefix(#"{"v":1,"seq":"2","#))
        XCTAssertTrue(h.logs.lines.contains { $0.contains("outbox entry unreadable") && $0.contains("\"seq\":1") },
                      h.logs.lines.joined(separator: "\n"))
    }
}
