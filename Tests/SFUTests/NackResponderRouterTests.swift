import RTP
import XCTest
@testable import SFU

/// The router's downlink repair, driven the way the socket layer will: forward, store the
/// written packet in the subscription's cache, answer NACKs by media SSRC.
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

    /// Forwards `packet` and, like the socket layer, caches each written copy.
    func forward(_ router: Router, _ packet: [UInt8], now: Int64) throws -> [[UInt8]] {
        var batch = ForwardingBatch(capacity: 16)
        return try packet.withUnsafeBytes { input in
            router.handleRTP(from: alice, packet: input, now: now, into: &batch)
            var written: [[UInt8]] = []
            for index in 0..<batch.count {
                var buffer = [UInt8](repeating: 0, count: 1500)
                let length = try buffer.withUnsafeMutableBytes { try batch.write(index, into: $0, transportSequenceNumber: 7) }
                let bytes = Array(buffer[..<length])
                router.retransmissionCache(subscriber: batch[index].subscriber, ssrc: batch[index].ssrc)?.insert(bytes, now: now)
                written.append(bytes)
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

    func testSubscriberNACKIsAnsweredWithRTXFromTheCacheRoutedByMediaSSRC() throws {
        let router = makeRouter()
        try router.join(alice, room: room, description: receiver("a"), now: 0)
        try router.join(bob, room: room, description: rtxReceiver("b"), now: 0)
        try router.publish(alice, track: videoTrack("cam", layers: [StreamDescription(ssrc: 0x51)]), now: 0)
        let info = try XCTUnwrap(router.subscriptions(of: bob).first)
        XCTAssertNil(router.retransmissionCache(subscriber: bob, ssrc: info.ssrc), "no cache before the first NACK")

        // First NACK (sent from an unrelated sender SSRC, as some clients do): allocates.
        _ = try rtcp(router, from: bob, [.nack(RTCPGenericNACK(senderSSRC: 1, mediaSSRC: info.ssrc, sequenceNumbers: [5]))], now: 0)
        XCTAssertEqual(try drain(router, now: 0), [])
        XCTAssertEqual(router.retransmissionStats(subscriber: bob, ssrc: info.ssrc)?.missing, 1)

        var sent: [[UInt8]] = []
        sent += try forward(router, rtpPacket(ssrc: 0x51, seq: 1000, ts: 0, pt: 96, payload: vp8Keyframe), now: 10_000)
        sent += try forward(router, rtpPacket(ssrc: 0x51, seq: 1001, ts: 0, pt: 96, payload: vp8Continuation), now: 11_000)
        sent += try forward(router, rtpPacket(ssrc: 0x51, seq: 1002, ts: 3000, pt: 96, payload: vp8Delta), now: 40_000)
        XCTAssertEqual(sent.count, 3)
        let lost = try parseReceived(sent[1], subscriber: bob)

        _ = try rtcp(router, from: bob, [.nack(RTCPGenericNACK(senderSSRC: 1, mediaSSRC: info.ssrc, sequenceNumbers: [lost.seq]))], now: 60_000)
        let resent = try drain(router, now: 60_000)
        XCTAssertEqual(resent.count, 1)
        let rtx = try parseReceived(try XCTUnwrap(resent.first), subscriber: bob)
        XCTAssertEqual(rtx.ssrc, info.rtxSSRC)
        XCTAssertEqual(rtx.pt, 121)
        XCTAssertEqual(rtx.ts, lost.ts)
        XCTAssertEqual(rtx.payload, [UInt8(lost.seq >> 8), UInt8(lost.seq & 0xFF)] + vp8Continuation)
        XCTAssertEqual(rtx.extensions[7], [0x01, 0x02], "fresh transport-wide number")
        XCTAssertEqual(rtx.extensions[9], lost.extensions[9], "mid kept")

        // Asked again within the RTT: throttled.
        _ = try rtcp(router, from: bob, [.nack(RTCPGenericNACK(senderSSRC: 1, mediaSSRC: info.ssrc, sequenceNumbers: [lost.seq]))], now: 80_000)
        XCTAssertEqual(try drain(router, now: 80_000), [])
        XCTAssertEqual(router.retransmissionStats(subscriber: bob, ssrc: info.ssrc), NackResponderStats(requested: 3, resent: 1, throttled: 1, missing: 1))
        XCTAssertEqual(router.subscriptionStats(subscriber: bob, publisher: alice, track: TrackID("cam"))?.nackedPackets, 3)
    }

    func testWithoutRTXTheOriginalIsResent() throws {
        let router = makeRouter()
        try router.join(alice, room: room, description: receiver("a"), now: 0)
        try router.join(bob, room: room, description: receiver("b"), now: 0)
        try router.publish(alice, track: videoTrack("cam", layers: [StreamDescription(ssrc: 0x51)]), now: 0)
        let info = try XCTUnwrap(router.subscriptions(of: bob).first)
        _ = try rtcp(router, from: bob, [.nack(RTCPGenericNACK(senderSSRC: info.ssrc, mediaSSRC: info.ssrc, sequenceNumbers: [1]))], now: 0)
        let sent = try forward(router, rtpPacket(ssrc: 0x51, seq: 70, ts: 0, pt: 96, payload: vp8Keyframe), now: 10_000)
        let original = try parseReceived(try XCTUnwrap(sent.first), subscriber: bob)
        _ = try rtcp(router, from: bob, [.nack(RTCPGenericNACK(senderSSRC: 1, mediaSSRC: info.ssrc, sequenceNumbers: [original.seq]))], now: 30_000)
        let resent = try drain(router, now: 30_000)
        var expected = original
        expected.extensions[7] = [0x01, 0x02]
        XCTAssertEqual(try resent.map { try parseReceived($0, subscriber: bob) }, [expected])
        // A NACK naming an SSRC we do not send is counted as unknown, not answered.
        _ = try rtcp(router, from: bob, [.nack(RTCPGenericNACK(senderSSRC: 1, mediaSSRC: 0xDEAD, sequenceNumbers: [original.seq]))], now: 300_000)
        XCTAssertEqual(try drain(router, now: 300_000), [])
        XCTAssertEqual(router.participantStats(bob)?.unknownFeedbackSSRC, 1)
    }
}
