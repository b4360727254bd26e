import Foundation
import Peer
import XCTest

/// Synthetic peers exchange Opus audio end to end through the server's SFU (issue 3,
/// "Integration against the real server binary"): each decodes the others' tones with libopus
/// and tells them apart by the msid stream id the server's offer announces.
final class RoomPeerTests: RoomPeerCase {
    func testTwoPeersDecodeEachOthersTone() throws {
        let started = Date()
        let server = try startServer()
        let alice = try join(server, "alice", "laptop", frequency: 440, room: "r1")
        let bob = try join(server, "bob", "phone", frequency: 660, room: "r1")
        XCTAssertEqual(bob.room.members, [alice.key], "the join result lists the member already there")
        try assertEveryoneHearsEveryone([alice, bob])
        for member in [alice, bob] {
            XCTAssertNotNil(member.room.generation, "\(member.key) negotiated")
        }
        print("two-peer room test took \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
    }

    /// Two peers talk; a third joins mid-call (both get a server offer adding its track, it
    /// gets one with both of theirs); everyone decodes the two others; then it leaves and the
    /// two get room.memberLeft and a server offer without its track, and its audio stops.
    func testThreePeersEachDecodeTheTwoOthersThenOneLeaves() throws {
        let started = Date()
        let server = try startServer()
        let alice = try join(server, "alice", "laptop", frequency: 440, room: "r1")
        let bob = try join(server, "bob", "phone", frequency: 660, room: "r1")
        try assertEveryoneHearsEveryone([alice, bob])

        let carol = try join(server, "carol", "desk", frequency: 880, room: "r1")
        XCTAssertEqual(Set(carol.room.members), [alice.key, bob.key])
        let everyone = [alice, bob, carol]
        try assertEveryoneHearsEveryone(everyone)
        for member in [alice, bob] {
            XCTAssertTrue(member.room.events.contains(.memberJoined(room: "r1", member: carol.key)), "\(member.key): \(member.room.events)")
            XCTAssertTrue(Self.offer(member.room.lastServerOffer, sends: carol.key), "\(member.key)'s last offer sends carol's track")
        }

        try carol.room.leave()
        for member in [alice, bob] {
            let reason = try awaitDeparture(of: carol.key, at: member, among: [alice, bob], timeout: 10)
            XCTAssertEqual(reason, "left")
        }
        // Carol's audio stops (her track is gone), the others' goes on.
        for member in [alice, bob] {
            XCTAssertEqual(packetGrowth(member, from: carol.key, over: 0.5), 0, "\(member.key) still receives carol")
        }
        XCTAssertGreaterThan(packetGrowth(alice, from: bob.key, over: 0.5), 10, "alice still receives bob")
        XCTAssertGreaterThan(packetGrowth(bob, from: alice.key, over: 0.5), 10, "bob still receives alice")
        print("three-peer room test took \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
    }

    /// After a member leaves, the next one to join takes its freed m-line in the others'
    /// sessions (RFC 8829 §5.2.2: m-lines are recycled, never removed) and is heard on it.
    func testPeerJoiningAfterALeaveTakesTheFreedSectionAndIsHeard() throws {
        let started = Date()
        let server = try startServer()
        let alice = try join(server, "alice", "laptop", frequency: 440, room: "r1")
        let bob = try join(server, "bob", "phone", frequency: 660, room: "r1")
        let carol = try join(server, "carol", "desk", frequency: 880, room: "r1")
        try assertEveryoneHearsEveryone([alice, bob, carol])
        let sectionsBefore = try sectionCount(alice.room.lastServerOffer)

        try carol.room.leave()
        _ = try awaitDeparture(of: carol.key, at: alice, among: [alice, bob], timeout: 10)
        carol.peer.close()

        let dave = try join(server, "dave", "tablet", frequency: 1100, room: "r1")
        try assertEveryoneHearsEveryone([alice, bob, dave])
        XCTAssertTrue(Self.offer(alice.room.lastServerOffer, sends: dave.key))
        XCTAssertEqual(try sectionCount(alice.room.lastServerOffer), sectionsBefore,
                       "dave's track reuses carol's freed section:\n\(alice.room.lastServerOffer ?? "")")
        print("join-after-leave test took \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
    }

    /// Audio and VP8-shaped video from both peers: each receives the other's video frames
    /// (marker bit) including a keyframe, with well-formed payload descriptors.
    func testAudioAndVideoFlowBetweenTwoPeers() throws {
        let server = try startServer()
        let alice = try join(server, "alice", "laptop", frequency: 440, room: "r1", video: true)
        let bob = try join(server, "bob", "phone", frequency: 660, room: "r1", video: true)
        try assertEveryoneHearsEveryone([alice, bob])
        let pairs = [(alice, bob), (bob, alice)]
        // 25 fps: a second of video is 25 frames. A keyframe arrives within it: the peer sends
        // one every 2 s, and the SFU asks the publisher for one (PLI) when a subscriber joins.
        try pump([alice, bob], timeout: 10) {
            pairs.allSatisfy { ($0.0.videoStream(from: $0.1.key)?.frames ?? 0) >= 25 }
        }
        for (member, publisher) in pairs {
            let video = try XCTUnwrap(member.videoStream(from: publisher.key), "\(member.key) got no video from \(publisher.key): \(member.peer.report().streams)")
            XCTAssertGreaterThanOrEqual(video.frames, 25, "\(member.key) ← \(publisher.key) video")
            XCTAssertGreaterThanOrEqual(video.keyframes, 1, "\(member.key) ← \(publisher.key) keyframes")
            XCTAssertEqual(video.malformedDescriptors, 0)
            let loss = video.expectedPackets > 0 ? Double(max(0, video.lost)) / Double(video.expectedPackets) : 1
            XCTAssertLessThanOrEqual(loss, Self.maximumLossRatio, "\(member.key) ← \(publisher.key) video: lost \(video.lost) of \(video.expectedPackets)")
            print("\(member.key) ← \(publisher.key) video: \(video.packets) packets, \(video.frames) frames, \(video.keyframes) keyframes, lost \(video.lost)/\(video.expectedPackets), out of order \(video.outOfOrder)")
        }
        let report = alice.peer.report(analyzingTones: false)
        print("alice sent \(report.sentVideoFrames) video frames in \(report.sentVideoPackets) packets; RTCP received \(report.rtcpPackets), RTT \(report.roundTripMilliseconds.map { String(format: "%.2f ms", $0) } ?? "-")")
    }

    /// Glare (protocol §9, W3C perfect negotiation): a device re-offers while the server's
    /// offer to it is outstanding; the server refuses with `glare`, the device (polite)
    /// answers the server's offer and its retried offer is accepted; media keeps flowing.
    func testDeviceOfferDuringAnOutstandingServerOfferResolvesGlarePolitely() throws {
        let server = try startServer()
        let alice = try join(server, "alice", "laptop", frequency: 440, room: "r1")
        let bob = try join(server, "bob", "phone", frequency: 660, room: "r1")
        try assertEveryoneHearsEveryone([alice, bob])
        let before = try XCTUnwrap(alice.room.generation)

        // Carol joins: the server offers alice a section for carol's track; alice does not
        // answer it yet, and offers again instead (as a device adding a track would).
        let carol = try join(server, "carol", "desk", frequency: 880, room: "r1")
        try alice.signaling.waitFor(timeout: 10, remove: false) { $0.type == "sfu.offer" && $0.eventID == nil }
        try alice.room.publish()
        XCTAssertGreaterThan(try XCTUnwrap(alice.room.generation), before, "alice answered the server's offer before her retry")
        XCTAssertTrue(Self.offer(alice.room.lastServerOffer, sends: carol.key))
        XCTAssertEqual(alice.room.glareRefusals, 1, "the server refused the first try with glare")
        try assertEveryoneHearsEveryone([alice, bob, carol])
    }

    private func sectionCount(_ sdp: String?) throws -> Int {
        try RemoteDescription(parsing: XCTUnwrap(sdp, "no server offer answered")).sections.count
    }
}
