import RTP
import XCTest
@testable import SFU

final class NackResponderTests: XCTestCase {
    let rtx = RTXConfiguration(ssrc: 0x5151_0002, payloadTypes: [(apt: 120, rtx: 121), (apt: 109, rtx: 110)])

    /// A cached video packet as the forwarding writer produces it: CSRC, one-byte extensions
    /// (transport-cc id 7, mid id 9), marker, payload.
    func videoPacket(seq: UInt16, padding: Int = 0) throws -> [UInt8] {
        try RTPPacketBuilder(
            marker: true, payloadType: 120, sequenceNumber: seq, timestamp: 0x1122_3344, ssrc: 0xABCD_0001,
            csrcs: [0xC5C5_C5C5], extensions: [RTPHeaderExtension(id: 7, value: [0x00, 0x05]), RTPHeaderExtension(id: 9, value: Array("v0".utf8))],
            paddingLength: padding
        ).serialize(payload: [0x10, 0x01, 0xBB, 0xCC, 0xDD])
    }

    /// NACK as it arrives on the wire, parsed back (PID/BLP packing and unpacking included).
    func nackFromWire(_ seqs: [UInt16], mediaSSRC: UInt32 = 0xABCD_0001) throws -> [UInt16] {
        let bytes = try RTCPCompound.serialize([.nack(RTCPGenericNACK(senderSSRC: 1, mediaSSRC: mediaSSRC, sequenceNumbers: seqs))])
        let parsed = try bytes.withUnsafeBytes { try RTCPCompound.parse($0) }
        guard case .nack(let nack) = parsed.first else { throw XCTSkip("parser returned no NACK") }
        XCTAssertEqual(nack.mediaSSRC, mediaSSRC)
        return nack.sequenceNumbers
    }

