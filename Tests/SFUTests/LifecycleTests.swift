import RTP
import XCTest
@testable import SFU

final class LifecycleTests: XCTestCase {
    func testMuteStopsForwardingAndUnmuteResumesWithoutASequenceGap() throws {
        let router = makeRouter()
        try router.join(alice, room: room, description: receiver("a"), now: 0)
        try router.join(bob, room: room, description: receiver("b"), now: 0)
        try router.publish(alice, track: audioTrack("mic", ssrc: 1), now: 0)
        let before = try send(router, from: alice, rtpPacket(ssrc: 1, seq: 10, ts: 0, pt: 111), now: 0)
        try router.setMuted(alice, track: TrackID("mic"), muted: true)
        XCTAssertEqual(disposition(router, from: alice, rtpPacket(ssrc: 1, seq: 11, ts: 960, pt: 111), now: 20_000), .muted)
        XCTAssertEqual(disposition(router, from: alice, rtpPacket(ssrc: 1, seq: 12, ts: 1920, pt: 111), now: 40_000), .muted)
        try router.setMuted(alice, track: TrackID("mic"), muted: false)
        let after = try send(router, from: alice, rtpPacket(ssrc: 1, seq: 13, ts: 2880, pt: 111), now: 60_000)
        XCTAssertEqual(after.first?.seq, before.first.map { $0.seq &+ 1 }, "no fake loss for the muted interval")
        XCTAssertEqual(after.first?.ts, before.first.map { $0.ts &+ 2880 }, "timestamps keep real time")
        XCTAssertEqual(router.trackStats(alice, track: TrackID("mic"))?.droppedMuted, 2)
    }

    func testUnmutedVideoWaitsForKeyframeAndAsksForOne() throws {
        let router = makeRouter()
        try router.join(alice, room: room, description: receiver("a"), now: 0)
        try router.join(bob, room: room, description: receiver("b"), now: 0)
        try router.publish(alice, track: videoTrack("cam", layers: [StreamDescription(ssrc: 5)]), now: 0)
        _ = router.tick(now: 0, ntp: NTPTime(raw: 0))
        XCTAssertEqual(try send(router, from: alice, rtpPacket(ssrc: 5, seq: 1, ts: 0, pt: 96, payload: vp8Keyframe), now: 0).count, 1)
        try router.setMuted(alice, track: TrackID("cam"), muted: true)
        try router.setMuted(alice, track: TrackID("cam"), muted: false)
        XCTAssertEqual(try send(router, from: alice, rtpPacket(ssrc: 5, seq: 2, ts: 90, pt: 96, payload: vp8Delta), now: 10_000).count, 0)
        XCTAssertEqual(keyframeRequests(router.tick(now: 600_000, ntp: NTPTime(raw: 0))).map(\.1), [5])
        XCTAssertEqual(try send(router, from: alice, rtpPacket(ssrc: 5, seq: 3, ts: 180, pt: 96, payload: vp8Keyframe), now: 700_000).count, 1)
    }

    func testUnpublishStopsForwardingFreesStateAndSaysBye() throws {
        let router = makeRouter()
        try router.join(alice, room: room, description: receiver("a"), now: 0)
        try router.join(bob, room: room, description: receiver("b"), now: 0)
        try router.publish(alice, track: audioTrack("mic", ssrc: 1), now: 0)
        let outgoing = try XCTUnwrap(router.subscriptions(of: bob).first?.ssrc)
        XCTAssertEqual(try send(router, from: alice, rtpPacket(ssrc: 1, seq: 1, ts: 0, pt: 111), now: 0).count, 1)
        XCTAssertEqual(router.counts.subscriptions, 1)
        try router.unpublish(alice, track: TrackID("mic"))
        XCTAssertEqual(disposition(router, from: alice, rtpPacket(ssrc: 1, seq: 2, ts: 960, pt: 111), now: 20_000), .unknownSSRC)
        XCTAssertEqual(router.counts, RouterCounts(rooms: 1, participants: 2, tracks: 0, subscriptions: 0, inboundSSRCs: 0, pendingKeyframeRequests: 0))
        XCTAssertTrue(router.subscriptions(of: bob).isEmpty)
        let bye = router.tick(now: 20_000, ntp: NTPTime(raw: 0))
        XCTAssertEqual(bye, [OutgoingRTCP(participant: bob, packets: [.goodbye(RTCPGoodbye(ssrcs: [outgoing]))])])
        XCTAssertThrowsError(try router.unpublish(alice, track: TrackID("mic"))) { XCTAssertEqual($0 as? SFUError, .unknownTrack) }
        // Feedback naming the freed SSRC is now unknown.
        _ = try rtcp(router, from: bob, [.pictureLossIndication(RTCPPictureLossIndication(senderSSRC: 1, mediaSSRC: outgoing))], now: 30_000)
        XCTAssertEqual(router.participantStats(bob)?.unknownFeedbackSSRC, 1)
    }

