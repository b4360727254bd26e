import RTP
import XCTest
@testable import SFU

/// A real publisher stream store and a real subscription log, filled the way the router
/// fills them (original stored once, each send logged), so the responder and the resend
/// writer are exercised on the real lookup (`SubscriptionRetransmissions`).
final class RepairFixture {
    let track = PublishedTrack(publisher: alice, description: videoTrack("cam", layers: [StreamDescription(ssrc: 0xABCD_0001)]))
    let storage: SentPacketStorage
    var log: SentPacketLog
    /// The subscriber-side rewrite: transport-cc id 7, mid id 9 = "v0" (publisher ids 1/2 kept as 5/6).
    var rewrite: ExtensionRewrite = {
        var rewrite = ExtensionRewrite()
        rewrite.sourceAudioLevel = 1
        rewrite.sourceAbsSendTime = 2
        rewrite.absSendTime = 6
        rewrite.transportCC = 7
        rewrite.mid = 9
        rewrite.midValue = InlineBytes16(Array("v0".utf8))!
        return rewrite
    }()
    let outgoingSSRC: UInt32 = 0x5151_0001

    init(logCapacity: Int = SentPacketLog.videoCapacity) {
        storage = SentPacketStorage(capacity: logCapacity)
        log = SentPacketLog(storage: storage)
    }

    var lookup: SubscriptionRetransmissions { SubscriptionRetransmissions(log: log, track: track) }

    /// Stores `original` as arrived at `now` and logs it as sent under `outgoing`.
    func send(_ original: [UInt8], outgoing: UInt16, payloadType: UInt8 = 120, timestampOffset: UInt32 = 0, now: Int64) {
        original.withUnsafeBytes { _ = track.streams[0].cache.insert($0, now: now) }
        log.record(SentPacket(
            outgoing: outgoing, source: UInt16(original[2]) << 8 | UInt16(original[3]), timestampOffset: timestampOffset,
            sentAt: UInt32(truncatingIfNeeded: now), resentAt: 0, layer: 0, payloadType: payloadType, resends: 0, extensionsVersion: 0))
    }

    func write(_ retransmission: Retransmission, now: Int64, tcc: UInt16? = nil, outputSize: Int = 1600) throws -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: outputSize)
        var scratch = [UInt8](repeating: 0, count: 2048)
        let rewrite = self.rewrite
        let length = try buffer.withUnsafeMutableBytes { output in
            try scratch.withUnsafeMutableBytes { scratch in
                try lookup.write(retransmission, subscriber: bob, ssrc: outgoingSSRC, extensions: { _ in rewrite }, now: now,
                                 transportSequenceNumber: tcc, scratch: scratch, into: output)
            }
        }
        return length.map { Array(buffer[..<$0]) }
    }
}

final class NackResponderTests: XCTestCase {
    let rtx = RTXConfiguration(ssrc: 0x5151_0002, payloadTypes: [(apt: 120, rtx: 121), (apt: 109, rtx: 110)])

    /// A publisher video packet: CSRC, one-byte extensions (abs-send-time id 2, its
    /// transport-cc id 3 and mid id 4, which the rewrite drops), marker, payload.
    func videoPacket(seq: UInt16, padding: Int = 0) throws -> [UInt8] {
        try RTPPacketBuilder(
            marker: true, payloadType: 96, sequenceNumber: seq, timestamp: 0x1122_3344, ssrc: 0xABCD_0001,
            csrcs: [0xC5C5_C5C5],
            extensions: [RTPHeaderExtension(id: 2, value: [0x0A, 0x0B, 0x0C]), RTPHeaderExtension(id: 3, value: [0x00, 0x05]),
                         RTPHeaderExtension(id: 4, value: Array("p".utf8))],
            paddingLength: padding
        ).serialize(payload: [0x10, 0x01, 0xBB, 0xCC, 0xDD])
    }