    func write(_ retransmission: Retransmission, _ cache: RetransmissionCache, now: Int64, tcc: (id: UInt8, value: UInt16)? = nil) throws -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 1600)
        let length = try buffer.withUnsafeMutableBytes { try NackResponder.write(retransmission, from: cache, now: now, transportSequenceNumber: tcc, into: $0) }
        return length.map { Array(buffer[..<$0]) }
    }

    func testNackAnsweredWithRTXPacketBytes() throws {
        let cache = RetransmissionCache(config: .video)
        let original = try videoPacket(seq: 65535)
        cache.insert(original, now: 0)
        cache.insert(try videoPacket(seq: 0), now: 1000)
        var responder = NackResponder(rtx: rtx, initialRTXSequenceNumber: 65535)
        var out: [Retransmission] = []
        responder.respond(to: try nackFromWire([65535, 0]), cache: cache, now: 50_000, rtt: 40_000, into: &out)
        XCTAssertEqual(out.map(\.sequenceNumber), [65535, 0])
        XCTAssertEqual(out.map { $0.rtx?.sequenceNumber }, [65535, 0], "own RTX sequence, wrapping")
        let bytes = try XCTUnwrap(try write(out[0], cache, now: 50_000))
        let rtxView = try received(bytes)
        XCTAssertEqual(rtxView.ssrc, 0x5151_0002)
        XCTAssertEqual(rtxView.pt, 121)
        XCTAssertEqual(rtxView.seq, 65535)
        XCTAssertEqual(rtxView.ts, 0x1122_3344)
        XCTAssertTrue(rtxView.marker)
        XCTAssertEqual(rtxView.csrcs, [0xC5C5_C5C5])
        XCTAssertEqual(rtxView.extensions[9], Array("v0".utf8))
        XCTAssertEqual(rtxView.payload, [0xFF, 0xFF, 0x10, 0x01, 0xBB, 0xCC, 0xDD], "OSN then the original payload")
        XCTAssertEqual(bytes.count, original.count + 2)
        // Unwrapping gives the original back byte for byte.
        let restored = try bytes.withUnsafeBytes { rtxBuffer -> [UInt8] in
            let view = try RTPPacketView(rtxBuffer)
            XCTAssertEqual(RTXPacket.originalSequenceNumber(view), 65535)
            var output = [UInt8](repeating: 0, count: 1500)
            let length = try output.withUnsafeMutableBytes { try RTXPacket.unwrap(view, ssrc: 0xABCD_0001, payloadType: 120, into: $0) }
            return Array(output[..<length])
        }
        XCTAssertEqual(restored, original)
        XCTAssertEqual(responder.stats, NackResponderStats(requested: 2, resent: 2))
    }

    func testNackAnsweredWithOriginalWithoutRTX() throws {
        let cache = RetransmissionCache(config: .video)
        let original = try videoPacket(seq: 7)
        cache.insert(original, now: 0)
        var responder = NackResponder(rtx: nil, initialRTXSequenceNumber: 0)
        var out: [Retransmission] = []
        responder.respond(to: [7], cache: cache, now: 10_000, rtt: nil, into: &out)
        XCTAssertEqual(out, [Retransmission(sequenceNumber: 7, rtx: nil)])
        XCTAssertEqual(try write(out[0], cache, now: 10_000), original)
        XCTAssertEqual(responder.nextRTXSequenceNumber, 0, "no RTX sequence used")
    }

    func testCodecWithoutRTXPayloadTypeFallsBackToOriginal() throws {
        let cache = RetransmissionCache(config: .video)
        cache.insert(cachedPacket(seq: 3, pt: 96), now: 0)
        var responder = NackResponder(rtx: rtx, initialRTXSequenceNumber: 10)
        var out: [Retransmission] = []
        responder.respond(to: [3], cache: cache, now: 1, rtt: nil, into: &out)
        XCTAssertEqual(out, [Retransmission(sequenceNumber: 3, rtx: nil)])
    }

    func testPaddingIsNotCarriedAndTransportSequenceIsFresh() throws {
        let cache = RetransmissionCache(config: .video)
        cache.insert(try videoPacket(seq: 9, padding: 4), now: 0)
        var responder = NackResponder(rtx: rtx, initialRTXSequenceNumber: 500)
        var out: [Retransmission] = []
        responder.respond(to: [9], cache: cache, now: 1, rtt: nil, into: &out)
        let bytes = try XCTUnwrap(try write(out[0], cache, now: 1, tcc: (id: 7, value: 0x0A0B)))
        XCTAssertEqual(bytes[0] & 0x20, 0, "P cleared")
        let view = try received(bytes)
        XCTAssertEqual(view.payload, [0x00, 0x09, 0x10, 0x01, 0xBB, 0xCC, 0xDD])
        XCTAssertEqual(view.extensions[7], [0x0A, 0x0B])
        // The original form gets the fresh number too.
        var plain = NackResponder(rtx: nil, initialRTXSequenceNumber: 0)
        var again: [Retransmission] = []
        plain.respond(to: [9], cache: cache, now: 200_000, rtt: nil, into: &again)
        let original = try XCTUnwrap(try write(again[0], cache, now: 200_000, tcc: (id: 7, value: 0x0C0D)))
        XCTAssertEqual(try received(original).extensions[7], [0x0C, 0x0D])
    }

    func testThrottlePerPacketAtMaxOfRTTAndTwentyMilliseconds() throws {
        let cache = RetransmissionCache(config: .video)
        for seq: UInt16 in 1...3 { cache.insert(cachedPacket(seq: seq), now: 0) }
        var responder = NackResponder(rtx: rtx, initialRTXSequenceNumber: 0)
        var out: [Retransmission] = []
        responder.respond(to: [1, 2, 2], cache: cache, now: 100_000, rtt: 60_000, into: &out)
        XCTAssertEqual(out.map(\.sequenceNumber), [1, 2], "a repeat inside one NACK is throttled")
        out.removeAll()
        responder.respond(to: [1, 3], cache: cache, now: 159_999, rtt: 60_000, into: &out)
        XCTAssertEqual(out.map(\.sequenceNumber), [3], "1 was resent under an RTT ago")
        out.removeAll()
        responder.respond(to: [1], cache: cache, now: 160_000, rtt: 60_000, into: &out)
        XCTAssertEqual(out.map(\.sequenceNumber), [1])
        // Tiny RTT: the 20 ms floor holds.
        out.removeAll()
        responder.respond(to: [1], cache: cache, now: 175_000, rtt: 1_000, into: &out)
        XCTAssertEqual(out, [])
        responder.respond(to: [1], cache: cache, now: 180_000, rtt: 1_000, into: &out)
        XCTAssertEqual(out.map(\.sequenceNumber), [1])
        XCTAssertEqual(out.map { $0.rtx?.sequenceNumber }, [4], "RTX numbers only advance for packets sent")
        XCTAssertEqual(responder.stats.throttled, 3)
        XCTAssertEqual(responder.stats.resent, 5)
        XCTAssertEqual(NackResponder.resendInterval(rtt: nil), 100_000)
    }

    func testMissingAndExpiredAreCountedNotSent() throws {
        let cache = RetransmissionCache(config: RetransmissionCacheConfig(capacity: 4, maxAge: 1_000_000))
        for seq: UInt16 in 10...15 { cache.insert(cachedPacket(seq: seq), now: Int64(seq) * 100_000) }
        var responder = NackResponder(rtx: nil, initialRTXSequenceNumber: 0)
        var out: [Retransmission] = []
        // 10, 11: evicted by count; 12: stored at 1.2 s, expired at 2.25 s; 99: never sent.
        responder.respond(to: [10, 11, 12, 13, 99], cache: cache, now: 2_250_000, rtt: nil, into: &out)
        XCTAssertEqual(out.map(\.sequenceNumber), [13])
        XCTAssertEqual(responder.stats, NackResponderStats(requested: 5, resent: 1, throttled: 0, missing: 3, expired: 1))
    }

    func testPacketGoneBetweenRespondAndWriteGivesNil() throws {
        let cache = RetransmissionCache(config: RetransmissionCacheConfig(capacity: 2, maxAge: 1_000_000))
        cache.insert(cachedPacket(seq: 1), now: 0)
        var responder = NackResponder(rtx: nil, initialRTXSequenceNumber: 0)
        var out: [Retransmission] = []
        responder.respond(to: [1], cache: cache, now: 0, rtt: nil, into: &out)
        cache.insert(cachedPacket(seq: 2), now: 0)
        cache.insert(cachedPacket(seq: 3), now: 0)
        XCTAssertNil(try write(out[0], cache, now: 0))
    }

    func testSmallOutputBufferIsATypedError() throws {
        let cache = RetransmissionCache(config: .video)
        cache.insert(try videoPacket(seq: 1), now: 0)
        var responder = NackResponder(rtx: rtx, initialRTXSequenceNumber: 0)
        var out: [Retransmission] = []
        responder.respond(to: [1], cache: cache, now: 0, rtt: nil, into: &out)
        var small = [UInt8](repeating: 0, count: 20)
        XCTAssertThrowsError(try small.withUnsafeMutableBytes { try NackResponder.write(out[0], from: cache, now: 0, into: $0) }) {
            XCTAssertEqual($0 as? RTPError, .bufferTooSmall)
        }
    }

    func testRTXWithoutOSNIsRejected() throws {
        let probe = rtpPacket(ssrc: 5, seq: 1, ts: 0, pt: 121, payload: [0x01])
        try probe.withUnsafeBytes { buffer in
            let view = try RTPPacketView(buffer)
            XCTAssertNil(RTXPacket.originalSequenceNumber(view))
            var output = [UInt8](repeating: 0, count: 100)
            XCTAssertThrowsError(try output.withUnsafeMutableBytes { try RTXPacket.unwrap(view, ssrc: 1, payloadType: 120, into: $0) }) {
                XCTAssertEqual($0 as? RTPError, .truncated)
            }
        }
    }

    private func received(_ bytes: [UInt8]) throws -> Received {
        try parseReceived(bytes, subscriber: ParticipantID(9))
    }
}
