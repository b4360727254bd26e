/// Why a STUN message could not be parsed, verified or built.
public enum STUNError: Error, Equatable, Sendable {
    /// Shorter than the 20-byte header or the announced length.
    case truncated
    /// Top two bits not zero, length not a multiple of 4, or length ≠ datagram size.
    case notSTUN
    /// Magic cookie is not 0x2112A442 (RFC 8489 §5).
    case badMagicCookie
    /// An attribute runs past the message or a known attribute has the wrong size/format.
    case badAttribute(type: UInt16)
    /// FINGERPRINT is present but not last (RFC 8489 §14.7).
    case fingerprintNotLast
    /// A required attribute is missing (e.g. MESSAGE-INTEGRITY when verifying).
    case missingAttribute(type: UInt16)
    /// HMAC-SHA1 does not match.
    case integrityMismatch
    /// CRC-32 does not match.
    case fingerprintMismatch
    /// A value does not fit its wire field.
    case invalidField

    /// Stable string code.
    public var code: String {
        switch self {
        case .truncated: "stun_truncated"
        case .notSTUN: "stun_not_stun"
        case .badMagicCookie: "stun_bad_magic_cookie"
        case .badAttribute: "stun_bad_attribute"
        case .fingerprintNotLast: "stun_fingerprint_not_last"
        case .missingAttribute: "stun_missing_attribute"
        case .integrityMismatch: "stun_integrity_mismatch"
        case .fingerprintMismatch: "stun_fingerprint_mismatch"
        case .invalidField: "stun_invalid_field"
        }
    }
}