    /// NACK as it arrives on the wire, parsed back (PID/BLP packing and unpacking included).
    func nackFromWire(_ seqs: [UInt16], mediaSSRC: UInt32 = 0x5151_0001) throws -> [UInt16] {
        let bytes = try RTCPCompound.serialize([.nack(RTCPGenericNACK(senderSSRC: 1, mediaSSRC: mediaSSRC, sequenceNumbers: seqs))])
        let parsed = try bytes.withUnsafeBytes { try RTCPCompound.parse($0) }
        guard case .nack(let nack) = parsed.first else { throw XCTSkip("parser returned no NACK") }
        XCTAssertEqual(nack.mediaSSRC, mediaSSRC)
        return nack.sequenceNumbers
    }

    func testNackAnsweredWithRTXOfTheRewrittenPacket() throws {
        let fixture = RepairFixture()
        fixture.send(try videoPacket(seq: 900), outgoing: 65535, timestampOffset: 0x10, now: 0)
        fixture.send(try videoPacket(seq: 901), outgoing: 0, timestampOffset: 0x10, now: 1000)
        var responder = NackResponder(rtx: rtx, initialRTXSequenceNumber: 65535)
        var out: [Retransmission] = []
        responder.respond(to: try nackFromWire([65535, 0]), lookup: fixture.lookup, now: 50_000, rtt: 40_000, into: &out)
        XCTAssertEqual(out.map(\.sequenceNumber), [65535, 0])
        XCTAssertEqual(out.map { $0.rtx?.sequenceNumber }, [65535, 0], "own RTX sequence, wrapping")
        let bytes = try XCTUnwrap(try fixture.write(out[0], now: 50_000, tcc: 0x0A0B))
        let rtxView = try received(bytes)
        XCTAssertEqual(rtxView.ssrc, 0x5151_0002)
        XCTAssertEqual(rtxView.pt, 121)
        XCTAssertEqual(rtxView.seq, 65535)
        XCTAssertEqual(rtxView.ts, 0x1122_3354, "timestamp as first sent (original + offset)")
        XCTAssertTrue(rtxView.marker)
        XCTAssertEqual(rtxView.csrcs, [0xC5C5_C5C5])
        XCTAssertEqual(rtxView.extensions, [6: [0x0A, 0x0B, 0x0C], 7: [0x0A, 0x0B], 9: Array("v0".utf8)], "subscriber ids, fresh transport-cc")
        XCTAssertEqual(rtxView.payload, [0xFF, 0xFF, 0x10, 0x01, 0xBB, 0xCC, 0xDD], "OSN then the original payload")
        // Unwrapping gives exactly what the forward path writes for this decision.
        let restored = try bytes.withUnsafeBytes { rtxBuffer -> [UInt8] in
            let view = try RTPPacketView(rtxBuffer)
            XCTAssertEqual(RTXPacket.originalSequenceNumber(view), 65535)
            var output = [UInt8](repeating: 0, count: 1500)
            let length = try output.withUnsafeMutableBytes { try RTXPacket.unwrap(view, ssrc: fixture.outgoingSSRC, payloadType: 120, into: $0) }
            return Array(output[..<length])
        }
        let forward = Forward(subscriber: bob, ssrc: fixture.outgoingSSRC, sequenceNumber: 65535, timestamp: 0x1122_3354, payloadType: 120,
                              extensions: fixture.rewrite)
        let firstSend = try forwardWrite(forward, try videoPacket(seq: 900), tcc: 0x0A0B)
        XCTAssertEqual(restored, firstSend)
        XCTAssertEqual(responder.stats, NackResponderStats(requested: 2, resent: 2))
    }

    func forwardWrite(_ forward: Forward, _ original: [UInt8], tcc: UInt16?) throws -> [UInt8] {
        try original.withUnsafeBytes { input in
            let view = try RTPPacketView(input)
            var buffer = [UInt8](repeating: 0, count: 1600)
            let length = try buffer.withUnsafeMutableBytes { try forward.write(from: view, into: $0, transportSequenceNumber: tcc) }
            return Array(buffer[..<length])
        }
    }

