import XCTest
@testable import RTP
import SplitMix

/// Transport-wide CC feedback (draft-holmer-rmcat-transport-wide-cc-extensions-01 §3.1).
final class TransportFeedbackTests: XCTestCase {
    /// FCI with the fixed fields and the given chunk/delta bytes.
    private func body(base: UInt16, count: UInt16, reference: UInt32 = 0, fbCount: UInt8 = 0, _ rest: [UInt8]) -> [UInt8] {
        [UInt8(base >> 8), UInt8(base & 0xFF), UInt8(count >> 8), UInt8(count & 0xFF),
         UInt8(reference >> 16), UInt8((reference >> 8) & 0xFF), UInt8(reference & 0xFF), fbCount] + rest
    }

    // MARK: draft §3.1.3 / §3.1.4 examples

    /// §3.1.3 example 1: `|0|0 0|0 0 0 0 0 1 1 0 1 1 1 0 1|` = 0x00DD, a run of 221 "not received".
    func testDraftRunLengthExampleNotReceived() throws {
        let bytes = body(base: 100, count: 221, [0x00, 0xDD])
        let feedback = try TransportFeedback(body: bytes)
        XCTAssertEqual(feedback.receiveDeltas.count, 221)
        XCTAssertTrue(feedback.receiveDeltas.allSatisfy { $0 == nil })
        XCTAssertEqual(try feedback.encodedBody(), bytes, "our chunker picks the same run-length chunk")
    }

    /// §3.1.3 example 2: `|0|1 1|0 0 0 0 0 0 0 1 1 0 0 0|` = 0x6018, symbol 11 (a leftover of
    /// draft -00's "received without timestamp"), which -01 §3.1.1 marks reserved.
    func testDraftRunLengthExampleReservedSymbolIsTypedError() {
        XCTAssertThrowsError(try TransportFeedback(body: body(base: 0, count: 24, [0x60, 0x18]))) {
            XCTAssertEqual($0 as? TransportFeedbackError, .reservedSymbol)
        }
        // §3.1.4 example 2, 0xCD50 = |1|1|00 11 01 01 01 00 00|: also carries symbol 11.
        XCTAssertThrowsError(try TransportFeedback(body: body(base: 0, count: 7, [0xCD, 0x50, 1, 2, 3]))) {
            XCTAssertEqual($0 as? TransportFeedbackError, .reservedSymbol)
        }
    }

    /// §3.1.4 example 1: `|1|0|0 1 1 1 1 1 0 0 0 1 1 1 0 0|` = 0x9F1C: 1x not received,
    /// 5x received, 3x not received, 3x received, 2x not received (1-bit symbols).
    func testDraftOneBitStatusVectorExample() throws {
        let deltas: [UInt8] = [4, 8, 12, 16, 20, 24, 28, 32]
        let bytes = body(base: 7, count: 14, [0x9F, 0x1C] + deltas.prefix(8))
        let feedback = try TransportFeedback(body: bytes)
        let n: Int16? = nil
        XCTAssertEqual(feedback.receiveDeltas, [n, 4, 8, 12, 16, 20, n, n, n, 24, 28, 32, n, n])
        XCTAssertEqual(try feedback.encodedBody(), Array(bytes.prefix(8 + 2 + 8)), "libwebrtc-style chunker closes 14 mixed small symbols as a 1-bit vector")
    }

    // MARK: captures from Chrome / libwebrtc (bytes published in pion/rtcp's tests)

