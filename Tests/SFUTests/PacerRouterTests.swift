import RTP
import XCTest
@testable import SFU

/// The router's side of pacing (Router+Pacing.swift): what rate to pace by, the kind of the
/// packet just routed, and the repair of a frame the pacer dropped.
final class PacerRouterTests: XCTestCase {
    /// No estimate to pace by until the subscriber gave feedback: a REMB (or transport-cc)
    /// makes the estimator's figure the pacing estimate.
    func testPacingEstimateWaitsForFeedback() throws {
        let router = makeRouter()
        try router.join(alice, room: room, description: receiver("a"), now: 0)
        try router.join(bob, room: room, description: receiver("b"), now: 0)
        XCTAssertNil(router.pacingEstimate(bob, now: 0), "the start value is a guess")
        XCTAssertNotNil(router.downlinkEstimate(bob, now: 0))
        _ = try rtcp(router, from: bob, [.remb(RTCPReceiverEstimatedMaxBitrate(senderSSRC: 1, bitrate: 400_000, ssrcs: []))], now: 1_000)
        XCTAssertEqual(router.pacingEstimate(bob, now: 2_000), 400_000)
        XCTAssertNil(router.pacingEstimate(ParticipantID(99), now: 2_000))
    }

    func testLastRoutedKindFollowsTheTrack() throws {
        let router = makeRouter()
        try router.join(alice, room: room, description: receiver("a"), now: 0)
        try router.join(bob, room: room, description: receiver("b"), now: 0)
        try router.publish(alice, track: audioTrack("mic", ssrc: 0x52), now: 0)
        try router.publish(alice, track: videoTrack("cam", layers: [StreamDescription(ssrc: 0x51)]), now: 0)
        _ = try send(router, from: alice, rtpPacket(ssrc: 0x52, seq: 1, ts: 960, pt: 111), now: 1_000)
        XCTAssertEqual(router.lastRoutedKind, .audio)
        _ = try send(router, from: alice, rtpPacket(ssrc: 0x51, seq: 1, ts: 3_000, pt: 96, payload: vp8Keyframe), now: 2_000)
        XCTAssertEqual(router.lastRoutedKind, .video)
    }

    /// After a dropped frame the subscription forwards nothing until a keyframe (which is
    /// requested), then continues its outgoing sequence without a gap.
    func testDroppedFrameStopsTheStreamUntilAKeyframeAndRequestsOne() throws {
        let router = makeRouter()
        try router.join(alice, room: room, description: receiver("a"), now: 0)
        try router.join(bob, room: room, description: receiver("b"), now: 0)
        try router.publish(alice, track: videoTrack("cam", layers: [StreamDescription(ssrc: 0x51)]), now: 0)
        _ = router.tick(now: 0, ntp: NTPTime(raw: 0))  // the join's own request
        let bobSees = try XCTUnwrap(router.subscriptions(of: bob).first?.ssrc)
        var out = try send(router, from: alice, rtpPacket(ssrc: 0x51, seq: 10, ts: 3_000, pt: 96, payload: vp8Keyframe), now: 1_000_000)
        out += try send(router, from: alice, rtpPacket(ssrc: 0x51, seq: 11, ts: 6_000, pt: 96, payload: vp8Delta), now: 1_033_000)
        XCTAssertEqual(out.count, 2)
        let lastSeq = try XCTUnwrap(out.last?.seq)

        XCTAssertTrue(router.pacerDroppedFrame(subscriber: bob, ssrc: bobSees))
        XCTAssertFalse(router.pacerDroppedFrame(subscriber: bob, ssrc: 0xDEAD), "no such subscription")
        XCTAssertEqual(try send(router, from: alice, rtpPacket(ssrc: 0x51, seq: 12, ts: 9_000, pt: 96, payload: vp8Delta), now: 1_066_000).count, 0,
                       "delta frames stop: they reference the dropped one")
        XCTAssertEqual(keyframeRequests(router.tick(now: 1_100_000, ntp: NTPTime(raw: 0))).map(\.1), [0x51])
        let resumed = try send(router, from: alice, rtpPacket(ssrc: 0x51, seq: 13, ts: 12_000, pt: 96, payload: vp8Keyframe), now: 1_200_000)
        XCTAssertEqual(resumed.map(\.seq), [lastSeq &+ 1], "forwarding resumes at the keyframe, the sequence continuous")
    }
}
