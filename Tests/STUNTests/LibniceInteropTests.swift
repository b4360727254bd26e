import CNice
import Glibc
import XCTest
@testable import STUN

/// Cross-checks this module against libnice's STUN stack (stun/usages/ice.h), which the
/// server uses on its UDP socket: both directions of a connectivity check.
final class LibniceInteropTests: XCTestCase {
    let username = Array("srvUfrag:cliUfrag".utf8)
    let password = Array("serverIcePassword0123456789".utf8)

    /// Attributes libnice must not reject as unknown-comprehension-required; 0-terminated.
    nonisolated(unsafe) static let knownAttributes: UnsafeMutablePointer<UInt16> = {
        let list: [UInt16] = [0x0006, 0x0008, 0x0009, 0x0020, 0x0024, 0x0025, 0x8022, 0x8028, 0x8029, 0x802A, 0]
        let pointer = UnsafeMutablePointer<UInt16>.allocate(capacity: list.count)
        pointer.initialize(from: list, count: list.count)
        return pointer
    }()

    func makeAgent() -> StunAgent {
        var agent = StunAgent()
        let flags = StunAgentUsageFlags(STUN_AGENT_USAGE_SHORT_TERM_CREDENTIALS.rawValue | STUN_AGENT_USAGE_USE_FINGERPRINT.rawValue)
        stun_agent_init(&agent, Self.knownAttributes, STUN_COMPATIBILITY_RFC5389, flags)
        return agent
    }

    /// libnice builds the request (as a full ICE agent / browser would); we parse and verify
    /// it, answer with our builder, and libnice validates and processes our answer.
    func testLibniceConncheckAcceptedAndOurResponseValidatedByLibnice() throws {
        var agent = makeAgent()
        var request = StunMessage()
        var requestBuffer = [UInt8](repeating: 0, count: 1024)
        let tieBreaker: UInt64 = 0x1122_3344_5566_7788
        let requestLength = requestBuffer.withUnsafeMutableBufferPointer { buffer in
            stun_usage_ice_conncheck_create(
                &agent, &request, buffer.baseAddress, buffer.count, username, username.count, password, password.count,
                true, true, 0x6E7F_00FF, tieBreaker, nil, STUN_USAGE_ICE_COMPATIBILITY_RFC5245)
        }
        XCTAssertGreaterThan(requestLength, 20)
        let requestBytes = Array(requestBuffer[0..<requestLength])

        // Our side: parse, authenticate, read the ICE attributes.
        let parsed = try STUNMessage(parsing: requestBytes)
        XCTAssertEqual(parsed.type, .bindingRequest)
        XCTAssertEqual(parsed.username, "srvUfrag:cliUfrag")
        XCTAssertEqual(parsed.priority, 0x6E7F_00FF)
        XCTAssertEqual(parsed.iceControlling, tieBreaker)
        XCTAssertTrue(parsed.useCandidate)
        XCTAssertNoThrow(try parsed.verifyMessageIntegrity(key: password))
        XCTAssertNoThrow(try parsed.verifyFingerprint())
        XCTAssertThrowsError(try parsed.verifyMessageIntegrity(key: Array("nope".utf8)))

        // Our response, validated by the same libnice agent (it remembers the transaction
        // and the key it used).
        let mapped = STUNAddress.ipv4(address: 0xC0A8_0107, port: 50_000)  // 192.168.1.7:50000
        let response = try STUNResponses.bindingSuccess(transactionID: parsed.transactionID, mappedAddress: mapped, integrityKey: password)
        var responseMessage = StunMessage()
        let status = response.withUnsafeBufferPointer { buffer in
            stun_agent_validate(&agent, &responseMessage, buffer.baseAddress, buffer.count, nil, nil)
        }
        XCTAssertEqual(status, STUN_VALIDATION_SUCCESS)

        var address = sockaddr_storage()
        var addressLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let iceReturn = response.withUnsafeBufferPointer { _ in
            stun_usage_ice_conncheck_process(&responseMessage, &address, &addressLength, STUN_USAGE_ICE_COMPATIBILITY_RFC5245)
        }
        XCTAssertEqual(iceReturn, STUN_USAGE_ICE_RETURN_SUCCESS)
        let ipv4 = withUnsafeBytes(of: &address) { $0.load(as: sockaddr_in.self) }
        XCTAssertEqual(Int32(ipv4.sin_family), AF_INET)
        XCTAssertEqual(UInt16(bigEndian: ipv4.sin_port), 50_000)
        XCTAssertEqual(UInt32(bigEndian: ipv4.sin_addr.s_addr), 0xC0A8_0107)

        // A response with the wrong key is rejected by libnice.
        let forged = try STUNResponses.bindingSuccess(transactionID: parsed.transactionID, mappedAddress: mapped, integrityKey: Array("wrong".utf8))
        var forgedMessage = StunMessage()
        let forgedStatus = forged.withUnsafeBufferPointer { buffer in
            stun_agent_validate(&agent, &forgedMessage, buffer.baseAddress, buffer.count, nil, nil)
        }
        XCTAssertNotEqual(forgedStatus, STUN_VALIDATION_SUCCESS)
    }

