/// Builds a STUN message (RFC 8489 §5, §14): header, attributes padded to 4 bytes with
/// zeros, then optional MESSAGE-INTEGRITY and FINGERPRINT in that order.
public struct STUNMessageBuilder: Sendable {
    public var type: STUNMessageType
    public var transactionID: STUNTransactionID
    private var attributeBytes: [UInt8] = []

    public init(type: STUNMessageType, transactionID: STUNTransactionID) {
        self.type = type
        self.transactionID = transactionID
    }

    /// Appends a raw attribute (value is padded to 4 bytes).
    public mutating func append(type: UInt16, value: [UInt8]) throws(STUNError) {
        guard value.count <= 0xFFFF else { throw .invalidField }
        attributeBytes += be16(type) + be16(UInt16(value.count)) + value
        attributeBytes += [UInt8](repeating: 0, count: (4 - value.count % 4) % 4)
    }

    /// USERNAME (RFC 8489 §14.3: fewer than 509 bytes).
    public mutating func appendUsername(_ username: String) throws(STUNError) {
        let utf8 = Array(username.utf8)
        guard utf8.count < 509 else { throw .invalidField }
        try append(type: STUNAttributeType.username, value: utf8)
    }

    /// XOR-MAPPED-ADDRESS (RFC 8489 §14.2).
    public mutating func appendXORMappedAddress(_ address: STUNAddress) throws(STUNError) {
        let port = be16(address.port ^ UInt16(stunMagicCookie >> 16))
        switch address {
        case .ipv4(let ip, _):
            try append(type: STUNAttributeType.xorMappedAddress, value: [0, 0x01] + port + be32(ip ^ stunMagicCookie))
        case .ipv6(let ip, _):
            guard ip.count == 16 else { throw .invalidField }
            let mask = be32(stunMagicCookie) + transactionID.bytes
            try append(type: STUNAttributeType.xorMappedAddress, value: [0, 0x02] + port + (0..<16).map { ip[$0] ^ mask[$0] })
        }
    }

    /// PRIORITY (RFC 8445 §7.1.1).
    public mutating func appendPriority(_ priority: UInt32) throws(STUNError) {
        try append(type: STUNAttributeType.priority, value: be32(priority))
    }

    /// USE-CANDIDATE (RFC 8445 §7.1.2).
    public mutating func appendUseCandidate() throws(STUNError) {
        try append(type: STUNAttributeType.useCandidate, value: [])
    }

    /// ICE-CONTROLLING (RFC 8445 §7.1.3).
    public mutating func appendICEControlling(tieBreaker: UInt64) throws(STUNError) {
        try append(type: STUNAttributeType.iceControlling, value: be64(tieBreaker))
    }

    /// ICE-CONTROLLED (RFC 8445 §7.1.3).
    public mutating func appendICEControlled(tieBreaker: UInt64) throws(STUNError) {
        try append(type: STUNAttributeType.iceControlled, value: be64(tieBreaker))
    }

    /// ERROR-CODE (RFC 8489 §14.8): code 300–699 and a reason phrase.
    public mutating func appendErrorCode(_ code: UInt16, reason: String) throws(STUNError) {
        guard (300...699).contains(code) else { throw .invalidField }
        try append(type: STUNAttributeType.errorCode, value: [0, 0, UInt8(code / 100), UInt8(code % 100)] + Array(reason.utf8))
    }

    /// Serializes, appending MESSAGE-INTEGRITY with `integrityKey` if given and then
    /// FINGERPRINT if `fingerprint` (RFC 8489 §14.5, §14.7).
    public func build(integrityKey: [UInt8]? = nil, fingerprint: Bool = false) throws(STUNError) -> [UInt8] {
        var message = be16(type.rawValue) + be16(0) + be32(stunMagicCookie) + transactionID.bytes + attributeBytes
        if let integrityKey {
            let mac = STUNMessage.integrity(of: message[...], key: integrityKey)
            message += be16(STUNAttributeType.messageIntegrity) + be16(20) + mac
        }
        if fingerprint {
            setLength(&message, message.count - 20 + 8)
            let crc = CRC32.checksum(message) ^ STUNMessage.fingerprintXOR
            message += be16(STUNAttributeType.fingerprint) + be16(4) + be32(crc)
        }
        guard message.count - 20 <= 0xFFFF else { throw .invalidField }
        setLength(&message, message.count - 20)
        return message
    }

    private func setLength(_ message: inout [UInt8], _ length: Int) {
        message[2] = UInt8(truncatingIfNeeded: length >> 8)
        message[3] = UInt8(truncatingIfNeeded: length)
    }
}

func be16(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(truncatingIfNeeded: value)] }
func be32(_ value: UInt32) -> [UInt8] { be16(UInt16(value >> 16)) + be16(UInt16(truncatingIfNeeded: value)) }
func be64(_ value: UInt64) -> [UInt8] { be32(UInt32(value >> 32)) + be32(UInt32(truncatingIfNeeded: value)) }
