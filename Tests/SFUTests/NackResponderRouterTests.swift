import RTP
import XCTest
@testable import SFU

/// The router's downlink repair, driven the way the socket layer does: forward and write
/// each decision (nothing stored per subscriber), answer NACKs by media SSRC, write resends.
final class NackResponderRouterTests: XCTestCase {
    /// A receiver that negotiated RTX for VP8 (121, apt=120).
    func rtxReceiver(_ cname: String) -> ParticipantDescription {
        var description = receiver(cname)
        description.receiveCodecs = description.receiveCodecs.map { codec in
            var codec = codec
            if codec.name.lowercased() == "vp8" { codec.rtxPayloadType = 121 }
            return codec
        }
        return description
    }

    /// Forwards `packet` and writes every decision (transport-wide number 7), like the socket layer.
    func forward(_ router: Router, _ packet: [UInt8], from publisher: ParticipantID = alice, now: Int64) throws -> [[UInt8]] {
        var batch = ForwardingBatch(capacity: 16)
        return try packet.withUnsafeBytes { input in
            router.handleRTP(from: publisher, packet: input, now: now, into: &batch)
            var written: [[UInt8]] = []
            for index in 0..<batch.count {
                var buffer = [UInt8](repeating: 0, count: 1500)
                let length = try buffer.withUnsafeMutableBytes { try batch.write(index, into: $0, transportSequenceNumber: 7) }
                written.append(Array(buffer[..<length]))
            }
            return written
        }
    }

    func drain(_ router: Router, now: Int64) throws -> [[UInt8]] {
        var pending: [PendingRetransmission] = []
        router.takeRetransmissions(into: &pending)
        return try pending.compactMap { item in
            var buffer = [UInt8](repeating: 0, count: 1600)
            let length = try buffer.withUnsafeMutableBytes { try router.writeRetransmission(item, now: now, transportSequenceNumber: 0x0102, into: $0) }
            return length.map { Array(buffer[..<$0]) }
        }
    }

    func nack(_ router: Router, from subscriber: ParticipantID = bob, ssrc: UInt32, _ seqs: [UInt16], now: Int64) throws {
        _ = try rtcp(router, from: subscriber, [.nack(RTCPGenericNACK(senderSSRC: 1, mediaSSRC: ssrc, sequenceNumbers: seqs))], now: now)
    }

    /// A first send as the subscriber got it, with the transport-wide number a resend carries.
    func asResent(_ bytes: [UInt8], subscriber: ParticipantID = bob) throws -> Received {
        var expected = try parseReceived(bytes, subscriber: subscriber)
        expected.extensions[7] = [0x01, 0x02]
        return expected
    }

    /// The original inside an RTX resend, as the subscriber's stack restores it.
    func unwrapRTX(_ bytes: [UInt8], mediaSSRC: UInt32, payloadType: UInt8 = 120) throws -> [UInt8] {
        try bytes.withUnsafeBytes { buffer in
            let view = try RTPPacketView(buffer)
            var output = [UInt8](repeating: 0, count: 1600)
            let length = try output.withUnsafeMutableBytes { try RTXPacket.unwrap(view, ssrc: mediaSSRC, payloadType: payloadType, into: $0) }
            return Array(output[..<length])
        }
    }

