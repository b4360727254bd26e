import XCTest
@testable import SRTP

/// Whole-packet vectors for video-sized packets (many AES blocks) and a rolled-over ROC, next to
/// libsrtp's short upstream vectors in `SRTPKnownAnswerTests`.
///
/// The expected bytes come from an independent SRTP implementation written from the RFCs (Python
/// `cryptography`: RFC 3711 §4.1.1/§4.2/§4.3 for AES-CM + HMAC-SHA1-80 and RFC 7714 §8-9 for
/// AES-128-GCM, with libsrtp2's zero-padding of the 96-bit GCM master salt for the AES-CM KDF);
/// that reference reproduces all four of libsrtp's upstream vectors byte for byte, and aiortc's
/// libsrtp binding (pylibsrtp 1.0.0, its own libsrtp + OpenSSL build) produced the same four long
/// packets (checked by hand, 2026-11-29). The first
/// ciphertext block and the last 32 bytes (end of ciphertext plus tag, or index and tag for SRTCP)
/// are compared: the tag covers the whole packet.
final class SRTPLongPacketVectorTests: XCTestCase {
    static let gcmKey: [UInt8] = Array(0x00...0x0f)
    static let gcmSalt: [UInt8] = Array(0xa0...0xab)
    typealias Vector = (first16: String, last32: String)

    static func session(_ profile: SRTPProfile) throws -> SRTPSession {
        let (key, salt) = profile == .aeadAES128GCM
            ? (gcmKey, gcmSalt) : (SRTPKnownAnswerTests.cmKey, SRTPKnownAnswerTests.cmSalt)
        return try SRTPSession(profile: profile, localKey: key, localSalt: salt, remoteKey: key, remoteSalt: salt)
    }

    /// RTP: V=2, PT 111, sequence 0x1234, timestamp 0x1000, SSRC 0xcafebabe, 1188 bytes `i * 7`.
    static let rtp: [UInt8] = [0x80, 0x6f, 0x12, 0x34, 0x00, 0x00, 0x10, 0x00, 0xca, 0xfe, 0xba, 0xbe]
        + (0..<1188).map { UInt8(truncatingIfNeeded: $0 &* 7) }
    /// RTCP: an RR header (length 251 words) from SSRC 0xcafebabe and 1000 bytes `i * 13`.
    static let rtcp: [UInt8] = [0x81, 0xc9, 0x00, 0xfb, 0xca, 0xfe, 0xba, 0xbe]
        + (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 13) }

    static let rtpVectors: [SRTPProfile: Vector] = [
        .aes128CMHMACSHA180: ("e5f979f25011f9421f303ff36b6dedc0",
                              "331d8a295a65b44f5a6ea45fb25122b63985db4eaeeacd48f976b6fa03a76ba3"),
        .aeadAES128GCM: ("6eac8b60b3475cb42a85b40677fa69ac",
                         "70d1b68fabc1abc73c46e8f29d1c89661797aa9793a857dcb9a40e655771875a"),
    ]
    /// First SRTCP packet of a session: libsrtp2 starts the SRTCP index at 1 (E||index 80000001).
    static let rtcpVectors: [SRTPProfile: Vector] = [
        .aes128CMHMACSHA180: ("da8eb2d77b6d5c4d7d26b965ce75b8c0",
                              "9a25a085684b2ed4bdbfc636c1c78e809f3d800000014b724ac041bb6275d7d2"),
        .aeadAES128GCM: ("622d3ad16fd3cfa546f545059b8c6d4d",
                         "d0133835a21416dd763aa72574f2cb6a7b726034f95eb7a108ca148780000001"),
    ]

    func testRTP1200BytesMatchesReference() throws {
        for profile in SRTPProfile.allCases {
            let vector = try XCTUnwrap(Self.rtpVectors[profile])
            var packet = Self.rtp
            try Self.session(profile).protectRTP(&packet)
            XCTAssertEqual(packet.count, Self.rtp.count + profile.rtpOverhead)
            XCTAssertEqual(Array(packet[0..<12]), Array(Self.rtp[0..<12]), "header is not encrypted")
            XCTAssertEqual(Array(packet[12..<28]), SRTPCryptoTypeTests.hex(vector.first16), "\(profile)")
            XCTAssertEqual(Array(packet.suffix(32)), SRTPCryptoTypeTests.hex(vector.last32), "\(profile)")
            try Self.session(profile).unprotectRTP(&packet)
            XCTAssertEqual(packet, Self.rtp)
        }
    }

    func testRTCP1000BytesMatchesReference() throws {
        for profile in SRTPProfile.allCases {
            let vector = try XCTUnwrap(Self.rtcpVectors[profile])
            var packet = Self.rtcp
            try Self.session(profile).protectRTCP(&packet)
            XCTAssertEqual(packet.count, Self.rtcp.count + profile.rtcpOverhead)
            XCTAssertEqual(Array(packet[8..<24]), SRTPCryptoTypeTests.hex(vector.first16), "\(profile)")
            XCTAssertEqual(Array(packet.suffix(32)), SRTPCryptoTypeTests.hex(vector.last32), "\(profile)")
            try Self.session(profile).unprotectRTCP(&packet)
            XCTAssertEqual(packet, Self.rtcp)
        }
    }

    /// After sequence 0xffff the sender's ROC is 1 (RFC 3711 §3.3.1): it enters the HMAC input
    /// (AES-CM, RFC 3711 §4.2) or the IV (GCM, RFC 7714 §8.1). Sequence 1, 100 bytes `i * 5`.
    func testRolloverCounterEntersAuthenticationAndIV() throws {
        let expected: [SRTPProfile: String] = [
            .aes128CMHMACSHA180: "553ec18c536e0869fe6f49613d466c992e47774b03e21478f1e0",
            .aeadAES128GCM: "ac0fcae2da1cf1355234d7378cfe3a7aabfce2b45695874c2bced46d2704ef57",
        ]
        for profile in SRTPProfile.allCases {
            let sender = try Self.session(profile), receiver = try Self.session(profile)
            var last = [0x80, 0x6f, 0xff, 0xff, 0x00, 0x00, 0x1f, 0x00, 0xca, 0xfe, 0xba, 0xbe] + [UInt8](repeating: 1, count: 20)
            try sender.protectRTP(&last)
            try receiver.unprotectRTP(&last)
            let plain: [UInt8] = [0x80, 0x6f, 0x00, 0x01, 0x00, 0x00, 0x20, 0x00, 0xca, 0xfe, 0xba, 0xbe]
                + (0..<100).map { UInt8(truncatingIfNeeded: $0 &* 5) }
            var packet = plain
            try sender.protectRTP(&packet)
            let tail = SRTPCryptoTypeTests.hex(try XCTUnwrap(expected[profile]))
            XCTAssertEqual(Array(packet.suffix(tail.count)), tail, "\(profile)")
            try receiver.unprotectRTP(&packet)
            XCTAssertEqual(packet, plain)
        }
    }
}
