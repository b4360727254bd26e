import XCTest
@testable import RTP
import SplitMix

final class RTCPCompoundTests: XCTestCase {
    func testChromiumReceiverReportSDESAndREMB() throws {
        let packets = try RTCPCompound.parse(Fixtures.chromiumRRSDESREMB)
        XCTAssertEqual(packets.count, 3)
        guard case .receiverReport(let rr) = packets[0],
              case .sourceDescription(let sdes) = packets[1],
              case .remb(let remb) = packets[2] else { return XCTFail("\(packets)") }
        XCTAssertEqual(rr.ssrc, 0x7A3C_1E05)
        XCTAssertEqual(rr.reportBlocks, [RTCPReportBlock(
            ssrc: 0x2F6B_3C4D, fractionLost: 10, cumulativeLost: 3, extendedHighestSequenceNumber: 0x0001_1A2B,
            jitter: 30, lastSenderReport: 0x8B5C_1234, delaySinceLastSenderReport: 0x0001_0000)])
        XCTAssertEqual(sdes.chunks.count, 1)
        XCTAssertEqual(sdes.chunks[0].ssrc, 0x7A3C_1E05)
        XCTAssertEqual(sdes.chunks[0].cname, "abcdEFGHijklMNOP")
        XCTAssertEqual(remb, RTCPReceiverEstimatedMaxBitrate(senderSSRC: 0x7A3C_1E05, bitrate: 1_500_000, ssrcs: [0x2F6B_3C4D]))
        XCTAssertEqual(try RTCPCompound.serialize(packets), Fixtures.chromiumRRSDESREMB, "byte-exact round trip")
    }

    func testSenderReportAndBye() throws {
        let packets = try RTCPCompound.parse(Fixtures.senderReportAndBye)
        guard packets.count == 2, case .senderReport(let sr) = packets[0], case .goodbye(let bye) = packets[1] else {
            return XCTFail("\(packets)")
        }
        XCTAssertEqual(sr.ssrc, 0x2F6B_3C4D)
        XCTAssertEqual(sr.ntpTimestamp, 0xE94F_3A10_8000_0000)
        XCTAssertEqual(sr.rtpTimestamp, 0x5C3E_0C80)
        XCTAssertEqual(sr.packetCount, 500)
        XCTAssertEqual(sr.octetCount, 40000)
        XCTAssertEqual(sr.reportBlocks.first?.cumulativeLost, -1)
        XCTAssertEqual(sr.reportBlocks.first?.extendedHighestSequenceNumber, 4096)
        XCTAssertEqual(bye.ssrcs, [0x2F6B_3C4D])
        XCTAssertEqual(bye.reason, Array("leavin".utf8))
        XCTAssertEqual(try RTCPCompound.serialize(packets), Fixtures.senderReportAndBye)
    }

    func testFeedbackMix() throws {
        let packets = try RTCPCompound.parse(Fixtures.feedbackMix)
        XCTAssertEqual(packets, [
            .nack(RTCPGenericNACK(senderSSRC: 0x7A3C_1E05, mediaSSRC: 0x2F6B_3C4D, sequenceNumbers: [65534, 65535, 1, 16, 32])),
            .pictureLossIndication(RTCPPictureLossIndication(senderSSRC: 0x7A3C_1E05, mediaSSRC: 0x2F6B_3C4D)),
            .fullIntraRequest(RTCPFullIntraRequest(senderSSRC: 0x7A3C_1E05, entries: [.init(ssrc: 0x2F6B_3C4D, sequenceNumber: 7)])),
            .transportFeedback(RTCPTransportFeedback(
                senderSSRC: 0x7A3C_1E05, mediaSSRC: 0x2F6B_3C4D,
                body: [0x00, 0x2A, 0x00, 0x02, 0x00, 0x01, 0x00, 0x00, 0x20, 0x02, 0x04, 0x04])),
            .application(RTCPApplication(subtype: 3, ssrc: 0x2F6B_3C4D, name: 0x7175_616B, data: [0xDE, 0xAD, 0xBE, 0xEF])),
            .opaque(RTCPOpaquePacket(packetType: 210, countOrFormat: 5, body: [1, 2, 3, 4])),
        ])
        XCTAssertEqual(try RTCPCompound.serialize(packets), Fixtures.feedbackMix)
    }

