import RTP
import XCTest
@testable import SFU

/// `RouterConfig.holdUntilNegotiated`: nothing reaches a subscriber on an SSRC its browser
/// has not applied yet. Chromium drops such packets in its RtpDemuxer (no mid, no SSRC in
/// the remote description) before transport-cc records them, so they read as loss to our
/// estimator while no inbound-rtp stream counts them (BrowserSimulcastCapTests).
final class NegotiationHoldTests: XCTestCase {
    func heldRouter() -> Router {
        var config = RouterConfig(ssrcSeed: 42)
        config.holdUntilNegotiated = true
        return Router(config: config)
    }

    func testNothingIsForwardedToASubscriptionBeforeItIsNegotiated() throws {
        let router = heldRouter()
        try router.join(alice, room: room, description: receiver("a"), now: 0)
        try router.join(bob, room: room, description: receiver("b"), now: 0)
        try router.publish(alice, track: audioTrack("mic", ssrc: 0xA), now: 0)
        try router.publish(alice, track: videoTrack("cam", layers: [StreamDescription(ssrc: 0x10)]), now: 0)
        let info = router.subscriptions(of: bob)
        XCTAssertEqual(info.count, 2)
        XCTAssertTrue(keyframeRequests(router.tick(now: 0, ntp: NTPTime(raw: 0))).isEmpty,
                      "a keyframe before negotiation would be dropped: asked for at negotiation instead")
        var now: Int64 = 0
        for index in 0..<10 {
            now = Int64(index + 1) * 20_000
            XCTAssertEqual(try send(router, from: alice, rtpPacket(ssrc: 0xA, seq: UInt16(index), ts: UInt32(index) * 960, pt: 111), now: now).count, 0)
            XCTAssertEqual(try send(router, from: alice, rtpPacket(ssrc: 0x10, seq: UInt16(index), ts: UInt32(index) * 1800,
                                                                    pt: 96, payload: vp8Keyframe), now: now).count, 0)
        }
        let held = try XCTUnwrap(router.subscriptionStats(subscriber: bob, publisher: alice, track: TrackID("cam")))
        XCTAssertFalse(held.negotiated)
        XCTAssertEqual(held.droppedUnnegotiated, 10)
        XCTAssertEqual(held.packetsSent, 0)

        // Only the audio subscription is in the answered offer.
        let audio = try XCTUnwrap(info.first { $0.kind == .audio })
        let video = try XCTUnwrap(info.first { $0.kind == .video })
        router.markNegotiated(subscriber: bob, ssrcs: [audio.ssrc])
        now += 20_000
        let audioOut = try send(router, from: alice, rtpPacket(ssrc: 0xA, seq: 10, ts: 9600, pt: 111), now: now)
        XCTAssertEqual(audioOut.map(\.ssrc), [audio.ssrc])
        XCTAssertEqual(try send(router, from: alice, rtpPacket(ssrc: 0x10, seq: 10, ts: 18000, pt: 96, payload: vp8Keyframe), now: now).count, 0)

        router.markNegotiated(subscriber: bob, ssrcs: [video.ssrc, 0xDEAD])  // unknown SSRCs are ignored
        XCTAssertEqual(keyframeRequests(router.tick(now: now, ntp: NTPTime(raw: 0))).map(\.1), [0x10], "keyframe asked at negotiation")
        now += 20_000
        XCTAssertEqual(try send(router, from: alice, rtpPacket(ssrc: 0x10, seq: 11, ts: 19800, pt: 96, payload: vp8Delta), now: now).count, 0,
                       "video starts at a keyframe")
        let first = try send(router, from: alice, rtpPacket(ssrc: 0x10, seq: 12, ts: 21600, pt: 96, payload: vp8Keyframe), now: now)
        XCTAssertEqual(first.map(\.ssrc), [video.ssrc])
        let stats = try XCTUnwrap(router.subscriptionStats(subscriber: bob, publisher: alice, track: TrackID("cam")))
        XCTAssertTrue(stats.negotiated)
        XCTAssertEqual(stats.packetsSent, 1)
        XCTAssertEqual(stats.droppedUnnegotiated, 11)
    }

    func testDefaultRouterForwardsAtOnce() throws {
        let router = makeRouter()
        try router.join(alice, room: room, description: receiver("a"), now: 0)
        try router.join(bob, room: room, description: receiver("b"), now: 0)
        try router.publish(alice, track: audioTrack("mic", ssrc: 0xA), now: 0)
        XCTAssertEqual(try send(router, from: alice, rtpPacket(ssrc: 0xA, seq: 1, ts: 960, pt: 111), now: 20_000).count, 1)
        XCTAssertEqual(router.subscriptionStats(subscriber: bob, publisher: alice, track: TrackID("mic"))?.negotiated, true)
    }
}