    /// Password handed to libnice's validater callback through `user_data`.
    final class PasswordBox {
        let bytes: UnsafeMutableBufferPointer<UInt8>
        init(_ password: [UInt8]) {
            bytes = .allocate(capacity: password.count)
            _ = bytes.initialize(from: password)
        }
        deinit { bytes.deallocate() }
    }

    /// Our builder makes the request; libnice (as the answering agent) validates it with
    /// the short-term password and its reply passes our parser and integrity check.
    func testOurRequestValidatedByLibniceAndLibniceReplyAccepted() throws {
        var agent = makeAgent()
        let transactionID = STUNTransactionID(high: 0xA1B2_C3D4, low: 0x0102_0304_0506_0708)
        var builder = STUNMessageBuilder(type: .bindingRequest, transactionID: transactionID)
        try builder.append(type: STUNAttributeType.username, value: username)
        try builder.appendPriority(1_853_824_767)
        try builder.appendICEControlling(tieBreaker: 42)
        try builder.appendUseCandidate()
        let requestBytes = try builder.build(integrityKey: password, fingerprint: true)

        let box = PasswordBox(password)
        let validater: StunMessageIntegrityValidate = { _, _, _, _, passwordOut, passwordLength, userData in
            guard let userData, let passwordOut, let passwordLength else { return false }
            let box = Unmanaged<PasswordBox>.fromOpaque(userData).takeUnretainedValue()
            passwordOut.pointee = box.bytes.baseAddress
            passwordLength.pointee = box.bytes.count
            return true
        }
        var request = StunMessage()
        let status = withExtendedLifetime(box) {
            requestBytes.withUnsafeBufferPointer { buffer in
                stun_agent_validate(&agent, &request, buffer.baseAddress, buffer.count, validater, Unmanaged.passUnretained(box).toOpaque())
            }
        }
        XCTAssertEqual(status, STUN_VALIDATION_SUCCESS)

        // The same request signed with another key is refused by libnice.
        let forged = try builder.build(integrityKey: Array("wrong".utf8), fingerprint: true)
        var forgedMessage = StunMessage()
        let forgedStatus = withExtendedLifetime(box) {
            forged.withUnsafeBufferPointer { buffer in
                stun_agent_validate(&agent, &forgedMessage, buffer.baseAddress, buffer.count, validater, Unmanaged.passUnretained(box).toOpaque())
            }
        }
        XCTAssertEqual(forgedStatus, STUN_VALIDATION_UNAUTHORIZED)

        // libnice builds its reply to our request; we parse and authenticate it.
        var source = sockaddr_in()
        source.sin_family = sa_family_t(AF_INET)
        source.sin_port = UInt16(40_000).bigEndian
        source.sin_addr.s_addr = UInt32(0x0A00_0002).bigEndian  // 10.0.0.2
        var storage = sockaddr_storage()
        withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: source, as: sockaddr_in.self) }
        var reply = StunMessage()
        var replyBuffer = [UInt8](repeating: 0, count: 1024)
        var replyLength = replyBuffer.count
        var controlling = false  // libnice answers as the controlled side
        let iceStatus = withExtendedLifetime(box) {
            requestBytes.withUnsafeBufferPointer { _ in
                replyBuffer.withUnsafeMutableBufferPointer { out in
                    stun_usage_ice_conncheck_create_reply(
                        &agent, &request, &reply, out.baseAddress, &replyLength, &storage,
                        socklen_t(MemoryLayout<sockaddr_in>.size), &controlling, 7, STUN_USAGE_ICE_COMPATIBILITY_RFC5245)
                }
            }
        }
        XCTAssertEqual(iceStatus, STUN_USAGE_ICE_RETURN_SUCCESS)
        XCTAssertFalse(controlling, "no role conflict: we were controlling, libnice controlled")
        let replyMessage = try STUNMessage(parsing: Array(replyBuffer[0..<replyLength]))
        XCTAssertEqual(replyMessage.type, .bindingSuccess)
        XCTAssertEqual(replyMessage.transactionID, transactionID)
        XCTAssertEqual(replyMessage.xorMappedAddress, .ipv4(address: 0x0A00_0002, port: 40_000))
        XCTAssertNoThrow(try replyMessage.verifyMessageIntegrity(key: password))
        XCTAssertNoThrow(try replyMessage.verifyFingerprint())
    }
}
