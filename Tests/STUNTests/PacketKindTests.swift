import XCTest
@testable import STUN

final class PacketKindTests: XCTestCase {
    /// RFC 7983 §7 ranges, checked at every first-byte value.
    func testFirstByteRanges() {
        for byte in 0...255 {
            let expected: PacketKind = switch byte {
            case 0...3: .stun
            case 20...63: .dtls
            case 128...191: .rtpOrRTCP
            default: .unknown
            }
            XCTAssertEqual(PacketKind.classify(firstByte: UInt8(byte)), expected, "\(byte)")
        }
    }

    /// RFC 5761 §4: second byte 192–223 is RTCP (SR 200, RR 201, PSFB 206); RTP PT 111 with
    /// or without marker is RTP.
    func testRTPVersusRTCP() {
        XCTAssertEqual(PacketKind.classify([0x80, 0x6F, 0, 0]), .rtp)
        XCTAssertEqual(PacketKind.classify([0x90, 0xEF, 0, 0]), .rtp)  // marker + PT 111 = 239
        XCTAssertEqual(PacketKind.classify([0x81, 0xC8, 0, 6]), .rtcp)
        XCTAssertEqual(PacketKind.classify([0x81, 0xC9, 0, 1]), .rtcp)
        XCTAssertEqual(PacketKind.classify([0x8F, 0xCE, 0, 5]), .rtcp)
        XCTAssertEqual(PacketKind.classify([0x80, 0xC0]), .rtcp)  // 192
        XCTAssertEqual(PacketKind.classify([0x80, 0xDF]), .rtcp)  // 223
        XCTAssertEqual(PacketKind.classify([0x80, 0xE0]), .rtp)   // 224
        XCTAssertEqual(PacketKind.classify([0x80]), .unknown)
        XCTAssertEqual(PacketKind.classify([UInt8]()), .unknown)
        XCTAssertEqual(PacketKind.classify(RFC5769.request), .stun)
        XCTAssertEqual(PacketKind.classify([0x16, 0xFE, 0xFD]), .dtls)  // DTLS 1.2 handshake
    }
}
