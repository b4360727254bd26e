/// Time-limited TURN credentials per the TURN REST API draft
/// (draft-uberti-behave-turn-rest-00 §2.2), the scheme coturn implements as
/// `use-auth-secret` / `static-auth-secret`.
///
/// JSON field names follow the draft's response (`username`, `password`, `ttl`, `uris`).
public struct TURNCredentials: Codable, Equatable, Sendable {
    /// `"<expiry unix seconds>:<account>"`: coturn parses the leading timestamp and refuses the
    /// allocation once it has passed.
    public let username: String
    /// `base64(HMAC-SHA1(secret, username))` with standard base64 and padding (§2.2).
    public let password: String
    /// Lifetime in seconds from issue. JSON key `ttl`.
    public let ttlSeconds: Int64
    /// TURN/STUN URIs (RFC 7065), e.g. `turn:turn.example.org:3478?transport=udp`.
    public let uris: [String]

    enum CodingKeys: String, CodingKey {
        case username, password, uris
        case ttlSeconds = "ttl"
    }

    public init(username: String, password: String, ttlSeconds: Int64, uris: [String]) {
        self.username = username
        self.password = password
        self.ttlSeconds = ttlSeconds
        self.uris = uris
    }
}

/// Issues ``TURNCredentials`` with a secret shared with the TURN server.
public struct TURNCredentialIssuer: Sendable {
    /// 3600 s default: one hour covers nearly every call while bounding how long a leaked
    /// credential works; the draft suggests about a day as an upper bound.
    public static let defaultTTL: Int64 = 3600

    private let secret: [UInt8]
    public let ttl: Int64
    public let uris: [String]

    /// `secret` is the HMAC key, byte for byte as coturn's `static-auth-secret` string.
    public init(secret: [UInt8], ttl: Int64 = TURNCredentialIssuer.defaultTTL, uris: [String]) {
        self.secret = secret
        self.ttl = ttl
        self.uris = uris
    }

    /// Convenience: the UTF-8 bytes of coturn's `static-auth-secret`.
    public init(secret: String, ttl: Int64 = TURNCredentialIssuer.defaultTTL, uris: [String]) {
        self.init(secret: Array(secret.utf8), ttl: ttl, uris: uris)
    }

    /// Credentials for `account`, valid until `now + ttl` (seconds since the Unix epoch).
    /// The account must satisfy ``Identifier`` (which excludes `:`), else
    /// ``TokenError/invalidIdentifier(_:)`` naming `account`.
    public func issue(account: String, now: Int64) throws(TokenError) -> TURNCredentials {
        try Identifier.validate(account, field: "account")
        let expiry = now.addingReportingOverflow(ttl).partialValue
        let username = "\(expiry):\(account)"
        let mac = HMAC.sha1(key: secret, data: Array(username.utf8))
        return TURNCredentials(username: username, password: Base64.encode(mac), ttlSeconds: ttl, uris: uris)
    }
}

/// Standard base64 with padding (RFC 4648 §4), as the TURN REST password uses.
enum Base64 {
    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var url = Array(Base64URL.encode(bytes).utf8)
        for index in url.indices {
            if url[index] == UInt8(ascii: "-") { url[index] = UInt8(ascii: "+") }
            else if url[index] == UInt8(ascii: "_") { url[index] = UInt8(ascii: "/") }
        }
        while url.count % 4 != 0 { url.append(UInt8(ascii: "=")) }
        return String(decoding: url, as: UTF8.self)
    }
}