    /// Chrome feedback, 32 bytes, P bit set with one padding byte:
    /// ```
    /// af cd 00 07   V=2 P=1 FMT=15, PT=205 (RTPFB), length 7 (32 bytes)
    /// 9b 74 f6 1f   sender SSRC
    /// 93 71 dc bc   media SSRC
    /// 85 3c 00 09   base seq 34108, status count 9
    /// 63 f9 16 b3   reference time 0x63f916 (6551830 × 64 ms), fb pkt count 179
    /// d5 52         2-bit vector |1|1|01 01 01 01 01 00 10|: 5 small, 1 lost, 1 large
    /// 00 30         run length: symbol 00 (lost), length 48 (only 2 remain to count 9)
    /// 9b aa 6a aa 7b  small deltas 155 170 106 170 123 (× 250 µs)
    /// 01 09         large delta 265 (66.25 ms)
    /// 01            padding count 1
    /// ```
    func testChromeCaptureWithTwoBitVectorAndOverlongRun() throws {
        let packet: [UInt8] = [
            0xaf, 0xcd, 0x00, 0x07, 0x9b, 0x74, 0xf6, 0x1f, 0x93, 0x71, 0xdc, 0xbc,
            0x85, 0x3c, 0x00, 0x09, 0x63, 0xf9, 0x16, 0xb3, 0xd5, 0x52, 0x00, 0x30,
            0x9b, 0xaa, 0x6a, 0xaa, 0x7b, 0x01, 0x09, 0x01,
        ]
        let packets = try RTCPCompound.parse(packet)
        guard packets.count == 1, case .transportFeedback(let tcc) = packets[0] else { return XCTFail("\(packets)") }
        XCTAssertEqual(tcc.senderSSRC, 0x9b74_f61f)
        XCTAssertEqual(tcc.mediaSSRC, 0x9371_dcbc)
        let feedback = try tcc.decoded()
        XCTAssertEqual(feedback.baseSequenceNumber, 34108)
        XCTAssertEqual(feedback.referenceTime, 6_551_830)
        XCTAssertEqual(feedback.feedbackPacketCount, 179)
        XCTAssertEqual(feedback.receiveDeltas, [155, 170, 106, 170, 123, nil, 265, nil, nil])
        let results = feedback.packetResults
        XCTAssertEqual(results.map(\.sequenceNumber), Array(34108...34116))
        XCTAssertEqual(results[0].arrivalMicros, Int64(6_551_830 * 64_000 + 155 * 250))
        let sum: Int64 = 155 + 170 + 106 + 170 + 123 + 265
        let reference: Int64 = 6_551_830 * 64_000
        XCTAssertEqual(results[6].arrivalMicros, reference + sum * 250)
        XCTAssertNil(results[8].arrivalMicros)
        XCTAssertEqual(try TransportFeedback(body: feedback.encodedBody()), feedback)
    }

    /// Feedback from a libwebrtc receiver: our encoder reproduces its FCI byte for byte.
    /// ```
    /// af cd 00 07   P=1, FMT=15, PT=205, length 7
    /// fa 17 fa 17   sender SSRC
    /// 19 3d d8 bb   media SSRC
    /// 00 04 00 07   base seq 4, status count 7
    /// 10 63 6e 01   reference time 1074030, fb pkt count 1
    /// 20 07         run length: symbol 01 (small), length 7
    /// 4c 24 24 10 0c 0c 10   small deltas 76 36 36 16 12 12 16 (19 ms, 9 ms, ...)
    /// 00 00 03      padding, count 3
    /// ```
    func testLibwebrtcFeedbackReencodesByteExact() throws {
        let packet: [UInt8] = [
            0xaf, 0xcd, 0x00, 0x07, 0xfa, 0x17, 0xfa, 0x17, 0x19, 0x3d, 0xd8, 0xbb,
            0x00, 0x04, 0x00, 0x07, 0x10, 0x63, 0x6e, 0x01, 0x20, 0x07, 0x4c, 0x24,
            0x24, 0x10, 0x0c, 0x0c, 0x10, 0x00, 0x00, 0x03,
        ]
        guard case .transportFeedback(let tcc)? = try RTCPCompound.parse(packet).first else { return XCTFail() }
        let feedback = try tcc.decoded()
        XCTAssertEqual(feedback, TransportFeedback(baseSequenceNumber: 4, referenceTime: 1_074_030, feedbackPacketCount: 1,
                                                   receiveDeltas: [76, 36, 36, 16, 12, 12, 16]))
        XCTAssertEqual(try feedback.encodedBody(), Array(packet[12..<29]))
    }

