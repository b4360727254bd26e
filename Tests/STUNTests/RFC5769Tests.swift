import XCTest
@testable import STUN

/// RFC 5769 test vectors, bytes transcribed from the RFC (each vector's own FINGERPRINT
/// proves the transcription).
enum RFC5769 {
    /// §2.1 password for the short-term vectors.
    static let password = Array("VOkJxbRl1RmTxUk/WvJxBt".utf8)

    /// §2.1 Sample Request.
    static let request: [UInt8] = [
        0x00, 0x01, 0x00, 0x58, //    Request type and message length
        0x21, 0x12, 0xA4, 0x42, //    Magic cookie
        0xB7, 0xE7, 0xA7, 0x01, // }
        0xBC, 0x34, 0xD6, 0x86, // }  Transaction ID
        0xFA, 0x87, 0xDF, 0xAE, // }
        0x80, 0x22, 0x00, 0x10, //    SOFTWARE attribute header
        0x53, 0x54, 0x55, 0x4E, // }
        0x20, 0x74, 0x65, 0x73, // }  User-agent...
        0x74, 0x20, 0x63, 0x6C, // }  ...name
        0x69, 0x65, 0x6E, 0x74, // }
        0x00, 0x24, 0x00, 0x04, //    PRIORITY attribute header
        0x6E, 0x00, 0x01, 0xFF, //    ICE priority value
        0x80, 0x29, 0x00, 0x08, //    ICE-CONTROLLED attribute header
        0x93, 0x2F, 0xF9, 0xB1, // }  Pseudo-random tie breaker...
        0x51, 0x26, 0x3B, 0x36, // }   ...for ICE control
        0x00, 0x06, 0x00, 0x09, //    USERNAME attribute header
        0x65, 0x76, 0x74, 0x6A, // }
        0x3A, 0x68, 0x36, 0x76, // }  Username (9 bytes) and padding (3 bytes)
        0x59, 0x20, 0x20, 0x20, // }
        0x00, 0x08, 0x00, 0x14, //    MESSAGE-INTEGRITY attribute header
        0x9A, 0xEA, 0xA7, 0x0C, // }
        0xBF, 0xD8, 0xCB, 0x56, // }
        0x78, 0x1E, 0xF2, 0xB5, // }  HMAC-SHA1 fingerprint
        0xB2, 0xD3, 0xF2, 0x49, // }
        0xC1, 0xB5, 0x71, 0xA2, // }
        0x80, 0x28, 0x00, 0x04, //    FINGERPRINT attribute header
        0xE5, 0x7A, 0x3B, 0xCF, //    CRC32 fingerprint
    ]

    /// §2.2 Sample IPv4 Response.
    static let ipv4Response: [UInt8] = [
        0x01, 0x01, 0x00, 0x3C, //    Response type and message length
        0x21, 0x12, 0xA4, 0x42, //    Magic cookie
        0xB7, 0xE7, 0xA7, 0x01, // }
        0xBC, 0x34, 0xD6, 0x86, // }  Transaction ID
        0xFA, 0x87, 0xDF, 0xAE, // }
        0x80, 0x22, 0x00, 0x0B, //    SOFTWARE attribute header
        0x74, 0x65, 0x73, 0x74, // }
        0x20, 0x76, 0x65, 0x63, // }  UTF-8 server name
        0x74, 0x6F, 0x72, 0x20, // }
        0x00, 0x20, 0x00, 0x08, //    XOR-MAPPED-ADDRESS attribute header
        0x00, 0x01, 0xA1, 0x47, //    Address family (IPv4) and xor'd mapped port number
        0xE1, 0x12, 0xA6, 0x43, //    Xor'd mapped IPv4 address
        0x00, 0x08, 0x00, 0x14, //    MESSAGE-INTEGRITY attribute header
        0x2B, 0x91, 0xF5, 0x99, // }
        0xFD, 0x9E, 0x90, 0xC3, // }
        0x8C, 0x74, 0x89, 0xF9, // }  HMAC-SHA1 fingerprint
        0x2A, 0xF9, 0xBA, 0x53, // }
        0xF0, 0x6B, 0xE7, 0xD7, // }
        0x80, 0x28, 0x00, 0x04, //    FINGERPRINT attribute header
        0xC0, 0x7D, 0x4C, 0x96, //    CRC32 fingerprint
    ]

