import COpenSSL

/// Errors from the CSPRNG.
public enum SecureRandomError: Error, Equatable, Sendable {
    /// `RAND_bytes` reported failure (the DRBG could not be seeded). Code: `entropy_unavailable`.
    case entropyUnavailable
    /// A negative or absurd byte count was requested. Code: `invalid_length`.
    case invalidLength

    public var code: String {
        switch self {
        case .entropyUnavailable: "entropy_unavailable"
        case .invalidLength: "invalid_length"
        }
    }
}

/// Cryptographically secure random bytes from OpenSSL's DRBG (`RAND_bytes`), for secrets and
/// unguessable identifiers.
public enum SecureRandom {
    /// 1 MiB: far above any secret or identifier; guards against a caller passing garbage.
    static let maximumLength = 1 << 20

    public static func bytes(count: Int) throws(SecureRandomError) -> [UInt8] {
        guard count >= 0, count <= maximumLength else { throw .invalidLength }
        if count == 0 { return [] }
        var out = [UInt8](repeating: 0, count: count)
        let ok = out.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32(count)) }
        guard ok == 1 else { throw .entropyUnavailable }
        return out
    }

    /// An unguessable identifier: `byteCount` random bytes, base64url without padding.
    /// 16 bytes (128 bits) by default: collision-free and unguessable for call and session IDs;
    /// the 22-character result satisfies ``Identifier`` rules.
    public static func identifier(byteCount: Int = 16) throws(SecureRandomError) -> String {
        Base64URL.encode(try bytes(count: byteCount))
    }

    /// A time-ordered identifier: ``TimeOrderedID/prefix(wallMillis:)`` (Unix ms as 12 hex
    /// digits), `-`, then ``identifier(byteCount:)`` (128 random bits; 35 characters in all).
    /// Identifiers made later sort after earlier ones, like UUIDv7 (RFC 9562 §5.7): the
    /// server's callIDs. The time is not a secret: a call's snapshot carries its creation
    /// time anyway.
    public static func timeOrderedIdentifier(wallMillis: Int64, byteCount: Int = 16) throws(SecureRandomError) -> String {
        TimeOrderedID.prefix(wallMillis: wallMillis) + "-" + (try identifier(byteCount: byteCount))
    }
}