    func testLeaveStopsForwardingBothWaysAndFreesAllState() throws {
        let router = makeRouter()
        for (index, person) in [alice, bob, carol].enumerated() {
            try router.join(person, room: room, description: receiver("c"), now: 0)
            try router.publish(person, track: audioTrack("mic", ssrc: 10 + UInt32(index)), now: 0)
            try router.publish(person, track: videoTrack("cam", layers: [StreamDescription(ssrc: 20 + UInt32(index))]), now: 0)
        }
        XCTAssertEqual(router.counts.subscriptions, 12)
        try router.leave(bob)
        XCTAssertEqual(router.counts.subscriptions, 4)
        XCTAssertEqual(try send(router, from: alice, rtpPacket(ssrc: 10, seq: 1, ts: 0, pt: 111), now: 0).map(\.subscriber), [carol])
        XCTAssertEqual(disposition(router, from: bob, rtpPacket(ssrc: 11, seq: 1, ts: 0, pt: 111), now: 0), .unknownParticipant)
        XCTAssertEqual(router.members(of: room), [alice, carol])
        try router.leave(alice)
        try router.leave(carol)
        _ = router.tick(now: 10_000_000, ntp: NTPTime(raw: 0))
        XCTAssertEqual(router.counts, RouterCounts(rooms: 0, participants: 0, tracks: 0, subscriptions: 0, inboundSSRCs: 0, pendingKeyframeRequests: 0))
        XCTAssertThrowsError(try router.leave(carol)) { XCTAssertEqual($0 as? SFUError, .unknownParticipant) }
    }

    func testJoinerSubscribesToExistingTracksAndBadInputIsRefused() throws {
        let router = makeRouter()
        try router.join(alice, room: room, description: receiver("a"), now: 0)
        try router.publish(alice, track: audioTrack("mic", ssrc: 1), now: 0)
        XCTAssertThrowsError(try router.join(alice, room: room, description: receiver("a"), now: 0)) { XCTAssertEqual($0 as? SFUError, .participantExists) }
        XCTAssertThrowsError(try router.publish(alice, track: audioTrack("other", ssrc: 1), now: 0)) { XCTAssertEqual($0 as? SFUError, .ssrcInUse(1)) }
        XCTAssertThrowsError(try router.publish(alice, track: videoTrack("v", layers: []), now: 0)) { XCTAssertEqual($0 as? SFUError, .badLayerCount) }
        XCTAssertThrowsError(try router.publish(alice, track: TrackDescription(id: TrackID("x"), kind: .audio, codecs: [CodecDescription(name: "opus", payloadType: 200, clockRate: 48000)], layers: [StreamDescription(ssrc: 3)]), now: 0)) {
            XCTAssertEqual($0 as? SFUError, .badCodec)
        }
        try router.join(bob, room: room, description: receiver("b"), now: 0)
        XCTAssertEqual(router.subscriptions(of: bob).map(\.track), [TrackID("mic")])
        XCTAssertEqual(try send(router, from: alice, rtpPacket(ssrc: 1, seq: 1, ts: 0, pt: 111), now: 0).map(\.subscriber), [bob])
        // A participant in another room gets nothing.
        try router.join(carol, room: RoomID("elsewhere"), description: receiver("c"), now: 0)
        XCTAssertTrue(router.subscriptions(of: carol).isEmpty)
    }
}