    func testFirstNACKOfANewSubscriptionIsAnsweredWithRTXRoutedByMediaSSRC() throws {
        let router = makeRouter()
        try router.join(alice, room: room, description: receiver("a"), now: 0)
        try router.join(bob, room: room, description: rtxReceiver("b"), now: 0)
        try router.publish(alice, track: videoTrack("cam", layers: [StreamDescription(ssrc: 0x51)]), now: 0)
        let info = try XCTUnwrap(router.subscriptions(of: bob).first)
        XCTAssertEqual(router.retransmissionMemory(subscriber: bob, ssrc: info.ssrc), SentPacketLog.videoCapacity * 24)

        var sent: [[UInt8]] = []
        sent += try forward(router, rtpPacket(ssrc: 0x51, seq: 1000, ts: 0, pt: 96, payload: vp8Keyframe), now: 10_000)
        sent += try forward(router, rtpPacket(ssrc: 0x51, seq: 1001, ts: 0, pt: 96, payload: vp8Continuation), now: 11_000)
        sent += try forward(router, rtpPacket(ssrc: 0x51, seq: 1002, ts: 3000, pt: 96, payload: vp8Delta), now: 40_000)
        XCTAssertEqual(sent.count, 3)
        let lost = try parseReceived(sent[1], subscriber: bob)

        // The subscription's very first NACK (from an unrelated sender SSRC, as some clients do).
        try nack(router, ssrc: info.ssrc, [lost.seq], now: 60_000)
        let resent = try drain(router, now: 60_000)
        XCTAssertEqual(resent.count, 1)
        let rtx = try parseReceived(try XCTUnwrap(resent.first), subscriber: bob)
        XCTAssertEqual(rtx.ssrc, info.rtxSSRC)
        XCTAssertEqual(rtx.pt, 121)
        XCTAssertEqual(rtx.ts, lost.ts)
        XCTAssertEqual(rtx.payload, [UInt8(lost.seq >> 8), UInt8(lost.seq & 0xFF)] + vp8Continuation)
        XCTAssertEqual(rtx.extensions[7], [0x01, 0x02], "fresh transport-wide number")
        XCTAssertEqual(rtx.extensions[9], lost.extensions[9], "mid kept")
        XCTAssertEqual(try parseReceived(try unwrapRTX(try XCTUnwrap(resent.first), mediaSSRC: info.ssrc), subscriber: bob), try asResent(sent[1]),
                       "the original inside is the packet as first sent")

        // Asked again within the RTT: throttled; a number never sent: missing.
        try nack(router, ssrc: info.ssrc, [lost.seq, lost.seq &+ 100], now: 80_000)
        XCTAssertEqual(try drain(router, now: 80_000), [])
        // Past the 1 s age bound: expired.
        try nack(router, ssrc: info.ssrc, [lost.seq], now: 1_100_000)
        XCTAssertEqual(try drain(router, now: 1_100_000), [])
        XCTAssertEqual(router.retransmissionStats(subscriber: bob, ssrc: info.ssrc),
                       NackResponderStats(requested: 4, resent: 1, throttled: 1, missing: 1, expired: 1))
        XCTAssertEqual(router.subscriptionStats(subscriber: bob, publisher: alice, track: TrackID("cam"))?.nackedPackets, 4)
    }

    func testWithoutRTXTheOriginalIsResent() throws {
        let router = makeRouter()
        try router.join(alice, room: room, description: receiver("a"), now: 0)
        try router.join(bob, room: room, description: receiver("b"), now: 0)
        try router.publish(alice, track: videoTrack("cam", layers: [StreamDescription(ssrc: 0x51)]), now: 0)
        let info = try XCTUnwrap(router.subscriptions(of: bob).first)
        let sent = try forward(router, rtpPacket(ssrc: 0x51, seq: 70, ts: 0, pt: 96, extensions: [RTPHeaderExtension(id: 2, value: [1, 2, 3])],
                                                 payload: vp8Keyframe), now: 10_000)
        let original = try parseReceived(try XCTUnwrap(sent.first), subscriber: bob)
        XCTAssertEqual(original.extensions[6], [1, 2, 3], "abs-send-time remapped 2 → 6")
        try nack(router, ssrc: info.ssrc, [original.seq], now: 30_000)
        let resent = try drain(router, now: 30_000)
        XCTAssertEqual(try resent.map { try parseReceived($0, subscriber: bob) }, [try asResent(sent[0])])
        // A NACK naming an SSRC we do not send is counted as unknown, not answered.
        try nack(router, ssrc: 0xDEAD, [original.seq], now: 300_000)
        XCTAssertEqual(try drain(router, now: 300_000), [])
        XCTAssertEqual(router.participantStats(bob)?.unknownFeedbackSSRC, 1)
    }

