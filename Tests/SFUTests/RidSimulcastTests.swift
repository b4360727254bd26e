import RTP
import XCTest
@testable import SFU

/// Chromium's rid simulcast (RFC 8851/8853, no SSRCs signaled): RTX bound by repaired rid,
/// transport-wide feedback for every packet of the transport, and subscribers kept on layers
/// that actually arrive (Router+LayerFallback).
final class RidSimulcastTests: XCTestCase {
    let ridLayers = ["q", "h", "f"].map { StreamDescription(ssrc: nil, rid: $0) }
    let vp8WithRTX = CodecDescription(name: "VP8", payloadType: 96, clockRate: 90000, rtxPayloadType: 97)

    func packet(_ ssrc: UInt32, seq: UInt16, rid: String? = nil, rrid: String? = nil, pt: UInt8 = 96, twcc: UInt16? = nil,
                _ payload: [UInt8]) -> [UInt8] {
        var extensions: [RTPHeaderExtension] = []
        if let rid { extensions.append(RTPHeaderExtension(id: publisherExtensions.rid, value: Array(rid.utf8))) }
        if let rrid { extensions.append(RTPHeaderExtension(id: publisherExtensions.repairedRid, value: Array(rrid.utf8))) }
        if let twcc { extensions.append(RTPHeaderExtension(id: publisherExtensions.transportCC, value: [UInt8(twcc >> 8), UInt8(twcc & 0xFF)])) }
        return rtpPacket(ssrc: ssrc, seq: seq, ts: UInt32(seq) * 3000, pt: pt, extensions: extensions, payload: payload)
    }

    func testUnsignaledRTXIsBoundByRepairedRidAndRepairsItsLayer() throws {
        let router = makeRouter()
        try router.join(alice, room: room, description: receiver("a"), now: 0)
        try router.join(bob, room: room, description: receiver("b"), now: 0)
        try router.publish(alice, track: TrackDescription(id: TrackID("cam"), kind: .video, codecs: [vp8WithRTX], layers: ridLayers,
                                                          extensions: publisherExtensions), now: 0)
        let first = try send(router, from: alice, packet(0x77, seq: 10, rid: "f", vp8Keyframe), now: 0)
        XCTAssertEqual(first.count, 1)
        // Packet 11 was lost; its RTX (RFC 4588: OSN first) arrives on an unsignaled SSRC with rrid "f".
        let rtx = packet(0x78, seq: 500, rrid: "f", pt: 97, [0x00, 11] + vp8Delta)
        let repaired = try send(router, from: alice, rtx, now: 10_000)
        XCTAssertEqual(repaired.count, 1, "unwrapped and forwarded")
        XCTAssertEqual(repaired.first?.payload, vp8Delta)
        XCTAssertEqual(repaired.first.map { $0.seq &- first[0].seq }, 1, "the repaired packet takes the original's place")
        let stats = try XCTUnwrap(router.trackStats(alice, track: TrackID("cam")))
        XCTAssertEqual(stats.streams[2].rtxPackets, 1)
        XCTAssertEqual(disposition(router, from: alice, packet(0x79, seq: 1, rrid: "zz", pt: 97, [0, 1] + vp8Delta), now: 20_000),
                       .unknownSSRC, "a repaired rid of no layer binds nothing")
    }

    func testTransportFeedbackCoversPacketsThatCannotBeRouted() throws {
        let router = makeRouter()
        // The participant's own numbering (one BUNDLE transport: the same ids for all sections).
        try router.join(alice, room: room, description: receiver("a", extensions: publisherExtensions), now: 0)
        try router.join(bob, room: room, description: receiver("b"), now: 0)
        try router.publish(alice, track: videoTrack("cam", layers: ridLayers), now: 0)
        _ = try send(router, from: alice, packet(0x77, seq: 1, rid: "f", twcc: 200, vp8Keyframe), now: 1_000_000)
        // A padding probe on an RTX SSRC nobody signaled (and without rrid): unroutable, but it crossed the transport.
        XCTAssertEqual(disposition(router, from: alice, packet(0x99, seq: 7, pt: 97, twcc: 201, [0, 0]), now: 1_001_000), .unknownSSRC)
        _ = try send(router, from: alice, packet(0x77, seq: 2, rid: "f", twcc: 202, vp8Delta), now: 1_002_000)
        let feedback = router.tick(now: 1_200_000, ntp: NTPTime(raw: 0)).filter { $0.participant == alice }.flatMap(\.packets)
            .compactMap { packet -> RTCPTransportFeedback? in if case .transportFeedback(let f) = packet { f } else { nil } }
        let results = try XCTUnwrap(feedback.first).decoded().packetResults
        XCTAssertEqual(results.map(\.sequenceNumber), [200, 201, 202])
        XCTAssertEqual(results.filter { $0.arrivalMicros == nil }.count, 0, "the probe is reported received, not lost")
    }

