import XCTest
@testable import RTP

/// The borrowed walk the SFU's RTCP handler uses (`RTCPCompoundReader`,
/// `RTCPPacketView.decoded()`), checked against the captured compounds of
/// `RTCPCompoundTests` and against the owning parser.
final class RTCPCompoundReaderTests: XCTestCase {
    /// Every view of `bytes`, decoded, as the types in order (framing and decoding errors thrown).
    func kinds(_ bytes: [UInt8]) throws -> [String] {
        try bytes.withUnsafeBytes { buffer in
            var reader = RTCPCompoundReader(buffer)
            var kinds: [String] = []
            while let view = try reader.next() {
                switch try view.decoded() {
                case .senderReport: kinds.append("SR")
                case .receiverReport: kinds.append("RR")
                case .nack: kinds.append("NACK")
                case .pictureLossIndication: kinds.append("PLI")
                case .fullIntraRequest: kinds.append("FIR")
                case .remb: kinds.append("REMB")
                case .transportFeedback: kinds.append("TCC")
                case .sourceDescription: kinds.append("SDES")
                case .goodbye(let count): kinds.append("BYE\(count)")
                case .application: kinds.append("APP")
                case .other: kinds.append("other")
                }
            }
            return kinds
        }
    }

    func testChromiumReceiverReportViewsMatchParsedValues() throws {
        XCTAssertEqual(try kinds(Fixtures.chromiumRRSDESREMB), ["RR", "SDES", "REMB"])
        let parsed = try RTCPCompound.parse(Fixtures.chromiumRRSDESREMB)
        try Fixtures.chromiumRRSDESREMB.withUnsafeBytes { buffer in
            var reader = RTCPCompoundReader(buffer)
            guard case .receiverReport(let rr)? = try reader.next()?.decoded(),
                  case .receiverReport(let owned) = parsed[0] else { return XCTFail("no RR") }
            XCTAssertEqual(rr.ssrc, 0x7A3C_1E05)
            XCTAssertEqual(rr.blocks.count, 1)
            XCTAssertEqual(rr.blocks.block(at: 0), owned.reportBlocks[0])
            _ = try reader.next()
            guard case .remb(let remb)? = try reader.next()?.decoded() else { return XCTFail("no REMB") }
            XCTAssertEqual(remb.bitrate, 1_500_000)
            XCTAssertEqual(remb.ssrcCount, 1)
            XCTAssertEqual(remb.ssrc(at: 0), 0x2F6B_3C4D)
            XCTAssertNil(try reader.next(), "end of the compound")
            XCTAssertEqual(reader.offset, buffer.count)
        }
    }

    func testSenderReportViewSignExtendsCumulativeLoss() throws {
        XCTAssertEqual(try kinds(Fixtures.senderReportAndBye), ["SR", "BYE1"])
        try Fixtures.senderReportAndBye.withUnsafeBytes { buffer in
            var reader = RTCPCompoundReader(buffer)
            guard case .senderReport(let sr)? = try reader.next()?.decoded() else { return XCTFail("no SR") }
            XCTAssertEqual(sr.ssrc, 0x2F6B_3C4D)
            XCTAssertEqual(sr.ntpTimestamp, 0xE94F_3A10_8000_0000)
            XCTAssertEqual(sr.rtpTimestamp, 0x5C3E_0C80)
            XCTAssertEqual(sr.packetCount, 500)
            XCTAssertEqual(sr.octetCount, 40000)
            XCTAssertEqual(sr.blocks.block(at: 0).cumulativeLost, -1)
        }
    }

    /// NACK items expand into a reused array: PID, then BLP bits from the least significant,
    /// across the 65535 → 0 wrap; the array keeps its capacity between NACKs.
    func testNACKViewExpandsIntoReusedArray() throws {
        XCTAssertEqual(try kinds(Fixtures.feedbackMix), ["NACK", "PLI", "FIR", "TCC", "APP", "other"])
        var out: [UInt16] = []
        out.reserveCapacity(64)
        let capacity = out.capacity
        try Fixtures.feedbackMix.withUnsafeBytes { buffer in
            var reader = RTCPCompoundReader(buffer)
            guard case .nack(let nack)? = try reader.next()?.decoded() else { return XCTFail("no NACK") }
            XCTAssertEqual(nack.senderSSRC, 0x7A3C_1E05)
            XCTAssertEqual(nack.mediaSSRC, 0x2F6B_3C4D)
            nack.appendSequenceNumbers(to: &out)
            XCTAssertEqual(out, [65534, 65535, 1, 16, 32])
            out.removeAll(keepingCapacity: true)
            nack.appendSequenceNumbers(to: &out)
            XCTAssertEqual(out, [65534, 65535, 1, 16, 32])
            _ = try reader.next()
            guard case .fullIntraRequest(let fir)? = try reader.next()?.decoded() else { return XCTFail("no FIR") }
            XCTAssertEqual(fir.entryCount, 1)
            XCTAssertEqual(fir.entry(at: 0), .init(ssrc: 0x2F6B_3C4D, sequenceNumber: 7))
        }
        XCTAssertEqual(out.capacity, capacity, "no reallocation")
    }

    /// The reader refuses what `parse` refuses, with the same typed error, at the same packet.
    func testReaderAndParserAgreeOnEveryPrefix() {
        for fixture in [Fixtures.chromiumRRSDESREMB, Fixtures.senderReportAndBye, Fixtures.feedbackMix] {
            for length in 0...fixture.count {
                let prefix = Array(fixture[..<length])
                XCTAssertEqual(outcome { try RTCPCompound.parse(prefix).count }, outcome { try kinds(prefix).count },
                               "prefix \(length) of \(fixture.count)")
            }
        }
    }

    /// Packet count, or the typed error.
    func outcome(_ body: () throws -> Int) -> String {
        do { return "\(try body()) packets" } catch { return "\(error)" }
    }

    func testMalformedSDESIsRefusedByTheView() throws {
        // SDES with one chunk whose CNAME length runs past the packet.
        let bytes: [UInt8] = [0x81, 0xCA, 0x00, 0x02, 0x00, 0x00, 0x00, 0x01, 0x01, 0x09, 0x61, 0x00]
        XCTAssertThrowsError(try kinds(bytes)) { XCTAssertEqual($0 as? RTCPError, .malformed(packetType: 202)) }
        XCTAssertThrowsError(try RTCPCompound.parse(bytes)) { XCTAssertEqual($0 as? RTCPError, .malformed(packetType: 202)) }
    }
}
