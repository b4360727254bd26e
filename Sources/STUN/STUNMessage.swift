/// A parsed STUN message (RFC 8489 §5–6, §14) with the attributes ICE-lite needs.
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |0 0|     STUN Message Type     |         Message Length        |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                         Magic Cookie                          |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                     Transaction ID (96 bits)                  |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
/// Attributes are TLVs (type 16, length 16, value padded to 4 bytes). Known attributes are
/// size-checked at parse time so accessors cannot fail. Attributes after MESSAGE-INTEGRITY
/// other than FINGERPRINT are ignored (RFC 8489 §14.5); FINGERPRINT must be last (§14.7).
/// STUN is control traffic, so the message owns a copy of its bytes.
public struct STUNMessage: Equatable, Sendable {
    /// One attribute: its type and the range of its (unpadded) value in `bytes`.
    public struct Attribute: Equatable, Sendable {
        public let type: UInt16
        public let valueRange: Range<Int>
        /// Offset of the attribute header (type field).
        public let offset: Int
    }

    /// The whole message.
    public let bytes: [UInt8]
    public let type: STUNMessageType
    public let transactionID: STUNTransactionID
    /// Attributes in wire order (those after MESSAGE-INTEGRITY dropped, except FINGERPRINT).
    public let attributes: [Attribute]

    /// Parses `bytes`, which must be exactly one STUN message (one UDP datagram).
    public init(parsing bytes: [UInt8]) throws(STUNError) {
        guard bytes.count >= 20 else { throw .truncated }
        guard bytes[0] & 0xC0 == 0 else { throw .notSTUN }
        let length = Int(bytes.be16(2))
        guard length % 4 == 0 else { throw .notSTUN }
        guard bytes.be32(4) == stunMagicCookie else { throw .badMagicCookie }
        guard 20 + length <= bytes.count else { throw .truncated }
        guard 20 + length == bytes.count else { throw .notSTUN }
        var attributes: [Attribute] = []
        var offset = 20
        var sawIntegrity = false
        var sawFingerprint = false
        while offset < bytes.count {
            guard offset + 4 <= bytes.count else { throw .truncated }
            let type = bytes.be16(offset)
            let valueLength = Int(bytes.be16(offset + 2))
            let valueStart = offset + 4
            guard valueStart + valueLength <= bytes.count else { throw .badAttribute(type: type) }
            if sawFingerprint { throw .fingerprintNotLast }
            try Self.checkSize(type: type, bytes: bytes, valueStart: valueStart, length: valueLength)
            if !sawIntegrity || type == STUNAttributeType.fingerprint {
                attributes.append(Attribute(type: type, valueRange: valueStart..<(valueStart + valueLength), offset: offset))
            }
            if type == STUNAttributeType.messageIntegrity { sawIntegrity = true }
            if type == STUNAttributeType.fingerprint { sawFingerprint = true }
            offset = valueStart + ((valueLength + 3) & ~3)
        }
        guard offset == bytes.count else { throw .truncated }
        self.bytes = bytes
        self.type = STUNMessageType(rawValue: bytes.be16(0))
        self.transactionID = STUNTransactionID(high: bytes.be32(8), low: UInt64(bytes.be32(12)) << 32 | UInt64(bytes.be32(16)))
        self.attributes = attributes
    }

    private static func checkSize(type: UInt16, bytes: [UInt8], valueStart: Int, length: Int) throws(STUNError) {
        let ok: Bool
        switch type {
        case STUNAttributeType.messageIntegrity: ok = length == 20
        case STUNAttributeType.fingerprint, STUNAttributeType.priority: ok = length == 4
        case STUNAttributeType.iceControlled, STUNAttributeType.iceControlling: ok = length == 8
        case STUNAttributeType.useCandidate: ok = length == 0
        case STUNAttributeType.errorCode:
            ok = length >= 4 && (3...6).contains(bytes[valueStart + 2] & 0x07) && bytes[valueStart + 3] < 100
        case STUNAttributeType.xorMappedAddress, STUNAttributeType.mappedAddress:
            ok = (length == 8 && bytes[valueStart + 1] == 0x01) || (length == 20 && bytes[valueStart + 1] == 0x02)
        // RFC 5389 §15.3: fewer than 513 bytes (RFC 8489 §14.3 tightened it to 509; accepting
        // the older limit costs nothing).
        case STUNAttributeType.username: ok = length < 513
        default: ok = true
        }
        guard ok else { throw .badAttribute(type: type) }
    }

    /// The first attribute of `type`.
    public func attribute(_ type: UInt16) -> Attribute? { attributes.first { $0.type == type } }

    /// Value bytes of the first attribute of `type`.
    public func value(_ type: UInt16) -> ArraySlice<UInt8>? { attribute(type).map { bytes[$0.valueRange] } }

    /// USERNAME (RFC 8489 §14.3) as UTF-8; ICE uses "remoteUfrag:localUfrag" (RFC 8445 §7.2.2).
    public var username: String? { value(STUNAttributeType.username).map { String(decoding: $0, as: UTF8.self) } }

