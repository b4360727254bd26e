/// The claims of a Switchboard access token (RFC 7519 §4.1 registered names where one fits).
///
/// Every value of this type has valid identifiers: the throwing initializer and the decoder
/// both enforce ``Identifier`` rules, so code holding a `TokenClaims` need not re-check.
public struct TokenClaims: Codable, Equatable, Sendable {
    /// Account the bearer acts as. JWT claim `sub` (RFC 7519 §4.1.2).
    public let account: String
    /// Device of that account. Private claim `dev` (RFC 7519 §4.3).
    public let device: String
    /// Expiry, seconds since the Unix epoch. JWT claim `exp` (RFC 7519 §4.1.4).
    public let expiresAt: Int64
    /// Issue time, seconds since the Unix epoch. JWT claim `iat` (RFC 7519 §4.1.6).
    public let issuedAt: Int64
    /// Optional start of validity, seconds since the Unix epoch. JWT claim `nbf` (§4.1.5).
    public let notBefore: Int64?

    enum CodingKeys: String, CodingKey {
        case account = "sub"
        case device = "dev"
        case expiresAt = "exp"
        case issuedAt = "iat"
        case notBefore = "nbf"
    }

    /// Validates `account` and `device` (``TokenError/invalidIdentifier(_:)`` naming `sub` or
    /// `dev`).
    public init(account: String, device: String, issuedAt: Int64, expiresAt: Int64, notBefore: Int64? = nil) throws(TokenError) {
        try Identifier.validate(account, field: CodingKeys.account.rawValue)
        try Identifier.validate(device, field: CodingKeys.device.rawValue)
        self.account = account
        self.device = device
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.notBefore = notBefore
    }

    /// Decodes and validates. Absent required claims throw ``TokenError/missingClaim(_:)``;
    /// wrong JSON types surface as `DecodingError` (the signer maps them to `malformed`).
    /// NumericDate values must be integers: we only mint integers, and RFC 7519 §2 allows it.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func require<T: Decodable>(_ type: T.Type, _ key: CodingKeys) throws -> T {
            guard let value = try container.decodeIfPresent(type, forKey: key) else {
                throw TokenError.missingClaim(key.rawValue)
            }
            return value
        }
        let account = try require(String.self, .account)
        let device = try require(String.self, .device)
        let expiresAt = try require(Int64.self, .expiresAt)
        let issuedAt = try require(Int64.self, .issuedAt)
        let notBefore = try container.decodeIfPresent(Int64.self, forKey: .notBefore)
        try self.init(account: account, device: device, issuedAt: issuedAt, expiresAt: expiresAt, notBefore: notBefore)
    }
}
