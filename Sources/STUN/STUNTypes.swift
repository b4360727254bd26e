/// RFC 8489 §5 magic cookie.
public let stunMagicCookie: UInt32 = 0x2112_A442

/// STUN message class (RFC 8489 §5, C1/C0 bits).
public enum STUNClass: UInt8, Sendable {
    case request = 0b00
    case indication = 0b01
    case successResponse = 0b10
    case errorResponse = 0b11
}

/// Message type: 12-bit method plus class, interleaved on the wire as
/// `M11..M7 C1 M6..M4 C0 M3..M0` (RFC 8489 §5).
public struct STUNMessageType: Equatable, Hashable, Sendable {
    /// Binding (RFC 8489 §18.2).
    public static let bindingMethod: UInt16 = 0x001
    public static let bindingRequest = STUNMessageType(method: bindingMethod, class: .request)
    public static let bindingSuccess = STUNMessageType(method: bindingMethod, class: .successResponse)
    public static let bindingError = STUNMessageType(method: bindingMethod, class: .errorResponse)
    public static let bindingIndication = STUNMessageType(method: bindingMethod, class: .indication)

    public var method: UInt16
    public var `class`: STUNClass

    public init(method: UInt16, class messageClass: STUNClass) {
        self.method = method & 0xFFF
        self.class = messageClass
    }

    /// Decodes the 14-bit wire value.
    public init(rawValue: UInt16) {
        let method = (rawValue & 0x000F) | (rawValue & 0x00E0) >> 1 | (rawValue & 0x3E00) >> 2
        let classBits = UInt8((rawValue & 0x0010) >> 4 | (rawValue & 0x0100) >> 7)
        self.init(method: method, class: STUNClass(rawValue: classBits) ?? .request)
    }

    /// The 14-bit wire value.
    public var rawValue: UInt16 {
        let c = UInt16(self.class.rawValue)
        return (method & 0x000F) | (method & 0x0070) << 1 | (method & 0x0F80) << 2
            | (c & 0b01) << 4 | (c & 0b10) << 7
    }
}

/// 96-bit transaction ID (RFC 8489 §5).
public struct STUNTransactionID: Equatable, Hashable, Sendable {
    public let high: UInt32
    public let low: UInt64

    public init(high: UInt32, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// From exactly 12 bytes; nil otherwise.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 12 else { return nil }
        var high: UInt32 = 0
        var low: UInt64 = 0
        for byte in bytes[0..<4] { high = high << 8 | UInt32(byte) }
        for byte in bytes[4..<12] { low = low << 8 | UInt64(byte) }
        self.init(high: high, low: low)
    }

    /// The 12 wire bytes.
    public var bytes: [UInt8] {
        (0..<4).map { UInt8(truncatingIfNeeded: high >> (24 - 8 * UInt32($0))) }
            + (0..<8).map { UInt8(truncatingIfNeeded: low >> (56 - 8 * UInt64($0))) }
    }
}

/// Attribute type codes used here (RFC 8489 §18.3, RFC 8445 §16.1).
public enum STUNAttributeType {
    public static let mappedAddress: UInt16 = 0x0001
    public static let username: UInt16 = 0x0006
    public static let messageIntegrity: UInt16 = 0x0008
    public static let errorCode: UInt16 = 0x0009
    public static let unknownAttributes: UInt16 = 0x000A
    public static let realm: UInt16 = 0x0014
    public static let nonce: UInt16 = 0x0015
    public static let xorMappedAddress: UInt16 = 0x0020
    public static let priority: UInt16 = 0x0024
    public static let useCandidate: UInt16 = 0x0025
    public static let software: UInt16 = 0x8022
    public static let fingerprint: UInt16 = 0x8028
    public static let iceControlled: UInt16 = 0x8029
    public static let iceControlling: UInt16 = 0x802A
}

/// A transport address as carried by (XOR-)MAPPED-ADDRESS (RFC 8489 §14.1–14.2).
public enum STUNAddress: Equatable, Hashable, Sendable {
    /// IPv4 address as a big-endian 32-bit integer (192.0.2.1 = 0xC0000201) and port.
    case ipv4(address: UInt32, port: UInt16)
    /// IPv6 address as 16 network-order bytes and port.
    case ipv6(address: [UInt8], port: UInt16)

    public var port: UInt16 {
        switch self {
        case .ipv4(_, let port), .ipv6(_, let port): port
        }
    }
}

/// ERROR-CODE values used by ICE-lite (RFC 8489 §14.8, RFC 8445 §7.3.1.1).
public enum STUNErrorCode: UInt16, Sendable {
    case badRequest = 400
    case unauthorized = 401
    case roleConflict = 487

    /// Reason phrase per RFC 8489 §14.8 / RFC 8445.
    public var reason: String {
        switch self {
        case .badRequest: "Bad Request"
        case .unauthorized: "Unauthorized"
        case .roleConflict: "Role Conflict"
        }
    }
}
