/// Why a token (or an identifier inside one) was rejected. Codes are stable: they reach the
/// wire in error replies, so never rename them.
public enum TokenError: Error, Equatable, Sendable {
    /// Not three base64url segments of JSON objects, or a claim had the wrong JSON type.
    case malformed
    /// Header `alg` is not `HS256` (including `none`, RFC 7518 §3.6), `typ` present and not
    /// `JWT` (RFC 7519 §5.1), or a `crit` header is present: RFC 7515 §4.1.11 requires
    /// rejecting extensions we do not understand, and we understand none.
    case unsupportedAlgorithm
    /// HMAC does not match.
    case badSignature
    /// `exp` (plus leeway) is not after `now` (RFC 7519 §4.1.4).
    case expired
    /// `nbf` or `iat` lies in the future beyond the leeway (RFC 7519 §4.1.5, §4.1.6).
    case notYetValid
    /// A required claim is absent; the associated value is the claim name (`sub`, `dev`, ...).
    case missingClaim(String)
    /// Token longer than ``TokenSigner/maximumTokenBytes``; rejected before any parsing.
    case oversized
    /// An account or device identifier breaks ``Identifier`` rules; the associated value is the
    /// claim or parameter name (never the offending value, which may be attacker-chosen junk).
    case invalidIdentifier(String)

    /// Stable wire code.
    public var code: String {
        switch self {
        case .malformed: "malformed"
        case .unsupportedAlgorithm: "unsupported_algorithm"
        case .badSignature: "bad_signature"
        case .expired: "expired"
        case .notYetValid: "not_yet_valid"
        case .missingClaim: "missing_claim"
        case .oversized: "oversized"
        case .invalidIdentifier: "invalid_identifier"
        }
    }
}
