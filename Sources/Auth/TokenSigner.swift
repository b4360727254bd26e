import Foundation

/// Mints and verifies HS256 JSON Web Tokens (RFC 7519) in JWS compact serialization
/// (RFC 7515 §7.1) signed with HMAC-SHA256 (RFC 7518 §3.2).
///
/// Verification order: size, shape, header (`alg`, `typ`, `crit`), signature, then claims and
/// time. Nothing from the payload is trusted before the signature checks out.
public struct TokenSigner: Sendable {
    /// 4096 bytes: our tokens are ~250 bytes; the cap bounds base64 and JSON work an
    /// unauthenticated peer can make us do, and matches common HTTP header-size budgets.
    public static let maximumTokenBytes = 4096

    /// The only header we emit. Fixed text so minting is deterministic (RFC 7519 §5).
    static let headerJSON = #"{"alg":"HS256","typ":"JWT"}"#

    private let secret: [UInt8]

    /// `secret` is the HMAC key. RFC 7518 §3.2 requires at least 256 bits for HS256; the server
    /// configuration enforces that, this type does not (test vectors use other sizes).
    public init(secret: [UInt8]) {
        self.secret = secret
    }

    /// Serializes `claims` (keys sorted, no whitespace) and signs them.
    public func mint(_ claims: TokenClaims) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding strings and integers into JSON cannot fail; the fallback keeps this total.
        let payload = (try? encoder.encode(claims)).map { [UInt8]($0) } ?? []
        let signingInput = Base64URL.encode(Array(Self.headerJSON.utf8)) + "." + Base64URL.encode(payload)
        let signature = HMAC.sha256(key: secret, data: Array(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(signature)
    }

    /// Verifies `token` at `now` (seconds since the Unix epoch), allowing `leeway` seconds of
    /// clock skew on `exp`, `nbf` and `iat` (RFC 7519 §4.1.4 "some small leeway").
    /// 30 s default: NTP-synced phones are within a second; 30 s covers badly-synced ones
    /// without extending a stolen token's life noticeably.
    public func verify(_ token: String, now: Int64, leeway: Int64 = 30) throws(TokenError) -> TokenClaims {
        let payload = try verifiedPayload(token)
        let claims: TokenClaims
        do {
            claims = try JSONDecoder().decode(TokenClaims.self, from: Data(payload))
        } catch let error as TokenError {
            throw error
        } catch {
            throw .malformed
        }
        // Valid while now < exp + leeway.
        if now >= claims.expiresAt.addingReportingOverflow(leeway).partialValue { throw .expired }
        let latestAcceptableStart = now.addingReportingOverflow(leeway).partialValue
        if let notBefore = claims.notBefore, notBefore > latestAcceptableStart { throw .notYetValid }
        // A token issued in the future means a skewed or forged issuer clock.
        if claims.issuedAt > latestAcceptableStart { throw .notYetValid }
        return claims
    }

    /// Checks size, shape, header and signature; returns the raw payload bytes.
    /// Internal so the RFC 7515 A.1 vector (whose claims are not ours) can be tested.
    func verifiedPayload(_ token: String) throws(TokenError) -> [UInt8] {
        let bytes = Array(token.utf8)
        guard bytes.count <= Self.maximumTokenBytes else { throw .oversized }
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3,
              let headerBytes = Base64URL.decode(utf8: Array(parts[0])),
              let payload = Base64URL.decode(utf8: Array(parts[1])),
              let signature = Base64URL.decode(utf8: Array(parts[2]))
        else { throw .malformed }

        let header: JOSEHeader
        do {
            header = try JSONDecoder().decode(JOSEHeader.self, from: Data(headerBytes))
        } catch {
            throw .malformed
        }
        guard let alg = header.alg else { throw .malformed }  // RFC 7515 §4.1.1: REQUIRED.
        guard alg == "HS256" else { throw .unsupportedAlgorithm }
        if let typ = header.typ, typ.uppercased() != "JWT" { throw .unsupportedAlgorithm }
        if header.crit != nil { throw .unsupportedAlgorithm }

        let signingInput = Array(bytes[0 ..< (parts[0].count + 1 + parts[1].count)])
        let expected = HMAC.sha256(key: secret, data: signingInput)
        guard HMAC.constantTimeEquals(expected, signature) else { throw .badSignature }
        return payload
    }
}

/// The JOSE header fields we look at (RFC 7515 §4.1). Unknown fields are ignored unless
/// listed in `crit`.
struct JOSEHeader: Decodable {
    var alg: String?
    var typ: String?
    var crit: [String]?
}