    func testNackAnsweredWithOriginalWithoutRTX() throws {
        let fixture = RepairFixture()
        let original = try videoPacket(seq: 7)
        fixture.send(original, outgoing: 4007, now: 0)
        var responder = NackResponder(rtx: nil, initialRTXSequenceNumber: 0)
        var out: [Retransmission] = []
        responder.respond(to: [4007], lookup: fixture.lookup, now: 10_000, rtt: nil, into: &out)
        XCTAssertEqual(out, [Retransmission(sequenceNumber: 4007, rtx: nil)])
        let forward = Forward(subscriber: bob, ssrc: fixture.outgoingSSRC, sequenceNumber: 4007, timestamp: 0x1122_3344, payloadType: 120,
                              extensions: fixture.rewrite)
        XCTAssertEqual(try fixture.write(out[0], now: 10_000, tcc: 3), try forwardWrite(forward, original, tcc: 3))
        XCTAssertEqual(responder.nextRTXSequenceNumber, 0, "no RTX sequence used")
    }

    func testCodecWithoutRTXPayloadTypeFallsBackToOriginal() throws {
        let fixture = RepairFixture()
        fixture.send(cachedPacket(seq: 3, pt: 96), outgoing: 3, payloadType: 96, now: 0)
        var responder = NackResponder(rtx: rtx, initialRTXSequenceNumber: 10)
        var out: [Retransmission] = []
        responder.respond(to: [3], lookup: fixture.lookup, now: 1, rtt: nil, into: &out)
        XCTAssertEqual(out, [Retransmission(sequenceNumber: 3, rtx: nil)])
    }

    func testPaddingIsNotCarriedInRTXAndTransportSequenceIsFresh() throws {
        let fixture = RepairFixture()
        fixture.send(try videoPacket(seq: 9, padding: 4), outgoing: 9, now: 0)
        var responder = NackResponder(rtx: rtx, initialRTXSequenceNumber: 500)
        var out: [Retransmission] = []
        responder.respond(to: [9], lookup: fixture.lookup, now: 1, rtt: nil, into: &out)
        let bytes = try XCTUnwrap(try fixture.write(out[0], now: 1, tcc: 0x0A0B))
        XCTAssertEqual(bytes[0] & 0x20, 0, "P cleared")
        let view = try received(bytes)
        XCTAssertEqual(view.payload, [0x00, 0x09, 0x10, 0x01, 0xBB, 0xCC, 0xDD])
        XCTAssertEqual(view.extensions[7], [0x0A, 0x0B])
        // The original form gets the fresh number too.
        var plain = NackResponder(rtx: nil, initialRTXSequenceNumber: 0)
        var again: [Retransmission] = []
        plain.respond(to: [9], lookup: fixture.lookup, now: 200_000, rtt: nil, into: &again)
        let original = try XCTUnwrap(try fixture.write(again[0], now: 200_000, tcc: 0x0C0D))
        XCTAssertEqual(try received(original).extensions[7], [0x0C, 0x0D])
    }