    /// Each layer's packets are resent as they were sent while the subscriber is on that
    /// layer; once it has switched, the old layer's are superseded (its keyframe replaced them).
    func testNACKAfterLayerSwitchReturnsPacketsAsSentOnEachLayer() throws {
        let router = makeRouter()
        try router.join(alice, room: room, description: receiver("a"), now: 0)
        try router.join(bob, room: room, description: rtxReceiver("b"), now: 0)
        try router.publish(alice, track: videoTrack("cam", layers: [StreamDescription(ssrc: 0x10), StreamDescription(ssrc: 0x30)]), now: 0)
        let info = try XCTUnwrap(router.subscriptions(of: bob).first)
        var sent: [[UInt8]] = []
        var now: Int64 = 0
        // High layer (seq 65530…, ts 900,000…) forwarded; low layer (seq 200…, ts 5,000…) runs alongside.
        for index in 0..<6 {
            now += 10_000
            let payload = index == 0 ? vp8Keyframe : vp8Delta
            sent += try forward(router, rtpPacket(ssrc: 0x30, seq: 65530 &+ UInt16(index), ts: 900_000 + UInt32(index) * 900, pt: 96, payload: payload), now: now)
            XCTAssertEqual(try forward(router, rtpPacket(ssrc: 0x10, seq: 200 + UInt16(index), ts: 5_000 + UInt32(index) * 900, pt: 96, payload: vp8Delta), now: now).count, 0)
        }
        // On the high layer: its packets come back as sent.
        let highNumbers = try sent.map { try parseReceived($0, subscriber: bob).seq }
        try nack(router, ssrc: info.ssrc, highNumbers, now: now + 5_000)
        let resentHigh = try drain(router, now: now + 5_000)
        XCTAssertEqual(resentHigh.count, 6)
        for (index, bytes) in resentHigh.enumerated() {
            XCTAssertEqual(try parseReceived(try unwrapRTX(bytes, mediaSSRC: info.ssrc), subscriber: bob), try asResent(sent[index]), "high layer packet \(index)")
        }
        try router.setTargetLayer(subscriber: bob, publisher: alice, track: TrackID("cam"), layer: 0)
        for index in 6..<10 {
            now += 10_000
            sent += try forward(router, rtpPacket(ssrc: 0x10, seq: 200 + UInt16(index), ts: 5_000 + UInt32(index) * 900, pt: 96,
                                                  payload: index == 6 ? vp8Keyframe : vp8Delta), now: now)
            XCTAssertEqual(try forward(router, rtpPacket(ssrc: 0x30, seq: 65530 &+ UInt16(index), ts: 900_000, pt: 96, payload: vp8Delta), now: now).count, 0)
        }
        XCTAssertEqual(sent.count, 10)
        let numbers = try sent.map { try parseReceived($0, subscriber: bob).seq }
        XCTAssertEqual(numbers.map { $0 &- numbers[0] }, Array(0..<10), "continuous output across the switch and the wrap")
        // NACK every packet, old layer's and new layer's, after the switch: only the low
        // layer's are resent.
        try nack(router, ssrc: info.ssrc, numbers, now: now + 20_000)
        let resent = try drain(router, now: now + 20_000)
        XCTAssertEqual(resent.count, 4)
        for (index, bytes) in resent.enumerated() {
            let original = try unwrapRTX(bytes, mediaSSRC: info.ssrc)
            XCTAssertEqual(try parseReceived(original, subscriber: bob), try asResent(sent[6 + index]), "low layer packet \(index)")
        }
        let stats = try XCTUnwrap(router.retransmissionStats(subscriber: bob, ssrc: info.ssrc))
        XCTAssertEqual(stats, NackResponderStats(requested: 16, resent: 10, superseded: 6))
    }

