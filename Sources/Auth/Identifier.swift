/// Rules for account and device identifiers: 1–64 characters of `[A-Za-z0-9._-]`.
///
/// The alphabet excludes `:` so an account can be embedded in a TURN REST username
/// (`<expiry>:<account>`) unambiguously, and excludes `/` and whitespace so it is safe in URL
/// paths, log lines and file names. 64: long enough for a UUID or a base64url-encoded 256-bit
/// value (43 chars) with a prefix.
public enum Identifier {
    public static let maximumLength = 64

    public static func isValid(_ value: String) -> Bool {
        let utf8 = value.utf8
        guard !utf8.isEmpty, utf8.count <= maximumLength else { return false }
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                continue
            default:
                return false
            }
        }
        return true
    }

    /// Throws ``TokenError/invalidIdentifier(_:)`` naming `field` when `value` is invalid.
    public static func validate(_ value: String, field: String) throws(TokenError) {
        guard isValid(value) else { throw .invalidIdentifier(field) }
    }
}
