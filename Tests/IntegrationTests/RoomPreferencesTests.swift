import Foundation
import Peer
import SignalingClient
import XCTest

/// `sfu.preferences` through the real binary (issue 4: "per subscriber layer choice from …
/// the subscriber's requested maximum size"): a synthetic publisher sends VP8-shaped video, a
/// subscriber states how large it renders it; the server acknowledges, refuses bad or foreign
/// requests with their codes, and its SFU reports the subscriber's cap in /metrics.
///
/// The synthetic peer publishes one layer (no simulcast), so what is checked is the state the
/// router records (max layer, rendered size) rather than a layer switch; video keeps flowing
/// under a cap because the one layer is the lowest.
final class RoomPreferencesTests: RoomPeerCase {
    func testSubscriberPreferencesAreAcknowledgedRefusedWithCodesAndShownInMetrics() throws {
        let server = try startServer()
        let alice = try join(server, "alice", "laptop", frequency: 440, room: "r1", video: true)
        let bob = try join(server, "bob", "phone", frequency: 660, room: "r1")
        let videoMid = try XCTUnwrap(alice.peer.tracks.first { $0.codec == .vp8 }?.mid)
        let audioMid = try XCTUnwrap(alice.peer.tracks.first { $0.codec == .opus }?.mid)
        // The subscription exists once bob receives alice's video.
        let flowing = try pump([alice, bob], timeout: 20) { (bob.videoStream(from: alice.key)?.packets ?? 0) > 20 }
        XCTAssertTrue(flowing, "bob receives no video from alice")

        // Accepted: a 320x180 tile, at most the lowest layer.
        XCTAssertEqual(try bob.room.setPreferences(publisher: alice.key, mid: videoMid, maxWidth: 320, maxHeight: 180, maxLayer: 0),
                       .accepted(members: []))
        XCTAssertEqual(try preference(server, subscriber: bob.key, publisher: alice.key, track: videoMid),
                       Cap(maxLayer: 0, maxWidth: 320, maxHeight: 180))

        // Out of range: a `result` refusal carrying the code (nothing changes).
        XCTAssertEqual(try bob.room.setPreferences(publisher: alice.key, mid: videoMid, maxWidth: 0, maxHeight: 180),
                       .rejected(code: "badSize", message: "maxWidth and maxHeight must be integers in 1…16383"))
        XCTAssertEqual(try code(bob.room.setPreferences(publisher: alice.key, mid: videoMid, maxWidth: 16_384, maxHeight: 180)), "badSize")
        XCTAssertEqual(try code(bob.room.setPreferences(publisher: alice.key, mid: videoMid, maxWidth: 320, maxHeight: 180, maxLayer: 3)),
                       "badLayer")
        // A wrong type is a frame error (§4), no result.
        bob.signaling.sendRaw(#"{"v":1,"type":"sfu.preferences","eventID":"bad-type","room":"r1","publisher":"alice/laptop","mid":"1","maxWidth":"wide","maxHeight":180}"#)
        let frameError = try bob.signaling.waitFor { $0.type == "error" }
        XCTAssertEqual(frameError.code, "malformed")

        // A publisher that is not in the room (carol is in another room), bob himself, an
        // unknown mid and alice's audio track.
        let carol = try device(server, "carol", "desk")
        defer { carol.close() }
        XCTAssertEqual(try carol.request("room.join", ["room": "r2"]).status, "accepted")
        XCTAssertEqual(try code(bob.room.setPreferences(publisher: "carol/desk", mid: videoMid, maxWidth: 320, maxHeight: 180)),
                       "unknownPublisher")
        XCTAssertEqual(try code(bob.room.setPreferences(publisher: bob.key, mid: videoMid, maxWidth: 320, maxHeight: 180)),
                       "unknownPublisher")
        XCTAssertEqual(try code(bob.room.setPreferences(publisher: alice.key, mid: "9", maxWidth: 320, maxHeight: 180)), "unknownTrack")
        XCTAssertEqual(try code(bob.room.setPreferences(publisher: alice.key, mid: audioMid, maxWidth: 320, maxHeight: 180)), "unknownTrack")
        // A device outside the room cannot set preferences in it.
        let outsider = try carol.request("sfu.preferences", ["room": "r1", "publisher": alice.key, "mid": videoMid,
                                                             "maxWidth": 320, "maxHeight": 180])
        XCTAssertEqual(outsider.status, "rejected")
        XCTAssertEqual(outsider.code, "notInRoom")
        XCTAssertEqual(try preference(server, subscriber: bob.key, publisher: alice.key, track: videoMid),
                       Cap(maxLayer: 0, maxWidth: 320, maxHeight: 180), "refusals changed nothing")

        // The `track` form (the msid track id of the server's offer, as a browser reads it),
        // without maxLayer: the layer cap is lifted, the size replaced.
        let trackID = try XCTUnwrap(Self.msidTrackID(in: bob.room.lastServerOffer, streamID: "alice%2Flaptop", kind: "video"))
        let byTrack = try bob.signaling.request("sfu.preferences", ["room": "r1", "publisher": alice.key, "track": trackID,
                                                                    "maxWidth": 1280, "maxHeight": 720])
        XCTAssertEqual(byTrack.status, "accepted", "\(byTrack)")
        XCTAssertEqual(byTrack["command"] as? String, "sfu.preferences")
        XCTAssertEqual(try preference(server, subscriber: bob.key, publisher: alice.key, track: videoMid),
                       Cap(maxLayer: -1, maxWidth: 1280, maxHeight: 720))

        // Capped at the lowest layer (the only one): video goes on.
        _ = try bob.room.setPreferences(publisher: alice.key, mid: videoMid, maxWidth: 160, maxHeight: 90, maxLayer: 0)
        let before = bob.videoStream(from: alice.key)?.packets ?? 0
        try pump([alice, bob], timeout: 1) { false }
        let after = bob.videoStream(from: alice.key)?.packets ?? 0
        XCTAssertGreaterThan(after - before, 10, "video from alice stopped under a cap at its only layer")
        print("bob received \(after - before) video packets from alice in 1 s under the cap")
        // A single-layer track's target never changed: no reason series for it
        // (FlappingSimulcastTests reads one that did).
        let metrics = String(decoding: try http(server, "GET", "/metrics").body, as: UTF8.self)
        XCTAssertFalse(metrics.contains("switchboard_sfu_subscriber_layer_reason{publisher=\"\(alice.key)\""), "no layer change, no reason")
    }

    // MARK: Helpers

    struct Cap: Equatable {
        var maxLayer: Double
        var maxWidth: Double
        var maxHeight: Double
    }

    private func code(_ outcome: RoomMessages.Outcome) -> String? {
        if case .rejected(let code, _) = outcome { return code }
        return nil
    }

    /// The subscriber's cap for a track as /metrics reports it.
    private func preference(_ server: ServerProcess, subscriber: String, publisher: String, track: String,
                            file: StaticString = #filePath, line: UInt = #line) throws -> Cap {
        let text = String(decoding: try http(server, "GET", "/metrics").body, as: UTF8.self)
        let labels = "{publisher=\"\(publisher)\",track=\"\(track)\",kind=\"video\",subscriber=\"\(subscriber)\"}"
        func value(_ name: String) throws -> Double {
            let sample = try XCTUnwrap(text.split(separator: "\n").first { $0.hasPrefix(name + labels + " ") },
                                       "no \(name)\(labels) in /metrics", file: file, line: line)
            return try XCTUnwrap(Double(sample.split(separator: " ").last ?? ""), file: file, line: line)
        }
        return Cap(maxLayer: try value("switchboard_sfu_subscriber_max_layer"), maxWidth: try value("switchboard_sfu_subscriber_max_width"),
                   maxHeight: try value("switchboard_sfu_subscriber_max_height"))
    }

    /// The msid track id (`a=msid:<stream> <track>`) of the live `kind` section sending `streamID`.
    static func msidTrackID(in sdp: String?, streamID: String, kind: String) -> String? {
        guard let sdp else { return nil }
        for section in sdp.components(separatedBy: "\r\nm=").dropFirst() where section.hasPrefix(kind + " ") {
            for line in section.components(separatedBy: "\r\n") where line.hasPrefix("a=msid:\(streamID) ") {
                return String(line.dropFirst("a=msid:\(streamID) ".count))
            }
        }
        return nil
    }
}