    func testThrottlePerPacketAtMaxOfRTTAndTwentyMilliseconds() throws {
        let fixture = RepairFixture()
        for seq: UInt16 in 1...3 { fixture.send(cachedPacket(seq: seq), outgoing: seq, now: 0) }
        var responder = NackResponder(rtx: rtx, initialRTXSequenceNumber: 0)
        var out: [Retransmission] = []
        responder.respond(to: [1, 2, 2], lookup: fixture.lookup, now: 100_000, rtt: 60_000, into: &out)
        XCTAssertEqual(out.map(\.sequenceNumber), [1, 2], "a repeat inside one NACK is throttled")
        out.removeAll()
        responder.respond(to: [1, 3], lookup: fixture.lookup, now: 159_999, rtt: 60_000, into: &out)
        XCTAssertEqual(out.map(\.sequenceNumber), [3], "1 was resent under an RTT ago")
        out.removeAll()
        responder.respond(to: [1], lookup: fixture.lookup, now: 160_000, rtt: 60_000, into: &out)
        XCTAssertEqual(out.map(\.sequenceNumber), [1])
        // Tiny RTT: the 20 ms floor holds.
        out.removeAll()
        responder.respond(to: [1], lookup: fixture.lookup, now: 175_000, rtt: 1_000, into: &out)
        XCTAssertEqual(out, [])
        responder.respond(to: [1], lookup: fixture.lookup, now: 180_000, rtt: 1_000, into: &out)
        XCTAssertEqual(out.map(\.sequenceNumber), [1])
        XCTAssertEqual(out.map { $0.rtx?.sequenceNumber }, [4], "RTX numbers only advance for packets sent")
        XCTAssertEqual(responder.stats.throttled, 3)
        XCTAssertEqual(responder.stats.resent, 5)
        XCTAssertEqual(fixture.log.entry(1)?.resends, 3)
        XCTAssertEqual(NackResponder.resendInterval(rtt: nil), 100_000)
    }

    func testMissingAndExpiredAreCountedNotSent() throws {
        // A 4-slot log: outgoing 10 and 11 are overwritten by 14 and 15 (count bound).
        let fixture = RepairFixture(logCapacity: 4)
        for seq: UInt16 in 10...15 { fixture.send(cachedPacket(seq: seq), outgoing: seq, now: Int64(seq) * 100_000) }
        var responder = NackResponder(rtx: nil, initialRTXSequenceNumber: 0)
        var out: [Retransmission] = []
        // 12: stored at 1.2 s, expired at 2.25 s (1 s age bound); 99: never sent; 16: ahead of anything sent.
        responder.respond(to: [10, 11, 12, 13, 99, 16], lookup: fixture.lookup, now: 2_250_000, rtt: nil, into: &out)
        XCTAssertEqual(out.map(\.sequenceNumber), [13])
        XCTAssertEqual(responder.stats, NackResponderStats(requested: 6, resent: 1, throttled: 0, missing: 4, expired: 1))
    }

    func testPacketGoneFromTheStoreBetweenRespondAndWriteGivesNil() throws {
        let fixture = RepairFixture()
        fixture.send(cachedPacket(seq: 1), outgoing: 1, now: 0)
        var responder = NackResponder(rtx: nil, initialRTXSequenceNumber: 0)
        var out: [Retransmission] = []
        responder.respond(to: [1], lookup: fixture.lookup, now: 0, rtt: nil, into: &out)
        XCTAssertEqual(out.count, 1)
        XCTAssertNil(try fixture.write(out[0], now: 1_000_001), "older than the store's age bound by then")
    }

    func testAnotherPacketUnderTheSameSourceNumberIsNotSent() throws {
        // The store holds seq 5 again (the publisher restarted its numbering): the log entry
        // was sent at another time, so it does not answer with the new packet.
        let fixture = RepairFixture()
        fixture.send(cachedPacket(seq: 5), outgoing: 100, now: 0)
        for seq in stride(from: 40_000, to: 40_010, by: 1) { fixture.send(cachedPacket(seq: UInt16(seq)), outgoing: UInt16(seq - 39_899), now: 1000) }
        cachedPacket(seq: 5).withUnsafeBytes { _ = fixture.track.streams[0].cache.insert($0, now: 2000) }
        XCTAssertEqual(fixture.lookup.presence(of: 100, now: 3000), .missing)
    }

    func testSmallOutputBufferIsATypedError() throws {
        let fixture = RepairFixture()
        fixture.send(try videoPacket(seq: 1), outgoing: 1, now: 0)
        var responder = NackResponder(rtx: rtx, initialRTXSequenceNumber: 0)
        var out: [Retransmission] = []
        responder.respond(to: [1], lookup: fixture.lookup, now: 0, rtt: nil, into: &out)
        XCTAssertThrowsError(try fixture.write(out[0], now: 0, outputSize: 20)) {
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