    /// §2.3 Sample IPv6 Response.
    static let ipv6Response: [UInt8] = [
        0x01, 0x01, 0x00, 0x48, //    Response type and message length
        0x21, 0x12, 0xA4, 0x42, //    Magic cookie
        0xB7, 0xE7, 0xA7, 0x01, // }
        0xBC, 0x34, 0xD6, 0x86, // }  Transaction ID (12 bytes)
        0xFA, 0x87, 0xDF, 0xAE, // }
        0x80, 0x22, 0x00, 0x0B, //    SOFTWARE attribute header
        0x74, 0x65, 0x73, 0x74, // }
        0x20, 0x76, 0x65, 0x63, // }  UTF-8 server name
        0x74, 0x6F, 0x72, 0x20, // }
        0x00, 0x20, 0x00, 0x14, //    XOR-MAPPED-ADDRESS attribute header
        0x00, 0x02, 0xA1, 0x47, //    Address family (IPv6) and xor'd mapped port number
        0x01, 0x13, 0xA9, 0xFA, // }
        0xA5, 0xD3, 0xF1, 0x79, // }  Xor'd mapped IPv6 address
        0xBC, 0x25, 0xF4, 0xB5, // }
        0xBE, 0xD2, 0xB9, 0xD9, // }
        0x00, 0x08, 0x00, 0x14, //    MESSAGE-INTEGRITY attribute header
        0xA3, 0x82, 0x95, 0x4E, // }
        0x4B, 0xE6, 0x7B, 0xF1, // }
        0x17, 0x84, 0xC9, 0x7C, // }  HMAC-SHA1 fingerprint
        0x82, 0x92, 0xC2, 0x75, // }
        0xBF, 0xE3, 0xED, 0x41, // }
        0x80, 0x28, 0x00, 0x04, //    FINGERPRINT attribute header
        0xC8, 0xFB, 0x0B, 0x4C, //    CRC32 fingerprint
    ]

    /// §2.4 Sample Request with Long-Term Authentication.
    static let longTermRequest: [UInt8] = [
        0x00, 0x01, 0x00, 0x60, //    Request type and message length
        0x21, 0x12, 0xA4, 0x42, //    Magic cookie
        0x78, 0xAD, 0x34, 0x33, // }
        0xC6, 0xAD, 0x72, 0xC0, // }  Transaction ID
        0x29, 0xDA, 0x41, 0x2E, // }
        0x00, 0x06, 0x00, 0x12, //    USERNAME attribute header
        0xE3, 0x83, 0x9E, 0xE3, // }
        0x83, 0x88, 0xE3, 0x83, // }
        0xAA, 0xE3, 0x83, 0x83, // }  Username value (18 bytes) and padding (2 bytes)
        0xE3, 0x82, 0xAF, 0xE3, // }
        0x82, 0xB9, 0x00, 0x00, // }
        0x00, 0x15, 0x00, 0x1C, //    NONCE attribute header
        0x66, 0x2F, 0x2F, 0x34, // }
        0x39, 0x39, 0x6B, 0x39, // }
        0x35, 0x34, 0x64, 0x36, // }
        0x4F, 0x4C, 0x33, 0x34, // }  Nonce value
        0x6F, 0x4C, 0x39, 0x46, // }
        0x53, 0x54, 0x76, 0x79, // }
        0x36, 0x34, 0x73, 0x41, // }
        0x00, 0x14, 0x00, 0x0B, //    REALM attribute header
        0x65, 0x78, 0x61, 0x6D, // }
        0x70, 0x6C, 0x65, 0x2E, // }  Realm value (11 bytes) and padding (1 byte)
        0x6F, 0x72, 0x67, 0x00, // }
        0x00, 0x08, 0x00, 0x14, //    MESSAGE-INTEGRITY attribute header
        0xF6, 0x70, 0x24, 0x65, // }
        0x6D, 0xD6, 0x4A, 0x3E, // }
        0x02, 0xB8, 0xE0, 0x71, // }  HMAC-SHA1 fingerprint
        0x2E, 0x85, 0xC9, 0xA2, // }
        0x8C, 0xA8, 0x96, 0x66, // }
    ]

    /// §2.4 long-term key MD5("マトリックス:example.org:TheMatrIX") (password after
    /// SASLprep), computed with coreutils `md5sum`; this module has no MD5 because ICE
    /// only uses short-term credentials.
    static let longTermKey: [UInt8] = [
        0xE8, 0xCA, 0x7A, 0xD5, 0x9D, 0x5E, 0xB0, 0x51, 0x8E, 0x31, 0x29, 0x11, 0xD2, 0xDA, 0xB2, 0xA9,
    ]
}

final class RFC5769Tests: XCTestCase {
    func testRFC5769Section2_1SampleRequest() throws {
        let message = try STUNMessage(parsing: RFC5769.request)
        XCTAssertEqual(message.type, .bindingRequest)
        XCTAssertEqual(message.transactionID.bytes, [0xB7, 0xE7, 0xA7, 0x01, 0xBC, 0x34, 0xD6, 0x86, 0xFA, 0x87, 0xDF, 0xAE])
        XCTAssertEqual(message.username, "evtj:h6vY")
        XCTAssertEqual(message.iceUsernameFragments?.receiver, "evtj")
        XCTAssertEqual(message.iceUsernameFragments?.sender, "h6vY")
        XCTAssertEqual(message.value(STUNAttributeType.software).map(Array.init), Array("STUN test client".utf8))
        XCTAssertEqual(message.priority, 0x6E00_01FF)
        XCTAssertEqual(message.iceControlled, 0x932F_F9B1_5126_3B36)
        XCTAssertNil(message.iceControlling)
        XCTAssertFalse(message.useCandidate)
        XCTAssertNoThrow(try message.verifyMessageIntegrity(key: RFC5769.password))
        XCTAssertNoThrow(try message.verifyFingerprint())
        XCTAssertThrowsError(try message.verifyMessageIntegrity(key: Array("wrong".utf8))) {
            XCTAssertEqual($0 as? STUNError, .integrityMismatch)
        }
    }

