import XCTest
@testable import STUN
import SplitMix

final class STUNMessageTests: XCTestCase {
    let transactionID = STUNTransactionID(high: 0x0102_0304, low: 0x0506_0708_090A_0B0C)
    let key = Array("localIcePasswordOf22+ch".utf8)

    func testMessageTypeEncoding() {
        // RFC 8489 §5 / §6: Binding request 0x0001, indication 0x0011, success 0x0101, error 0x0111.
        XCTAssertEqual(STUNMessageType.bindingRequest.rawValue, 0x0001)
        XCTAssertEqual(STUNMessageType.bindingIndication.rawValue, 0x0011)
        XCTAssertEqual(STUNMessageType.bindingSuccess.rawValue, 0x0101)
        XCTAssertEqual(STUNMessageType.bindingError.rawValue, 0x0111)
        // TURN Allocate error (method 0x003) = 0x0113, ChannelBind success (0x009) = 0x0109.
        XCTAssertEqual(STUNMessageType(method: 0x003, class: .errorResponse).rawValue, 0x0113)
        XCTAssertEqual(STUNMessageType(method: 0x009, class: .successResponse).rawValue, 0x0109)
        for raw in UInt16(0)...0x3FFF {
            XCTAssertEqual(STUNMessageType(rawValue: raw).rawValue, raw)
        }
    }

    func testICERequestRoundTrip() throws {
        var builder = STUNMessageBuilder(type: .bindingRequest, transactionID: transactionID)
        try builder.appendUsername("srvU:cliU")
        try builder.appendPriority(0x6E7F_1EFF)
        try builder.appendICEControlling(tieBreaker: 0xDEAD_BEEF_0BAD_CAFE)
        try builder.appendUseCandidate()
        let bytes = try builder.build(integrityKey: key, fingerprint: true)
        XCTAssertEqual(bytes.count % 4, 0)
        let message = try STUNMessage(parsing: bytes)
        XCTAssertEqual(message.type, .bindingRequest)
        XCTAssertEqual(message.transactionID, transactionID)
        XCTAssertEqual(message.username, "srvU:cliU")
        XCTAssertEqual(message.iceUsernameFragments?.receiver, "srvU")
        XCTAssertEqual(message.iceUsernameFragments?.sender, "cliU")
        XCTAssertEqual(message.priority, 0x6E7F_1EFF)
        XCTAssertEqual(message.iceControlling, 0xDEAD_BEEF_0BAD_CAFE)
        XCTAssertNil(message.iceControlled)
        XCTAssertTrue(message.useCandidate)
        XCTAssertNoThrow(try message.verifyMessageIntegrity(key: key))
        XCTAssertNoThrow(try message.verifyFingerprint())
    }

    func testBindingSuccessResponse() throws {
        for address: STUNAddress in [
            .ipv4(address: 0x7F00_0001, port: 49152),
            .ipv6(address: [0x20, 0x01, 0x0D, 0xB8] + [UInt8](repeating: 0, count: 11) + [1], port: 3478),
        ] {
            let bytes = try STUNResponses.bindingSuccess(transactionID: transactionID, mappedAddress: address, integrityKey: key)
            let message = try STUNMessage(parsing: bytes)
            XCTAssertEqual(message.type, .bindingSuccess)
            XCTAssertEqual(message.transactionID, transactionID)
            XCTAssertEqual(message.xorMappedAddress, address)
            XCTAssertEqual(message.attributes.map(\.type), [
                STUNAttributeType.xorMappedAddress, STUNAttributeType.messageIntegrity, STUNAttributeType.fingerprint,
            ])
            XCTAssertNoThrow(try message.verifyMessageIntegrity(key: key))
            XCTAssertNoThrow(try message.verifyFingerprint())
        }
    }

    func testErrorResponses() throws {
        for code in [STUNErrorCode.badRequest, .unauthorized, .roleConflict] {
            let integrity: [UInt8]? = code == .roleConflict ? key : nil
            let bytes = try STUNResponses.bindingError(transactionID: transactionID, code: code, integrityKey: integrity)
            let message = try STUNMessage(parsing: bytes)
            XCTAssertEqual(message.type, .bindingError)
            XCTAssertEqual(message.errorCode?.code, code.rawValue)
            XCTAssertEqual(message.errorCode?.reason, code.reason)
            XCTAssertEqual(message.hasMessageIntegrity, integrity != nil)
            if integrity != nil { XCTAssertNoThrow(try message.verifyMessageIntegrity(key: key)) }
            XCTAssertNoThrow(try message.verifyFingerprint())
        }
        var builder = STUNMessageBuilder(type: .bindingError, transactionID: transactionID)
        XCTAssertThrowsError(try builder.appendErrorCode(200, reason: "OK")) { XCTAssertEqual($0 as? STUNError, .invalidField) }
    }

