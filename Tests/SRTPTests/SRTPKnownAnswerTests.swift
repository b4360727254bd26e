import XCTest
@testable import SRTP

/// Known-answer vectors from libsrtp's test/srtp_driver.c (`srtp_validate`, `srtp_validate_gcm`):
/// SSRC 0xcafebabe, sequence 0x1234, ROC 0, sixteen 0xab payload bytes.
final class SRTPKnownAnswerTests: XCTestCase {
    static let cmKey: [UInt8] = [0xe1, 0xf9, 0x7a, 0x0d, 0x3e, 0x01, 0x8b, 0xe0, 0xd6, 0x4f, 0xa3, 0x2c, 0x06, 0xde, 0x41, 0x39]
    static let cmSalt: [UInt8] = [0x0e, 0xc6, 0x75, 0xad, 0x49, 0x8a, 0xfe, 0xeb, 0xb6, 0x96, 0x0b, 0x3a, 0xab, 0xe6]
    static let rtpPlain: [UInt8] = [0x80, 0x0f, 0x12, 0x34, 0xde, 0xca, 0xfb, 0xad, 0xca, 0xfe, 0xba, 0xbe]
        + [UInt8](repeating: 0xab, count: 16)
    static let rtcpPlain: [UInt8] = [0x81, 0xc8, 0x00, 0x0b, 0xca, 0xfe, 0xba, 0xbe] + [UInt8](repeating: 0xab, count: 16)

    func testAESCMProtectRTPMatchesLibsrtpVector() throws {
        let sender = try SRTPSession(profile: .aes128CMHMACSHA180, localKey: Self.cmKey, localSalt: Self.cmSalt,
                                     remoteKey: Self.cmKey, remoteSalt: Self.cmSalt)
        var packet = Self.rtpPlain
        try sender.protectRTP(&packet)
        let expected: [UInt8] = [0x80, 0x0f, 0x12, 0x34, 0xde, 0xca, 0xfb, 0xad, 0xca, 0xfe, 0xba, 0xbe,
                                 0x4e, 0x55, 0xdc, 0x4c, 0xe7, 0x99, 0x78, 0xd8, 0x8c, 0xa4, 0xd2, 0x15, 0x94, 0x9d, 0x24, 0x02,
                                 0xb7, 0x8d, 0x6a, 0xcc, 0x99, 0xea, 0x17, 0x9b, 0x8d, 0xbb]
        XCTAssertEqual(packet, expected)

        let receiver = try SRTPSession(profile: .aes128CMHMACSHA180, localKey: Self.cmKey, localSalt: Self.cmSalt,
                                       remoteKey: Self.cmKey, remoteSalt: Self.cmSalt)
        try receiver.unprotectRTP(&packet)
        XCTAssertEqual(packet, Self.rtpPlain)
    }

    func testAESCMProtectRTCPMatchesLibsrtpVector() throws {
        let sender = try SRTPSession(profile: .aes128CMHMACSHA180, localKey: Self.cmKey, localSalt: Self.cmSalt,
                                     remoteKey: Self.cmKey, remoteSalt: Self.cmSalt)
        var packet = Self.rtcpPlain
        try sender.protectRTCP(&packet)
        let expected: [UInt8] = [0x81, 0xc8, 0x00, 0x0b, 0xca, 0xfe, 0xba, 0xbe,
                                 0x71, 0x28, 0x03, 0x5b, 0xe4, 0x87, 0xb9, 0xbd, 0xbe, 0xf8, 0x90, 0x41, 0xf9, 0x77, 0xa5, 0xa8,
                                 0x80, 0x00, 0x00, 0x01,
                                 0x99, 0x3e, 0x08, 0xcd, 0x54, 0xd6, 0xc1, 0x23, 0x07, 0x98]
        XCTAssertEqual(packet, expected)
        let receiver = try SRTPSession(profile: .aes128CMHMACSHA180, localKey: Self.cmKey, localSalt: Self.cmSalt,
                                       remoteKey: Self.cmKey, remoteSalt: Self.cmSalt)
        try receiver.unprotectRTCP(&packet)
        XCTAssertEqual(packet, Self.rtcpPlain)
    }

    func testAEADGCMProtectRTPMatchesLibsrtpVector() throws {
        let key: [UInt8] = Array(0x00...0x0f)
        let salt: [UInt8] = Array(0xa0...0xab)
        let sender = try SRTPSession(profile: .aeadAES128GCM, localKey: key, localSalt: salt, remoteKey: key, remoteSalt: salt)
        var packet = Self.rtpPlain
        try sender.protectRTP(&packet)
        let expected: [UInt8] = [0x80, 0x0f, 0x12, 0x34, 0xde, 0xca, 0xfb, 0xad, 0xca, 0xfe, 0xba, 0xbe,
                                 0xc5, 0x00, 0x2e, 0xde, 0x04, 0xcf, 0xdd, 0x2e, 0xb9, 0x11, 0x59, 0xe0,
                                 0x88, 0x0a, 0xa0, 0x6e, 0xd2, 0x97, 0x68, 0x26, 0xf7, 0x96, 0xb2, 0x01,
                                 0xdf, 0x31, 0x31, 0xa1, 0x27, 0xe8, 0xa3, 0x92]
        XCTAssertEqual(packet, expected)
        let receiver = try SRTPSession(profile: .aeadAES128GCM, localKey: key, localSalt: salt, remoteKey: key, remoteSalt: salt)
        try receiver.unprotectRTP(&packet)
        XCTAssertEqual(packet, Self.rtpPlain)
    }

    func testAEADGCMProtectRTCPMatchesLibsrtpVector() throws {
        let key: [UInt8] = Array(0x00...0x0f)
        let salt: [UInt8] = Array(0xa0...0xab)
        let sender = try SRTPSession(profile: .aeadAES128GCM, localKey: key, localSalt: salt, remoteKey: key, remoteSalt: salt)
        var packet = Self.rtcpPlain
        try sender.protectRTCP(&packet)
        let expected: [UInt8] = [0x81, 0xc8, 0x00, 0x0b, 0xca, 0xfe, 0xba, 0xbe,
                                 0xc9, 0x8b, 0x8b, 0x5d, 0xf0, 0x39, 0x2a, 0x55, 0x85, 0x2b, 0x6c, 0x21, 0xac, 0x8e, 0x70, 0x25,
                                 0xc5, 0x2c, 0x6f, 0xbe, 0xa2, 0xb3, 0xb4, 0x46, 0xea, 0x31, 0x12, 0x3b, 0xa8, 0x8c, 0xe6, 0x1e,
                                 0x80, 0x00, 0x00, 0x01]
        XCTAssertEqual(packet, expected)
        let receiver = try SRTPSession(profile: .aeadAES128GCM, localKey: key, localSalt: salt, remoteKey: key, remoteSalt: salt)
        try receiver.unprotectRTCP(&packet)
        XCTAssertEqual(packet, Self.rtcpPlain)
    }
}