    func testNACKPackingFromUnorderedListWithDuplicatesAndWrap() throws {
        let nack = RTCPGenericNACK(senderSSRC: 1, mediaSSRC: 2, sequenceNumbers: [65535, 3, 65534, 3, 1, 40, 20])
        let items = nack.packedItems
        XCTAssertEqual(items.map(\.pid), [65534, 20, 40])
        XCTAssertEqual(items.map(\.blp), [0b10101, 0, 0])
        let parsed = try RTCPCompound.parse(RTCPCompound.serialize([.nack(nack)]))
        XCTAssertEqual(parsed, [.nack(RTCPGenericNACK(senderSSRC: 1, mediaSSRC: 2, sequenceNumbers: [65534, 65535, 1, 3, 20, 40]))])
        XCTAssertEqual(RTCPGenericNACK(senderSSRC: 1, mediaSSRC: 2, sequenceNumbers: []).packedItems.count, 0)
    }

    func testSerializedPacketsRoundTrip() throws {
        let block = RTCPReportBlock(ssrc: 9, fractionLost: 255, cumulativeLost: -0x80_0000, extendedHighestSequenceNumber: .max,
                                    jitter: 1, lastSenderReport: 2, delaySinceLastSenderReport: 3)
        let packets: [RTCPPacket] = [
            .senderReport(RTCPSenderReport(ssrc: 1, ntpTimestamp: 0x0102_0304_0506_0708, rtpTimestamp: 9, packetCount: 10, octetCount: 11, reportBlocks: [block, block])),
            .receiverReport(RTCPReceiverReport(ssrc: 2)),
            .sourceDescription(RTCPSourceDescription(chunks: [
                .init(ssrc: 3, items: [.init(type: 1, value: Array("a".utf8)), .init(type: 2, value: Array("name".utf8))]),
                .init(ssrc: 4, items: []),
            ])),
            .goodbye(RTCPGoodbye(ssrcs: [5, 6])),
            .pictureLossIndication(RTCPPictureLossIndication(senderSSRC: 7, mediaSSRC: 8)),
            .fullIntraRequest(RTCPFullIntraRequest(senderSSRC: 7, entries: [.init(ssrc: 1, sequenceNumber: 255), .init(ssrc: 2, sequenceNumber: 0)])),
            .remb(RTCPReceiverEstimatedMaxBitrate(senderSSRC: 7, bitrate: 262_143, ssrcs: [1, 2, 3])),
        ]
        let bytes = try RTCPCompound.serialize(packets)
        XCTAssertEqual(bytes.count, packets.reduce(0) { $0 + $1.encodedLength })
        XCTAssertEqual(try RTCPCompound.parse(bytes), packets)
    }

    func testREMBMantissaRoundsDown() throws {
        for bitrate: UInt64 in [0, 1, 262_143, 262_144, 1_000_001, 30_000_000, 1 << 40] {
            let bytes = try RTCPCompound.serialize([.remb(RTCPReceiverEstimatedMaxBitrate(senderSSRC: 1, bitrate: bitrate, ssrcs: []))])
            guard case .remb(let parsed) = try RTCPCompound.parse(bytes).first else { return XCTFail() }
            XCTAssertLessThanOrEqual(parsed.bitrate, bitrate)
            XCTAssertGreaterThanOrEqual(Double(parsed.bitrate), Double(bitrate) * (1 - 1.0 / 131_072), "\(bitrate)")
        }
    }