    /// Two run-length chunks with large deltas (bytes from a Chrome capture, padding flag set
    /// without padding bytes, so fed as FCI):
    /// `01 74 00 06 | 45 b1 5a 40 | 40 02 (large ×2) 20 04 (small ×4) | 1f fe 1f 9a | d0 00 d0 00`.
    func testRunLengthChunksWithLargeDeltas() throws {
        let fci: [UInt8] = [0x01, 0x74, 0x00, 0x06, 0x45, 0xb1, 0x5a, 0x40, 0x40, 0x02, 0x20, 0x04,
                            0x1f, 0xfe, 0x1f, 0x9a, 0xd0, 0x00, 0xd0, 0x00]
        let feedback = try TransportFeedback(body: fci)
        XCTAssertEqual(feedback.baseSequenceNumber, 372)
        XCTAssertEqual(feedback.referenceTime, 4_567_386)
        XCTAssertEqual(feedback.feedbackPacketCount, 64)
        XCTAssertEqual(feedback.receiveDeltas, [8190, 8090, 208, 0, 208, 0])
        XCTAssertEqual(try TransportFeedback(body: feedback.encodedBody()), feedback)
    }

    // MARK: our encoder

    /// Hand-built in libwebrtc's chunking, across the sequence wrap, with a negative delta:
    /// ```
    /// ff fe 00 0a   base seq 65534, 10 statuses (65534, 65535, 0, ..., 7)
    /// 00 00 10 07   reference time 16 (1.024 s), fb pkt count 7
    /// d8 58         2-bit vector |1|1|01 10 00 01 01 10 00|: S L N S S L N
    ///                 (a large delta forces the 2-bit vector; closed after 7 symbols)
    /// c5 00         2-bit vector |1|1|00 01 01 00 00 00 00|: N S S — the last chunk of ≤ 7
    ///                 mixed symbols is a 2-bit vector, unused slots 0
    /// 04            +1 ms
    /// ff f8         −2 ms (large, signed)
    /// 64 ff         +25 ms, +63.75 ms (largest small delta)
    /// 01 00         +64 ms (large: 256 ticks)
    /// 01 02         +0.25 ms, +0.5 ms
    /// ```
    func testEncoderMatchesHandDissectedVectorAcrossWrap() throws {
        let expected: [UInt8] = [0xff, 0xfe, 0x00, 0x0a, 0x00, 0x00, 0x10, 0x07, 0xd8, 0x58, 0xc5, 0x00,
                                 0x04, 0xff, 0xf8, 0x64, 0xff, 0x01, 0x00, 0x01, 0x02]
        let feedback = TransportFeedback(baseSequenceNumber: 65534, referenceTime: 16, feedbackPacketCount: 7,
                                         receiveDeltas: [4, -8, nil, 100, 255, 256, nil, nil, 1, 2])
        XCTAssertEqual(try feedback.encodedBody(), expected)
        XCTAssertEqual(try TransportFeedback(body: expected), feedback)
        let results = feedback.packetResults
        XCTAssertEqual(results.map(\.sequenceNumber), [65534, 65535, 0, 1, 2, 3, 4, 5, 6, 7])
        XCTAssertEqual(results.map(\.arrivalMicros), [1_025_000, 1_023_000, nil, 1_048_000, 1_111_750, 1_175_750, nil, nil, 1_176_000, 1_176_500])
    }

    /// A long received run becomes one run-length chunk; 8191 is the 13-bit maximum, so 8200
    /// small deltas take two chunks.
    func testLongRunsSplitAtRunLengthMaximum() throws {
        let feedback = TransportFeedback(baseSequenceNumber: 1, referenceTime: 0, feedbackPacketCount: 0,
                                         receiveDeltas: Array(repeating: 3, count: 8200))
        let bytes = try feedback.encodedBody()
        XCTAssertEqual(Array(bytes[8..<12]), [0x3f, 0xff, 0x20, 0x09], "run 8191 then run 9, symbol 01")
        XCTAssertEqual(bytes.count, 8 + 4 + 8200)
        XCTAssertEqual(try TransportFeedback(body: bytes), feedback)
    }