    /// A NACK for a packet the store no longer holds (older than its 1 s age bound: a deep
    /// bottleneck queue delays the loss's discovery that long) cannot be repaired by a
    /// resend: the SFU asks the publisher for a keyframe of the subscriber's layer at once
    /// instead of leaving the picture frozen until the subscriber's own 3 s timeout.
    func testUnrepairableNACKAsksForAKeyframeOfTheSubscribersLayer() throws {
        let router = makeRouter()
        try router.join(alice, room: room, description: receiver("a"), now: 0)
        try router.join(bob, room: room, description: rtxReceiver("b"), now: 0)
        try router.publish(alice, track: videoTrack("cam", layers: [StreamDescription(ssrc: 0x10), StreamDescription(ssrc: 0x30)]), now: 0)
        let info = try XCTUnwrap(router.subscriptions(of: bob).first)
        _ = router.tick(now: 0, ntp: NTPTime(raw: 0))   // the join's own keyframe request
        var numbers: [UInt16] = []
        for index in 0..<5 {
            let out = try forward(router, rtpPacket(ssrc: 0x30, seq: 100 + UInt16(index), ts: UInt32(index) * 3_000, pt: 96,
                                                    payload: index == 0 ? vp8Keyframe : vp8Delta), now: 2_000_000 + Int64(index) * 33_000)
            numbers += try out.map { try parseReceived($0, subscriber: bob).seq }
        }
        XCTAssertEqual(numbers.count, 5)
        // Within the age bound: resent, no keyframe.
        let fresh = try rtcp(router, from: bob, [.nack(RTCPGenericNACK(senderSSRC: 1, mediaSSRC: info.ssrc, sequenceNumbers: [numbers[4]]))], now: 2_500_000)
        XCTAssertEqual(try drain(router, now: 2_500_000).count, 1)
        XCTAssertEqual(keyframeRequests(fresh).count, 0)
        // 1.2 s after it was sent: expired — a PLI for layer 1 (SSRC 0x30) goes to alice.
        let stale = try rtcp(router, from: bob, [.nack(RTCPGenericNACK(senderSSRC: 1, mediaSSRC: info.ssrc, sequenceNumbers: [numbers[1]]))], now: 3_233_000)
        XCTAssertEqual(try drain(router, now: 3_233_000).count, 0)
        let asked = keyframeRequests(stale) + keyframeRequests(router.tick(now: 3_233_000, ntp: NTPTime(raw: 0)))
        XCTAssertEqual(asked.map(\.0), [alice])
        XCTAssertEqual(asked.map(\.1), [0x30])
        let stats = try XCTUnwrap(router.subscriptionStats(subscriber: bob, publisher: alice, track: TrackID("cam")))
        XCTAssertEqual(stats.keyframesForUnrepairableLoss, 1)
        XCTAssertEqual(stats.keyframeRequestsReceived, 0, "not counted as the subscriber's own PLI")
        XCTAssertEqual(router.retransmissionStats(subscriber: bob, ssrc: info.ssrc), NackResponderStats(requested: 2, resent: 1, expired: 1))
    }

    func testResendsAcrossTheWrapFromManyStartingPoints() throws {
        for start in ContinuityTests.startingPoints {
            let router = makeRouter()
            try router.join(alice, room: room, description: receiver("a"), now: 0)
            try router.join(bob, room: room, description: receiver("b"), now: 0)
            try router.publish(alice, track: videoTrack("cam", layers: [StreamDescription(ssrc: 0x51)]), now: 0)
            let info = try XCTUnwrap(router.subscriptions(of: bob).first)
            var sent: [UInt16: [UInt8]] = [:]
            var newest: UInt16 = 0
            for index in 0..<700 {
                let packet = rtpPacket(ssrc: 0x51, seq: start &+ UInt16(index), ts: UInt32(index) * 300, pt: 96,
                                       payload: index == 0 ? vp8Keyframe : vp8Delta + [UInt8(index & 0xFF), UInt8(index >> 8)])
                for bytes in try forward(router, packet, now: Int64(index) * 1_000) {
                    newest = try parseReceived(bytes, subscriber: bob).seq
                    sent[newest] = bytes
                }
            }
            XCTAssertEqual(sent.count, 700)
            // The last `videoCapacity` sends (the log) answer exactly; one more back is gone
            // (count bound).
            let logSize = SentPacketLog.videoCapacity
            let wanted = (0..<logSize).map { newest &- UInt16($0) }
            try nack(router, ssrc: info.ssrc, wanted + [newest &- UInt16(logSize), newest &+ 1], now: 700_000)
            let resent = try drain(router, now: 700_000)
            XCTAssertEqual(resent.count, logSize, "start \(start)")
            // (The NACK's PID/BLP packing orders the numbers; match each resend by its number.)
            let bySeq = Dictionary(try resent.map { (try parseReceived($0, subscriber: bob).seq, $0) }, uniquingKeysWith: { first, _ in first })
            XCTAssertEqual(Set(bySeq.keys), Set(wanted), "start \(start)")
            for seq in wanted {
                guard let bytes = bySeq[seq], let first = sent[seq] else { continue }
                XCTAssertEqual(try parseReceived(bytes, subscriber: bob), try asResent(first), "start \(start) seq \(seq)")
            }
            XCTAssertEqual(router.retransmissionStats(subscriber: bob, ssrc: info.ssrc)?.missing, 2, "start \(start)")
        }
    }