    func testSubscriberFollowsTheLayersThatArrive() throws {
        let router = makeRouter()
        try router.join(alice, room: room, description: receiver("a"), now: 0)
        try router.join(bob, room: room, description: receiver("b"), now: 0)
        try router.publish(alice, track: videoTrack("cam", layers: [0x10, 0x20, 0x30].map { StreamDescription(ssrc: $0) }), now: 0)
        var seq: [UInt32: UInt16] = [:]
        func frame(_ ssrc: UInt32, _ payload: [UInt8], at now: Int64) throws -> Int {
            let s = seq[ssrc, default: 1]
            seq[ssrc] = s &+ 1
            return try send(router, from: alice, packet(ssrc, seq: s, payload), now: now).count
        }
        func layers() throws -> (Int?, Int) {
            let s = try XCTUnwrap(router.subscriptionStats(subscriber: bob, publisher: alice, track: TrackID("cam")))
            return (s.currentLayer, s.targetLayer)
        }
        // Only the low layer arrives (Chromium at a low send estimate): bob waits for layer 2 at first…
        var now: Int64 = 0
        XCTAssertEqual(try frame(0x10, vp8Keyframe, at: now), 0)
        for _ in 0..<9 {
            now += 100_000
            _ = try frame(0x10, vp8Delta, at: now)
            _ = router.tick(now: now, ntp: NTPTime(raw: 0))
        }
        XCTAssertEqual(try layers().1, 2, "within the first second no layer counts as silent")
        // …and after a full second of silence on layers 1–2 gets layer 0 from its next keyframe.
        now += 200_000
        _ = try frame(0x10, vp8Delta, at: now)
        _ = router.tick(now: now, ntp: NTPTime(raw: 0))
        XCTAssertEqual(try layers().1, 0)
        let droppedAt = now
        XCTAssertEqual(try frame(0x10, vp8Delta, at: now + 1), 0, "switch waits for a keyframe")
        XCTAssertEqual(try frame(0x10, vp8Keyframe, at: now + 2), 1)
        XCTAssertEqual(try layers().0, 0)

        // Layer 2 starts (its first run: no resume hold), but the drop started the cool-down:
        // back up when it ends, at layer 2's keyframe.
        now += 100_000
        _ = try frame(0x30, vp8Keyframe, at: now)
        _ = try frame(0x10, vp8Delta, at: now)
        _ = router.tick(now: now, ntp: NTPTime(raw: 0))
        XCTAssertEqual(try layers().1, 0, "inside the cool-down of the drop")
        let coolDown = LayerSelector.Config().coolDown
        while now + 100_000 < droppedAt + coolDown {
            now += 100_000
            _ = try frame(0x30, vp8Delta, at: now)
            _ = try frame(0x10, vp8Delta, at: now)
            _ = router.tick(now: now, ntp: NTPTime(raw: 0))
            XCTAssertEqual(try layers().1, 0, "still in the cool-down at \(now)")
        }
        now += 100_000
        _ = try frame(0x10, vp8Delta, at: now)
        _ = router.tick(now: now, ntp: NTPTime(raw: 0))
        XCTAssertEqual(try layers().1, 2)
        XCTAssertEqual(router.downlinkStats(bob, now: now)?.video.first?.lastReason, "layerResumed")
        XCTAssertEqual(try frame(0x30, vp8Keyframe, at: now + 1), 1)
        XCTAssertEqual(try layers().0, 2)

        // An explicit choice of the silent layer 1 is kept as the wish, served by layer 0 meanwhile.
        try router.setTargetLayer(subscriber: bob, publisher: alice, track: TrackID("cam"), layer: 1)
        now += 100_000
        _ = try frame(0x10, vp8Delta, at: now)
        _ = try frame(0x30, vp8Delta, at: now)
        _ = router.tick(now: now, ntp: NTPTime(raw: 0))
        XCTAssertEqual(try layers().1, 0, "layer 1 never arrived: the highest arriving layer below it")
    }
}
