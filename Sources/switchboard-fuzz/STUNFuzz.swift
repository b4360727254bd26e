import ICE
import STUN

/// STUN (RFC 8489) through the STUN module's parser and the ICE-lite agent's libnice-backed
/// request handling (Sources/ICE), with a session registered for the RFC 5769 §2.1
/// credentials so seeds from that vector reach the authenticated paths.
/// Invariants: attribute ranges lie inside the message and every accessor is total; a
/// parsed message re-signed with the builder (MESSAGE-INTEGRITY + FINGERPRINT) parses to
/// the same attributes and verifies; every reply the agent sends parses, echoes the
/// request's transaction ID, is a Binding response, and verifies its FINGERPRINT and (for
/// a success) its MESSAGE-INTEGRITY with the session password.
enum STUNFuzz {
    /// RFC 5769 §2.1: USERNAME "evtj:h6vY", password "VOkJxbRl1RmTxUk/WvJxBt".
    static let localUfrag = "evtj", remoteUfrag = "h6vY", password = "VOkJxbRl1RmTxUk/WvJxBt"
    /// 192.0.2.1:3478 (RFC 5737 documentation address).
    static let source = SocketAddress(ipv4: 0xC000_0201, port: 3478)

    static func run(_ bytes: [UInt8]) throws(FuzzFailure) {
        var resigned: [UInt8]?
        if let message = try? STUNMessage(parsing: bytes) {
            FuzzCounters.hit("stun.parsed")
            try checkParsed(message)
            resigned = try resign(message)
        }
        let agent = ICELiteAgent()
        do { _ = try agent.register(localUfrag: localUfrag, localPassword: password, remoteUfrag: remoteUfrag, now: 0) } catch {
            throw .invariant("registering the RFC 5769 credentials failed: \(error)")
        }
        try checkAgent(agent, bytes, now: 1_000)
        if let resigned { try checkAgent(agent, resigned, now: 2_000) }
    }

    private static func checkParsed(_ message: STUNMessage) throws(FuzzFailure) {
        for attribute in message.attributes {
            try expect(attribute.offset >= 20 && attribute.valueRange.lowerBound == attribute.offset + 4
                       && attribute.valueRange.upperBound <= message.bytes.count, "attribute \(attribute.type) out of the message")
        }
        _ = (message.username, message.iceUsernameFragments, message.priority, message.useCandidate, message.iceControlling,
             message.iceControlled, message.errorCode, message.xorMappedAddress, message.hasMessageIntegrity, message.hasFingerprint)
        _ = try? message.verifyMessageIntegrity(key: Array(password.utf8))
        _ = try? message.verifyFingerprint()
    }

    /// Rebuilds the attributes before MESSAGE-INTEGRITY and signs them; nil if too long to sign.
    private static func resign(_ message: STUNMessage) throws(FuzzFailure) -> [UInt8]? {
        var builder = STUNMessageBuilder(type: message.type, transactionID: message.transactionID)
        let kept = message.attributes.filter { $0.type != STUNAttributeType.messageIntegrity && $0.type != STUNAttributeType.fingerprint }
        var body = kept
        if let integrity = message.attribute(STUNAttributeType.messageIntegrity) {
            body = kept.filter { $0.offset < integrity.offset }
        }
        for attribute in body {
            do { try builder.append(type: attribute.type, value: Array(message.bytes[attribute.valueRange])) } catch {
                throw .invariant("builder refused a parsed attribute: \(error)")
            }
        }
        guard let signed = try? builder.build(integrityKey: Array(password.utf8), fingerprint: true) else { return nil }
        let parsed: STUNMessage
        do { parsed = try STUNMessage(parsing: signed) } catch { throw .invariant("re-signed message does not parse: \(error)") }
        do {
            try parsed.verifyMessageIntegrity(key: Array(password.utf8))
            try parsed.verifyFingerprint()
        } catch { throw .invariant("re-signed message does not verify: \(error)") }
        let values = { (m: STUNMessage, list: [STUNMessage.Attribute]) in list.map { [UInt8]($0.type.bigEndianBytes) + m.bytes[$0.valueRange] } }
        let reparsedBody = parsed.attributes.filter { $0.type != STUNAttributeType.messageIntegrity && $0.type != STUNAttributeType.fingerprint }
        try expect(values(parsed, reparsedBody) == values(message, body), "re-signed message has different attributes")
        try expect(parsed.type == message.type && parsed.transactionID == message.transactionID, "re-signed header differs")
        return signed
    }

    private static func checkAgent(_ agent: ICELiteAgent, _ bytes: [UInt8], now: Int64) throws(FuzzFailure) {
        let action = agent.handleSTUN(bytes, from: source, now: now)
        guard let response = action.response else { return }
        try expect(action.responseAddress == source, "reply addressed elsewhere")
        if bytes.be32(4) != stunMagicCookie {
            // Finding (docs/threat-model.md, Fuzzing): libnice answers an RFC 3489 request
            // (no magic cookie) in RFC 3489 form; it must at least echo the 128-bit ID.
            try expect(response.count >= 20 && Array(response[4..<20]) == Array(bytes[4..<20]), "RFC 3489 reply does not echo the request ID")
            return
        }
        let reply: STUNMessage
        do { reply = try STUNMessage(parsing: response) } catch { throw .invariant("agent reply does not parse: \(error)") }
        let request = STUNTransactionID(high: bytes.be32(8), low: UInt64(bytes.be32(12)) << 32 | UInt64(bytes.be32(16)))
        try expect(reply.transactionID == request, "reply transaction ID differs from the request's")
        try expect(reply.type == .bindingSuccess || reply.type == .bindingError, "reply type \(reply.type.rawValue) is not a Binding response")
        if reply.hasFingerprint {
            do { try reply.verifyFingerprint() } catch { throw .invariant("reply FINGERPRINT does not verify") }
        }
        FuzzCounters.hit(reply.type == .bindingSuccess ? "stun.success-reply" : "stun.error-reply")
        if reply.type == .bindingSuccess {
            do { try reply.verifyMessageIntegrity(key: Array(password.utf8)) } catch {
                throw .invariant("success reply MESSAGE-INTEGRITY does not verify: \(error)")
            }
            try expect(reply.xorMappedAddress == .ipv4(address: 0xC000_0201, port: 3478), "success reply maps a different address")
        }
    }
}

extension UInt16 {
    var bigEndianBytes: [UInt8] { [UInt8(self >> 8), UInt8(truncatingIfNeeded: self)] }
}

extension Array where Element == UInt8 {
    func be32(_ offset: Int) -> UInt32 {
        UInt32(self[offset]) << 24 | UInt32(self[offset + 1]) << 16 | UInt32(self[offset + 2]) << 8 | UInt32(self[offset + 3])
    }
}