    func testRFC5769Section2_1TamperedRequestFailsIntegrityAndFingerprint() throws {
        var tampered = RFC5769.request
        tampered[30] ^= 0x01  // one bit inside SOFTWARE
        let message = try STUNMessage(parsing: tampered)
        XCTAssertThrowsError(try message.verifyMessageIntegrity(key: RFC5769.password)) {
            XCTAssertEqual($0 as? STUNError, .integrityMismatch)
        }
        XCTAssertThrowsError(try message.verifyFingerprint()) { XCTAssertEqual($0 as? STUNError, .fingerprintMismatch) }
    }

    func testRFC5769Section2_2SampleIPv4Response() throws {
        let message = try STUNMessage(parsing: RFC5769.ipv4Response)
        XCTAssertEqual(message.type, .bindingSuccess)
        XCTAssertEqual(message.xorMappedAddress, .ipv4(address: 0xC000_0201, port: 32853))  // 192.0.2.1:32853
        XCTAssertEqual(message.value(STUNAttributeType.software).map(Array.init), Array("test vector".utf8))
        XCTAssertNoThrow(try message.verifyMessageIntegrity(key: RFC5769.password))
        XCTAssertNoThrow(try message.verifyFingerprint())
    }

    func testRFC5769Section2_3SampleIPv6Response() throws {
        let message = try STUNMessage(parsing: RFC5769.ipv6Response)
        XCTAssertEqual(message.type, .bindingSuccess)
        // 2001:db8:1234:5678:11:2233:4455:6677 port 32853
        XCTAssertEqual(message.xorMappedAddress, .ipv6(
            address: [0x20, 0x01, 0x0D, 0xB8, 0x12, 0x34, 0x56, 0x78, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77],
            port: 32853))
        XCTAssertNoThrow(try message.verifyMessageIntegrity(key: RFC5769.password))
        XCTAssertNoThrow(try message.verifyFingerprint())
    }

    func testRFC5769Section2_4LongTermAuthenticationRequest() throws {
        let message = try STUNMessage(parsing: RFC5769.longTermRequest)
        XCTAssertEqual(message.type, .bindingRequest)
        XCTAssertEqual(message.username, "マトリックス")
        XCTAssertEqual(message.value(STUNAttributeType.nonce).map(Array.init), Array("f//499k954d6OL34oL9FSTvy64sA".utf8))
        XCTAssertEqual(message.value(STUNAttributeType.realm).map(Array.init), Array("example.org".utf8))
        XCTAssertFalse(message.hasFingerprint)
        XCTAssertThrowsError(try message.verifyFingerprint()) {
            XCTAssertEqual($0 as? STUNError, .missingAttribute(type: STUNAttributeType.fingerprint))
        }
        XCTAssertNoThrow(try message.verifyMessageIntegrity(key: RFC5769.longTermKey))
    }

    func testBuilderReproducesRFC5769Section2_2ExceptForPaddingBytes() throws {
        // The RFC pads SOFTWARE with a space (0x20), our builder with zero (padding content is
        // ignored by receivers, RFC 8489 §14), so MAC and CRC differ; every other byte matches.
        var builder = STUNMessageBuilder(
            type: .bindingSuccess,
            transactionID: try XCTUnwrap(STUNTransactionID(bytes: [0xB7, 0xE7, 0xA7, 0x01, 0xBC, 0x34, 0xD6, 0x86, 0xFA, 0x87, 0xDF, 0xAE])))
        try builder.append(type: STUNAttributeType.software, value: Array("test vector".utf8))
        try builder.appendXORMappedAddress(.ipv4(address: 0xC000_0201, port: 32853))
        let bytes = try builder.build(integrityKey: RFC5769.password, fingerprint: true)
        XCTAssertEqual(bytes.count, RFC5769.ipv4Response.count)
        // Header and XOR-MAPPED-ADDRESS are identical to the RFC; SOFTWARE differs only in its pad byte.
        XCTAssertEqual(Array(bytes[0..<35]), Array(RFC5769.ipv4Response[0..<35]))
        XCTAssertEqual(bytes[35], 0x00)
        XCTAssertEqual(Array(bytes[36..<48]), Array(RFC5769.ipv4Response[36..<48]))
        let parsed = try STUNMessage(parsing: bytes)
        XCTAssertNoThrow(try parsed.verifyMessageIntegrity(key: RFC5769.password))
        XCTAssertNoThrow(try parsed.verifyFingerprint())
    }
}