    func testFullRTCPPacketRoundTrip() throws {
        let feedback = TransportFeedback(baseSequenceNumber: 900, referenceTime: 0xFF_FFFF, feedbackPacketCount: 255,
                                         receiveDeltas: [nil, 1, nil, -32768, 32767, 0])
        let packet = RTCPPacket.transportFeedback(try RTCPTransportFeedback(senderSSRC: 1, mediaSSRC: 2, feedback: feedback))
        let bytes = try RTCPCompound.serialize([packet])
        XCTAssertEqual(bytes.count % 4, 0)
        XCTAssertEqual(Array(bytes.prefix(2)), [0x8f, 0xcd], "V=2, FMT=15, PT=205")
        guard case .transportFeedback(let parsed)? = try RTCPCompound.parse(bytes).first else { return XCTFail() }
        XCTAssertEqual(parsed.senderSSRC, 1)
        XCTAssertEqual(parsed.mediaSSRC, 2)
        XCTAssertEqual(try parsed.decoded(), feedback)
    }

    func testRandomRoundTrips() throws {
        var rng = SplitMix64(seed: 15)
        for _ in 0..<500 {
            let feedback = TransportFeedback.random(maxCount: 300, using: &rng)
            let bytes = try feedback.encodedBody()
            XCTAssertEqual(try TransportFeedback(body: bytes), feedback)
            XCTAssertEqual(try TransportFeedback(body: bytes + [0, 0, 0]), feedback, "zero padding ignored")
        }
    }

    // MARK: bad input

    func testEveryPrefixIsTruncated() throws {
        let bodies: [[UInt8]] = [
            [0xff, 0xfe, 0x00, 0x0a, 0x00, 0x00, 0x10, 0x07, 0xd8, 0x58, 0xc5, 0x00,
             0x04, 0xff, 0xf8, 0x64, 0xff, 0x01, 0x00, 0x01, 0x02],
            body(base: 7, count: 14, [0x9F, 0x1C, 4, 8, 12, 16, 20, 24, 28, 32]),
            body(base: 100, count: 221, [0x00, 0xDD]),
        ]
        for full in bodies {
            XCTAssertNoThrow(try TransportFeedback(body: full))
            for length in 0..<full.count {
                XCTAssertThrowsError(try TransportFeedback(body: Array(full.prefix(length))), "prefix \(length)") {
                    XCTAssertEqual($0 as? TransportFeedbackError, .truncated, "prefix \(length)")
                }
            }
        }
    }

    func testEmptyAndInvalidFields() {
        XCTAssertThrowsError(try TransportFeedback(body: body(base: 1, count: 0, []))) {
            XCTAssertEqual($0 as? TransportFeedbackError, .empty)
        }
        let empty = TransportFeedback(baseSequenceNumber: 0, referenceTime: 0, feedbackPacketCount: 0, receiveDeltas: [])
        XCTAssertThrowsError(try empty.encodedBody()) { XCTAssertEqual($0 as? TransportFeedbackError, .empty) }
        let badReference = TransportFeedback(baseSequenceNumber: 0, referenceTime: 0x100_0000, feedbackPacketCount: 0, receiveDeltas: [1])
        XCTAssertThrowsError(try badReference.encodedBody()) { XCTAssertEqual($0 as? TransportFeedbackError, .invalidField) }
        XCTAssertEqual(TransportFeedbackError.truncated.code, "tcc_truncated")
    }

    func testRandomBytesNeverCrash() {
        var rng = SplitMix64(seed: 99)
        for _ in 0..<1000 {
            let bytes = (0..<Int.random(in: 0...40, using: &rng)).map { _ in UInt8.random(in: 0 ... .max, using: &rng) }
            if let feedback = try? TransportFeedback(body: bytes) {
                XCTAssertEqual(feedback.receiveDeltas.count, Int(UInt16(bytes[2]) << 8 | UInt16(bytes[3])))
            }
        }
    }
}