    /// USERNAME split as ICE uses it in a connectivity check (RFC 8445 §7.2.2): the
    /// receiver's ufrag, a colon, then the sender's ufrag. Nil if absent or without a colon.
    public var iceUsernameFragments: (receiver: String, sender: String)? {
        guard let value = value(STUNAttributeType.username), let colon = value.firstIndex(of: UInt8(ascii: ":")) else {
            return nil
        }
        return (String(decoding: value[value.startIndex..<colon], as: UTF8.self),
                String(decoding: value[(colon + 1)...], as: UTF8.self))
    }

    /// PRIORITY (RFC 8445 §16.1).
    public var priority: UInt32? { value(STUNAttributeType.priority).map { $0.be32($0.startIndex) } }

    /// USE-CANDIDATE present (RFC 8445 §16.1).
    public var useCandidate: Bool { attribute(STUNAttributeType.useCandidate) != nil }

    /// ICE-CONTROLLING tie-breaker (RFC 8445 §16.1).
    public var iceControlling: UInt64? { value(STUNAttributeType.iceControlling).map { $0.be64($0.startIndex) } }

    /// ICE-CONTROLLED tie-breaker (RFC 8445 §16.1).
    public var iceControlled: UInt64? { value(STUNAttributeType.iceControlled).map { $0.be64($0.startIndex) } }

    /// ERROR-CODE (RFC 8489 §14.8): class × 100 + number, and the reason phrase.
    public var errorCode: (code: UInt16, reason: String)? {
        guard let value = value(STUNAttributeType.errorCode) else { return nil }
        let start = value.startIndex
        let code = UInt16(value[start + 2] & 0x07) * 100 + UInt16(value[start + 3])
        return (code, String(decoding: value[(start + 4)...], as: UTF8.self))
    }

    /// XOR-MAPPED-ADDRESS (RFC 8489 §14.2), un-XORed.
    public var xorMappedAddress: STUNAddress? {
        guard let value = value(STUNAttributeType.xorMappedAddress) else { return nil }
        let start = value.startIndex
        let port = value.be16(start + 2) ^ UInt16(stunMagicCookie >> 16)
        if value[start + 1] == 0x01 {
            return .ipv4(address: value.be32(start + 4) ^ stunMagicCookie, port: port)
        }
        let mask = Array(bytes[4..<20])  // magic cookie ‖ transaction ID
        return .ipv6(address: (0..<16).map { value[start + 4 + $0] ^ mask[$0] }, port: port)
    }

    /// MESSAGE-INTEGRITY present.
    public var hasMessageIntegrity: Bool { attribute(STUNAttributeType.messageIntegrity) != nil }

    /// FINGERPRINT present.
    public var hasFingerprint: Bool { attribute(STUNAttributeType.fingerprint) != nil }

    /// Checks MESSAGE-INTEGRITY (RFC 8489 §14.5): HMAC-SHA1 over the message up to the
    /// attribute, with the header length adjusted to end just after it. For ICE the key is
    /// the short-term password (RFC 8489 §9.1.1: the password itself, after OpaqueString,
    /// which for ICE ufrag/pwd characters is the identity).
    public func verifyMessageIntegrity(key: [UInt8]) throws(STUNError) {
        guard let integrity = attribute(STUNAttributeType.messageIntegrity) else {
            throw .missingAttribute(type: STUNAttributeType.messageIntegrity)
        }
        let expected = Self.integrity(of: bytes[0..<integrity.offset], key: key)
        // Constant-time compare: the HMAC is a credential check.
        var difference: UInt8 = 0
        for (a, b) in zip(expected, bytes[integrity.valueRange]) { difference |= a ^ b }
        guard difference == 0 else { throw .integrityMismatch }
    }

    /// Checks FINGERPRINT (RFC 8489 §14.7).
    public func verifyFingerprint() throws(STUNError) {
        guard let fingerprint = attribute(STUNAttributeType.fingerprint) else {
            throw .missingAttribute(type: STUNAttributeType.fingerprint)
        }
        let expected = CRC32.checksum(bytes[0..<fingerprint.offset]) ^ STUNMessage.fingerprintXOR
        guard bytes.be32(fingerprint.valueRange.lowerBound) == expected else { throw .fingerprintMismatch }
    }

    /// RFC 8489 §14.7: CRC-32 XOR 0x5354554e ("STUN").
    public static let fingerprintXOR: UInt32 = 0x5354_554E

    /// HMAC over `prefix` (header + attributes before MESSAGE-INTEGRITY) with the length
    /// field set as if MESSAGE-INTEGRITY (24 bytes) ended the message.
    static func integrity(of prefix: ArraySlice<UInt8>, key: [UInt8]) -> [UInt8] {
        var adjusted = Array(prefix)
        let length = UInt16(adjusted.count - 20 + 24)
        adjusted[2] = UInt8(length >> 8)
        adjusted[3] = UInt8(truncatingIfNeeded: length)
        return HMACSHA1.authenticate(key: key, message: adjusted)
    }
}

extension Collection where Element == UInt8, Index == Int {
    func be16(_ offset: Int) -> UInt16 { UInt16(self[offset]) << 8 | UInt16(self[offset + 1]) }
    func be32(_ offset: Int) -> UInt32 { UInt32(be16(offset)) << 16 | UInt32(be16(offset + 2)) }
    func be64(_ offset: Int) -> UInt64 { UInt64(be32(offset)) << 32 | UInt64(be32(offset + 4)) }
}