    func testAttributesAfterMessageIntegrityAreIgnoredAndFingerprintMustBeLast() throws {
        var builder = STUNMessageBuilder(type: .bindingRequest, transactionID: transactionID)
        try builder.appendUsername("a:b")
        var bytes = try builder.build(integrityKey: key)
        // Append PRIORITY after MESSAGE-INTEGRITY (and fix the length): it must be ignored.
        bytes += [0x00, 0x24, 0x00, 0x04, 0x00, 0x00, 0x00, 0x01]
        bytes[3] += 8
        let message = try STUNMessage(parsing: bytes)
        XCTAssertNil(message.priority)
        XCTAssertNoThrow(try message.verifyMessageIntegrity(key: key))
        // Anything after FINGERPRINT is an error.
        var withFingerprint = try builder.build(fingerprint: true)
        withFingerprint += [0x00, 0x25, 0x00, 0x00]
        withFingerprint[3] += 4
        XCTAssertThrowsError(try STUNMessage(parsing: withFingerprint)) { XCTAssertEqual($0 as? STUNError, .fingerprintNotLast) }
    }

    func testTypedParseErrors() {
        func expect(_ bytes: [UInt8], _ error: STUNError, line: UInt = #line) {
            XCTAssertThrowsError(try STUNMessage(parsing: bytes), line: line) { XCTAssertEqual($0 as? STUNError, error, line: line) }
        }
        let header: [UInt8] = [0x00, 0x01, 0x00, 0x00, 0x21, 0x12, 0xA4, 0x42] + [UInt8](repeating: 7, count: 12)
        expect(Array(header[0..<19]), .truncated)
        var rtpLike = header; rtpLike[0] = 0x80
        expect(rtpLike, .notSTUN)
        var oddLength = header; oddLength[3] = 2
        expect(oddLength + [0, 0], .notSTUN)
        var badCookie = header; badCookie[4] = 0x22
        expect(badCookie, .badMagicCookie)
        var longer = header; longer[3] = 8
        expect(longer + [0, 0, 0, 0], .truncated)
        expect(header + [0], .notSTUN)  // trailing garbage after the announced length
        // PRIORITY with 3 bytes, XOR-MAPPED-ADDRESS with unknown family, attribute overrun.
        var priority = header; priority[3] = 8
        expect(priority + [0x00, 0x24, 0x00, 0x03, 1, 2, 3, 0], .badAttribute(type: 0x0024))
        var family = header; family[3] = 12
        expect(family + [0x00, 0x20, 0x00, 0x08, 0x00, 0x03, 0, 0, 0, 0, 0, 0], .badAttribute(type: 0x0020))
        var overrun = header; overrun[3] = 8
        expect(overrun + [0x80, 0x22, 0x00, 0x40, 1, 2, 3, 4], .badAttribute(type: 0x8022))
        XCTAssertEqual(STUNError.integrityMismatch.code, "stun_integrity_mismatch")
    }

    func testEveryPrefixAndRandomBytesGiveTypedErrors() {
        for vector in [RFC5769.request, RFC5769.ipv4Response, RFC5769.ipv6Response, RFC5769.longTermRequest] {
            for length in 0..<vector.count {
                XCTAssertThrowsError(try STUNMessage(parsing: Array(vector[0..<length])), "prefix \(length)")
            }
        }
        var rng = SplitMix64(seed: 0x57A4)
        var codes: Set<String> = []
        var parsed = 0
        for _ in 0..<20_000 {
            let attributeLength = Int.random(in: 0..<16, using: &rng) * 4
            var bytes = [0x00, 0x01, 0x00, UInt8(attributeLength), 0x21, 0x12, 0xA4, 0x42]
            bytes += (0..<(12 + attributeLength)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            // Bias attribute types towards the ones with size rules.
            if attributeLength >= 4 {
                let types: [UInt16] = [0x0006, 0x0008, 0x0009, 0x0020, 0x0024, 0x0025, 0x8028, 0x8029, 0x802A]
                let type = types[Int.random(in: 0..<types.count, using: &rng)]
                bytes[20] = UInt8(type >> 8); bytes[21] = UInt8(type & 0xFF)
                bytes[22] = 0; bytes[23] = UInt8.random(in: 0...UInt8(attributeLength - 4), using: &rng)
            }
            if Int.random(in: 0..<10, using: &rng) == 0 { bytes[Int.random(in: 0..<8, using: &rng)] ^= 0xFF }
            do {
                let message = try STUNMessage(parsing: bytes)
                _ = (message.username, message.priority, message.xorMappedAddress, message.errorCode, message.iceControlled)
                XCTAssertThrowsError(try message.verifyMessageIntegrity(key: [1]))
                parsed += 1
            } catch {
                codes.insert(error.code)
            }
        }
        XCTAssertGreaterThan(parsed, 100)
        XCTAssertTrue(codes.isSuperset(of: ["stun_truncated", "stun_bad_attribute", "stun_not_stun", "stun_bad_magic_cookie"]), "\(codes)")
    }
}