    func testTypedErrors() {
        func expect(_ bytes: [UInt8], _ error: RTCPError, line: UInt = #line) {
            XCTAssertThrowsError(try RTCPCompound.parse(bytes), line: line) { XCTAssertEqual($0 as? RTCPError, error, line: line) }
        }
        expect([0x81, 0xC9, 0x00], .truncated)
        expect([0x41, 0xC9, 0x00, 0x00], .badVersion(1))
        expect([0x81, 0xC9, 0x00, 0x07, 0, 0, 0, 1], .truncated)
        // RR with RC=1 but no room for the block.
        expect([0x81, 0xC9, 0x00, 0x01, 0, 0, 0, 1], .malformed(packetType: 201))
        // Padding count larger than the body.
        expect([0xA0, 0xC9, 0x00, 0x01, 0, 0, 0, 9], .badPadding)
        // Padding count zero.
        expect([0xA0, 0xC9, 0x00, 0x01, 0, 0, 0, 0], .badPadding)
        XCTAssertEqual(RTCPError.badPadding.code, "rtcp_bad_padding")
    }

    func testPaddedRRParses() throws {
        // RR without blocks + 4 bytes padding (count 4) in the last packet.
        let bytes: [UInt8] = [0xA0, 0xC9, 0x00, 0x02, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x04]
        XCTAssertEqual(try RTCPCompound.parse(bytes), [.receiverReport(RTCPReceiverReport(ssrc: 7))])
    }

    func testEveryPrefixAndRandomBytesGiveTypedErrors() {
        for fixture in [Fixtures.chromiumRRSDESREMB, Fixtures.senderReportAndBye, Fixtures.feedbackMix] {
            for length in 0..<fixture.count {
                do {
                    let packets = try RTCPCompound.parse(Array(fixture[0..<length]))
                    // Only prefixes that end exactly on a packet boundary can succeed.
                    XCTAssertEqual(packets.reduce(0) { $0 + $1.encodedLength }, length)
                } catch {
                    XCTAssertTrue(error == .truncated || error.code == "rtcp_malformed", "\(length): \(error)")
                }
            }
        }
        var rng = SplitMix64(seed: 0xC0FFEE)
        var codes: Set<String> = []
        var parsed = 0
        for _ in 0..<20_000 {
            var bytes = (0..<Int.random(in: 0..<64, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            if bytes.count >= 4 {
                bytes[0] = 0x80 | (bytes[0] & 0x3F)
                bytes[1] = UInt8.random(in: 200...206, using: &rng)
                bytes[2] = 0
                bytes[3] = UInt8(bytes.count / 4 - 1)
            }
            do { _ = try RTCPCompound.parse(bytes); parsed += 1 } catch { codes.insert(error.code) }
        }
        XCTAssertGreaterThan(parsed, 100)
        XCTAssertTrue(codes.isSuperset(of: ["rtcp_truncated", "rtcp_malformed", "rtcp_bad_padding"]), "\(codes)")
    }

    func testUnknownFeedbackFormatsStayOpaque() throws {
        let bytes: [UInt8] = [
            0x83, 0xCD, 0x00, 0x04, // RTPFB FMT=3 (TMMBR, RFC 5104): not decoded
            0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x03, 0x04, 0x05, 0x06, 0x07,
            0x8F, 0xCE, 0x00, 0x03, // PSFB FMT=15 (AFB) with a name other than "REMB"
            0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x47, 0x4F, 0x4F, 0x47, // "GOOG"
            0x82, 0xCE, 0x00, 0x02, // PSFB FMT=2 (SLI) : not decoded
            0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02,
        ]
        let packets = try RTCPCompound.parse(bytes)
        XCTAssertEqual(packets, [
            .opaque(RTCPOpaquePacket(packetType: 205, countOrFormat: 3, body: Array(bytes[4..<20]))),
            .opaque(RTCPOpaquePacket(packetType: 206, countOrFormat: 15, body: Array(bytes[24..<36]))),
            .opaque(RTCPOpaquePacket(packetType: 206, countOrFormat: 2, body: Array(bytes[40..<48]))),
        ])
        XCTAssertEqual(try RTCPCompound.serialize(packets), bytes)
    }

    func testWriteIntoSmallBufferIsTypedError() throws {
        var out = [UInt8](repeating: 0, count: 11)
        try out.withUnsafeMutableBytes { buffer in
            XCTAssertThrowsError(try RTCPPacket.pictureLossIndication(.init(senderSSRC: 1, mediaSSRC: 2)).write(into: buffer)) {
                XCTAssertEqual($0 as? RTCPError, .bufferTooSmall)
            }
        }
    }
}
