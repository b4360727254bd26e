import RTP
import XCTest
@testable import SFU

/// The router's uplink repair: NACKs towards the publisher on tick, RTX unwrapped and forwarded.
final class NackGeneratorRouterTests: XCTestCase {
    let vp8WithRTX = CodecDescription(name: "VP8", payloadType: 96, clockRate: 90000, rtxPayloadType: 97)

    func nacks(_ outgoing: [OutgoingRTCP]) -> [(ParticipantID, RTCPGenericNACK)] {
        outgoing.flatMap { message in
            message.packets.compactMap { packet -> (ParticipantID, RTCPGenericNACK)? in
                if case .nack(let nack) = packet { return (message.participant, nack) } else { return nil }
            }
        }
    }

    func testUplinkGapIsNACKedOnTickAndTheRTXRepairIsForwarded() throws {
        let router = makeRouter()
        try router.join(alice, room: room, description: receiver("a"), now: 0)
        try router.join(bob, room: room, description: receiver("b"), now: 0)
        let track = TrackDescription(
            id: TrackID("cam"), kind: .video, codecs: [vp8WithRTX],
            layers: [StreamDescription(ssrc: 0x1A, rtxSSRC: 0x1B)], extensions: publisherExtensions)
        try router.publish(alice, track: track, now: 0)
        _ = router.tick(now: 0, ntp: NTPTime(raw: 0))
        // Arrival times match the timestamps (no jitter): the reorder wait is its 10 ms floor.
        XCTAssertEqual(try send(router, from: alice, rtpPacket(ssrc: 0x1A, seq: 65534, ts: 0, pt: 96, payload: vp8Keyframe), now: 0).count, 1)
        try send(router, from: alice, rtpPacket(ssrc: 0x1A, seq: 65535, ts: 900, pt: 96, payload: vp8Delta), now: 10_000)
        // 0 and 1 lost on the uplink.
        let afterGap = try send(router, from: alice, rtpPacket(ssrc: 0x1A, seq: 2, ts: 3600, pt: 96, payload: vp8Delta), now: 40_000)
        XCTAssertEqual(afterGap.map(\.seq), [2], "forwarded with the gap visible to the subscriber")

        XCTAssertTrue(nacks(router.tick(now: 45_000, ntp: NTPTime(raw: 0))).isEmpty, "inside the reorder wait")
        let due = nacks(router.tick(now: 50_000, ntp: NTPTime(raw: 0)))
        XCTAssertEqual(due.count, 1)
        XCTAssertEqual(due.first?.0, alice)
        XCTAssertEqual(due.first?.1.mediaSSRC, 0x1A)
        XCTAssertEqual(due.first?.1.sequenceNumbers, [0, 1])
        XCTAssertNotEqual(due.first?.1.senderSSRC, 0x1A, "sent from our control SSRC")

        // The publisher answers 1 with RTX: unwrapped and forwarded as seq 1, original PT.
        var disposition = RTPDisposition.malformed
        let repaired = try send(router, from: alice, rtx(osn: 1, rtxSeq: 500, ts: 2700, payload: vp8Continuation), now: 90_000, disposition: &disposition)
        XCTAssertEqual(disposition, .forwarded)
        XCTAssertEqual(repaired.map(\.seq), [1])
        XCTAssertEqual(repaired.first?.ts, afterGap.first.map { $0.ts &- 900 })
        XCTAssertEqual(repaired.first?.pt, 120, "bob's VP8 payload type")
        XCTAssertEqual(repaired.first?.payload, vp8Continuation, "OSN removed")
        XCTAssertEqual(repaired.first?.ssrc, afterGap.first?.ssrc)

        // Only 0 is retried, after RTT (default 100 ms) + wait (10 ms).
        XCTAssertTrue(nacks(router.tick(now: 159_999, ntp: NTPTime(raw: 0))).isEmpty)
        XCTAssertEqual(nacks(router.tick(now: 160_000, ntp: NTPTime(raw: 0))).first?.1.sequenceNumbers, [0])
        let stats = try XCTUnwrap(router.trackStats(alice, track: TrackID("cam"))?.streams.first)
        XCTAssertEqual(stats.rtxPackets, 1)
    }

    func testPaddingOnlyRTXAndAudioAreNotRepaired() throws {
        let router = makeRouter()
        try router.join(alice, room: room, description: receiver("a"), now: 0)
        try router.join(bob, room: room, description: receiver("b"), now: 0)
        try router.publish(alice, track: TrackDescription(
            id: TrackID("cam"), kind: .video, codecs: [vp8WithRTX],
            layers: [StreamDescription(ssrc: 0x1A, rtxSSRC: 0x1B)], extensions: publisherExtensions), now: 0)
        try router.publish(alice, track: audioTrack("mic", ssrc: 0x2A), now: 0)
        XCTAssertEqual(disposition(router, from: alice, rtpPacket(ssrc: 0x1B, seq: 1, ts: 0, pt: 97, payload: [0]), now: 0), .retransmission)
        for seq: UInt16 in [1, 2, 5] { try send(router, from: alice, rtpPacket(ssrc: 0x2A, seq: seq, ts: UInt32(seq) * 960, pt: 111), now: Int64(seq) * 20_000) }
        XCTAssertTrue(nacks(router.tick(now: 500_000, ntp: NTPTime(raw: 0))).isEmpty, "Opus is not NACKed")
    }

    func testRTXWithUnknownAptIsNotForwardedButStopsTheNACKs() throws {
        let router = makeRouter()
        try router.join(alice, room: room, description: receiver("a"), now: 0)
        try router.join(bob, room: room, description: receiver("b"), now: 0)
        try router.publish(alice, track: videoTrack("cam", layers: [StreamDescription(ssrc: 0x1A, rtxSSRC: 0x1B)]), now: 0)
        try send(router, from: alice, rtpPacket(ssrc: 0x1A, seq: 10, ts: 0, pt: 96, payload: vp8Keyframe), now: 0)
        try send(router, from: alice, rtpPacket(ssrc: 0x1A, seq: 12, ts: 1800, pt: 96, payload: vp8Delta), now: 20_000)
        XCTAssertEqual(nacks(router.tick(now: 40_000, ntp: NTPTime(raw: 0))).first?.1.sequenceNumbers, [11])
        XCTAssertEqual(disposition(router, from: alice, rtx(osn: 11, rtxSeq: 1, ts: 900, payload: vp8Delta), now: 90_000), .retransmission)
        XCTAssertTrue(nacks(router.tick(now: 1_000_000, ntp: NTPTime(raw: 0))).isEmpty, "no retries for a repaired packet")
        XCTAssertEqual(router.uplinkNACKStats(publisher: alice, track: TrackID("cam"), layer: 0)?.recovered, 1)
    }
}