    func testPublisherRepairIsStoredAndAnswersTheSubscriber() throws {
        let router = makeRouter()
        try router.join(alice, room: room, description: receiver("a"), now: 0)
        try router.join(bob, room: room, description: receiver("b"), now: 0)
        let codec = CodecDescription(name: "VP8", payloadType: 96, clockRate: 90000, rtxPayloadType: 97)
        try router.publish(alice, track: TrackDescription(id: TrackID("cam"), kind: .video, codecs: [codec],
                                                          layers: [StreamDescription(ssrc: 0x1A, rtxSSRC: 0x1B)], extensions: publisherExtensions), now: 0)
        let info = try XCTUnwrap(router.subscriptions(of: bob).first)
        _ = try forward(router, rtpPacket(ssrc: 0x1A, seq: 100, ts: 0, pt: 96, payload: vp8Keyframe), now: 0)
        _ = try forward(router, rtpPacket(ssrc: 0x1A, seq: 102, ts: 6000, pt: 96, payload: vp8Delta), now: 20_000)
        // 101 arrives as the publisher's RTX (OSN 101), is forwarded, and then lost downstream.
        let repaired = try forward(router, rtpPacket(ssrc: 0x1B, seq: 9, ts: 3000, pt: 97, payload: [0, 101] + vp8Delta), now: 50_000)
        XCTAssertEqual(repaired.count, 1)
        let seq = try parseReceived(repaired[0], subscriber: bob).seq
        try nack(router, ssrc: info.ssrc, [seq], now: 90_000)
        XCTAssertEqual(try drain(router, now: 90_000).map { try parseReceived($0, subscriber: bob) }, [try asResent(repaired[0])])
    }

    func testAudioDuplicatesAreNotForwarded() throws {
        let router = makeRouter()
        try router.join(alice, room: room, description: receiver("a"), now: 0)
        try router.join(bob, room: room, description: receiver("b"), now: 0)
        try router.publish(alice, track: audioTrack("mic", ssrc: 0xA1), now: 0)
        func opus(_ seq: UInt16) -> [UInt8] { rtpPacket(ssrc: 0xA1, seq: seq, ts: UInt32(seq) &* 960, pt: 111) }
        var out: [Received] = []
        for seq: UInt16 in [65534, 65535, 1, 0] { out += try send(router, from: alice, opus(seq), now: Int64(seq)) }
        XCTAssertEqual(out.count, 4, "reordered across the wrap: all new")
        for seq: UInt16 in [65535, 0, 1] {
            var result = RTPDisposition.forwarded
            XCTAssertEqual(try send(router, from: alice, opus(seq), now: 100, disposition: &result).count, 0, "copy of \(seq)")
            XCTAssertEqual(result, .duplicate)
        }
        for seq: UInt16 in 2..<100 { out += try send(router, from: alice, opus(seq), now: 1_000 + Int64(seq)) }
        XCTAssertEqual(disposition(router, from: alice, opus(30), now: 2_000), .duplicate, "older than the 64-packet window")
        XCTAssertEqual(disposition(router, from: alice, opus(40_000), now: 3_000), .forwarded, "a restart of the numbering is new")
        XCTAssertEqual(disposition(router, from: alice, opus(40_000), now: 3_001), .duplicate)
        XCTAssertEqual(out.count, 102)
        XCTAssertEqual(Set(out.map(\.seq)).count, out.count, "no sequence number reaches the subscriber twice")
        XCTAssertEqual(router.participants[alice]?.published[TrackID("mic")]?.streams[0].duplicatesDropped, 5)
    }
}
