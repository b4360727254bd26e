import Auth
import Foundation
import IO

/// Why `POST /v1/dev/token` refused a request. Codes reach the wire as `{"error": code}`.
public enum DevTokenError: Error, Equatable {
    /// The body is not a JSON object with string fields `account` and `device`.
    case malformed
    /// `account` or `device` breaks the ``Identifier`` rules (1–64 of `[A-Za-z0-9._-]`).
    case invalidIdentifier(String)

    public var code: String {
        switch self {
        case .malformed: return "malformed"
        case .invalidIdentifier: return "invalidIdentifier"
        }
    }
}

/// Development tokens: `POST /v1/dev/token {"account","device"}` → `{"token"}`.
///
/// DEVELOPMENT ONLY. Anyone who can reach the port becomes any account: there is no
/// password. Served only when `auth.dev_tokens = true` (default false; 404 otherwise), so the
/// browser client at `/` can sign in on a developer machine without the CLI.
public enum DevToken {
    /// 12 h: a working day of manual testing without re-signing in, short enough that a token
    /// copied out of a dev box stops working the same day.
    public static let ttlSeconds: Int64 = 12 * 3600

    /// 1 KiB: `{"account","device"}` with two 64-char identifiers is ~150 bytes.
    static let maximumBodyBytes = 1024

    /// Parses `body`, validates both identifiers and mints a token valid from `now` (Unix s).
    public static func mint(body: Data, signer: TokenSigner, now: Int64) throws(DevTokenError) -> String {
        guard body.count <= maximumBodyBytes,
              let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
              let account = object["account"] as? String, let device = object["device"] as? String
        else { throw .malformed }
        guard Identifier.isValid(account) else { throw .invalidIdentifier("account") }
        guard Identifier.isValid(device) else { throw .invalidIdentifier("device") }
        do {
            let claims = try TokenClaims(account: account, device: device, issuedAt: now, expiresAt: now + ttlSeconds)
            return signer.mint(claims)
        } catch {
            throw .invalidIdentifier("account")
        }
    }

    /// The HTTP answer: 200 `{"token"}`, 400 `{"error":code,"field"?}`, or 404 when disabled.
    public static func response(enabled: Bool, body: Data, signer: TokenSigner, now: Int64) -> HTTPResponse {
        guard enabled else { return .json(404, Data(#"{"error":"not_found"}"#.utf8)) }
        do {
            let token = try mint(body: body, signer: signer, now: now)
            var response = HTTPResponse.json(200, Data(#"{"token":"\#(token)","ttlSeconds":\#(ttlSeconds)}"#.utf8))
            response.headers["Cache-Control"] = "no-store"
            return response
        } catch {
            var fields = #""error":"\#(error.code)""#
            if case .invalidIdentifier(let field) = error { fields += #","field":"\#(field)""# }
            return .json(400, Data("{\(fields)}".utf8))
        }
    }
}
