import Foundation
import XCTest
@testable import Auth

final class TokenSignerTests: XCTestCase {
    private let secret = Array("switchboard-test-secret-0123456789abcdef".utf8)
    private var signer: TokenSigner { TokenSigner(secret: secret) }

    /// Builds a token from raw header and payload JSON, signed with `key` (HS256).
    private func craft(header: String, payload: String, key: [UInt8]? = nil) -> String {
        let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(payload.utf8))
        return input + "." + Base64URL.encode(HMAC.sha256(key: key ?? secret, data: Array(input.utf8)))
    }

    private let standardHeader = #"{"alg":"HS256","typ":"JWT"}"#

    private func assertRejects(_ token: String, now: Int64 = 1_700_000_100, _ expected: TokenError,
                               file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try signer.verify(token, now: now), file: file, line: line) {
            XCTAssertEqual($0 as? TokenError, expected, file: file, line: line)
        }
    }

    /// RFC 7515 Appendix A.1: HS256 JWS with the JWK key
    /// `AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow`.
    /// Its header has `typ: JWT` and CRLFs; its claims are not ours, so the public API stops at
    /// the claims (missing `sub`) after the signature passed.
    func testRFC7515AppendixA1SignatureVerifies() throws {
        let key = try XCTUnwrap(Base64URL.decode("AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow"))
        let token = "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9"
            + ".eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
            + ".dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
        let rfcSigner = TokenSigner(secret: key)
        let payload = try rfcSigner.verifiedPayload(token)
        XCTAssertEqual(String(decoding: payload, as: UTF8.self),
                       "{\"iss\":\"joe\",\r\n \"exp\":1300819380,\r\n \"http://example.com/is_root\":true}")
        XCTAssertThrowsError(try rfcSigner.verify(token, now: 1_300_819_000)) {
            XCTAssertEqual($0 as? TokenError, .missingClaim("sub"))
        }
        // Same token with the last signature character changed.
        let tampered = String(token.dropLast()) + "A"
        XCTAssertThrowsError(try rfcSigner.verifiedPayload(tampered)) {
            XCTAssertEqual($0 as? TokenError, .badSignature)
        }
    }

    /// Minting is deterministic; vector computed independently:
    /// python3 -c 'import hmac,hashlib,base64,json; b=lambda x: base64.urlsafe_b64encode(x).rstrip(b"=").decode();
    ///   h=b(b"{\"alg\":\"HS256\",\"typ\":\"JWT\"}");
    ///   p=b(json.dumps({"sub":"alice","dev":"phone-1","exp":1700003600,"iat":1700000000},separators=(",",":"),sort_keys=True).encode());
    ///   s=h+"."+p; print(s+"."+b(hmac.new(b"switchboard-test-secret-0123456789abcdef",s.encode(),hashlib.sha256).digest()))'
    func testMintKnownVector() throws {
        let claims = try TokenClaims(account: "alice", device: "phone-1", issuedAt: 1_700_000_000, expiresAt: 1_700_003_600)
        XCTAssertEqual(signer.mint(claims),
                       "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJkZXYiOiJwaG9uZS0xIiwiZXhwIjoxNzAwMDAzNjAwLCJpYXQiOjE3MDAwMDAwMDAsInN1YiI6ImFsaWNlIn0.l1sbCXii7JYnb3E70W9bqU8nO0BhXKGs57kru7bVB2U")
    }

    func testRoundTripWithNotBefore() throws {
        let claims = try TokenClaims(account: "bob", device: "laptop", issuedAt: 100, expiresAt: 1000, notBefore: 200)
        XCTAssertEqual(try signer.verify(signer.mint(claims), now: 500), claims)
    }

    func testWrongSecretIsBadSignature() throws {
        let claims = try TokenClaims(account: "bob", device: "d", issuedAt: 100, expiresAt: 1000)
        let token = TokenSigner(secret: Array("other".utf8)).mint(claims)
        assertRejects(token, now: 500, .badSignature)
    }

    func testTamperedPayloadIsBadSignature() throws {
        let token = signer.mint(try TokenClaims(account: "bob", device: "d", issuedAt: 100, expiresAt: 1000))
        let parts = token.split(separator: ".").map(String.init)
        let forgedPayload = Base64URL.encode(Array(#"{"dev":"d","exp":1000,"iat":100,"sub":"mallory"}"#.utf8))
        assertRejects(parts[0] + "." + forgedPayload + "." + parts[2], now: 500, .badSignature)
    }

    func testExpiryHonoursLeeway() throws {
        let token = signer.mint(try TokenClaims(account: "a", device: "d", issuedAt: 100, expiresAt: 1000))
        XCTAssertNoThrow(try signer.verify(token, now: 1029))
        assertRejects(token, now: 1030, .expired)
        XCTAssertNoThrow(try signer.verify(token, now: 999, leeway: 0))
        XCTAssertThrowsError(try signer.verify(token, now: 1000, leeway: 0)) { XCTAssertEqual($0 as? TokenError, .expired) }
    }

    func testNotBeforeAndFutureIssuedAtAreNotYetValid() throws {
        let token = signer.mint(try TokenClaims(account: "a", device: "d", issuedAt: 100, expiresAt: 5000, notBefore: 1000))
        assertRejects(token, now: 969, .notYetValid)
        XCTAssertNoThrow(try signer.verify(token, now: 970))
        let future = signer.mint(try TokenClaims(account: "a", device: "d", issuedAt: 2000, expiresAt: 5000))
        assertRejects(future, now: 1000, .notYetValid)
    }

    /// RFC 7518 §3.6 "none" and every other algorithm are refused, even with a valid HS256 MAC.
    func testRejectsNoneAndOtherAlgorithms() {
        let payload = #"{"dev":"d","exp":9999999999,"iat":1,"sub":"a"}"#
        for alg in ["none", "None", "HS384", "RS256", "hs256"] {
            assertRejects(craft(header: #"{"alg":"\#(alg)","typ":"JWT"}"#, payload: payload), .unsupportedAlgorithm)
        }
        let unsigned = Base64URL.encode(Array(#"{"alg":"none"}"#.utf8)) + "." + Base64URL.encode(Array(payload.utf8)) + "."
        assertRejects(unsigned, .unsupportedAlgorithm)
    }

    func testTypAndCritHeaders() {
        let payload = #"{"dev":"d","exp":9999999999,"iat":1,"sub":"a"}"#
        assertRejects(craft(header: #"{"alg":"HS256","typ":"JWE"}"#, payload: payload), .unsupportedAlgorithm)
        assertRejects(craft(header: #"{"alg":"HS256","crit":["exp"],"exp":1}"#, payload: payload), .unsupportedAlgorithm)
        XCTAssertNoThrow(try signer.verify(craft(header: #"{"alg":"HS256"}"#, payload: payload), now: 100))
        XCTAssertNoThrow(try signer.verify(craft(header: #"{"alg":"HS256","typ":"jwt"}"#, payload: payload), now: 100))
    }

    func testMalformedShapes() {
        let good = craft(header: standardHeader, payload: #"{"dev":"d","exp":9999999999,"iat":1,"sub":"a"}"#)
        let parts = good.split(separator: ".").map(String.init)
        for token in ["", ".", "..", "a.b", "a.b.c.d", parts[0] + "." + parts[1], good + ".",
                      "!!!." + parts[1] + "." + parts[2], parts[0] + "=." + parts[1] + "." + parts[2]] {
            assertRejects(token, .malformed)
        }
        assertRejects(craft(header: "[1,2]", payload: "{}"), .malformed)
        assertRejects(craft(header: "not json", payload: "{}"), .malformed)
        assertRejects(craft(header: #"{"typ":"JWT"}"#, payload: "{}"), .malformed)
    }

    func testClaimTypeErrorsAreMalformed() {
        assertRejects(craft(header: standardHeader, payload: #"{"dev":"d","exp":"soon","iat":1,"sub":"a"}"#), .malformed)
        assertRejects(craft(header: standardHeader, payload: #"{"dev":"d","exp":99.5,"iat":1,"sub":"a"}"#), .malformed)
        assertRejects(craft(header: standardHeader, payload: #"["sub"]"#), .malformed)
        assertRejects(craft(header: standardHeader, payload: "not json"), .malformed)
    }

    func testMissingClaimsAreNamed() {
        assertRejects(craft(header: standardHeader, payload: #"{"exp":9999999999,"iat":1,"sub":"a"}"#), .missingClaim("dev"))
        assertRejects(craft(header: standardHeader, payload: #"{"dev":"d","iat":1,"sub":"a"}"#), .missingClaim("exp"))
        assertRejects(craft(header: standardHeader, payload: #"{"dev":"d","exp":9999999999,"sub":"a"}"#), .missingClaim("iat"))
        assertRejects(craft(header: standardHeader, payload: #"{"dev":"d","exp":9999999999,"iat":1}"#), .missingClaim("sub"))
    }

    func testInvalidIdentifiersInClaims() throws {
        assertRejects(craft(header: standardHeader, payload: #"{"dev":"d","exp":9999999999,"iat":1,"sub":"a b"}"#), .invalidIdentifier("sub"))
        assertRejects(craft(header: standardHeader, payload: #"{"dev":"","exp":9999999999,"iat":1,"sub":"a"}"#), .invalidIdentifier("dev"))
        XCTAssertThrowsError(try TokenClaims(account: String(repeating: "a", count: 65), device: "d", issuedAt: 0, expiresAt: 1)) {
            XCTAssertEqual($0 as? TokenError, .invalidIdentifier("sub"))
        }
    }

    /// A 4097-byte token is refused before parsing, even though its prefix is a valid token.
    func testOversizedRejectedBeforeParsing() throws {
        let token = signer.mint(try TokenClaims(account: "a", device: "d", issuedAt: 1, expiresAt: 9_999_999_999))
        assertRejects(token + String(repeating: "A", count: TokenSigner.maximumTokenBytes + 1 - token.utf8.count), .oversized)
        assertRejects(String(repeating: "x", count: 10_000), .oversized)
    }

    func testWireCodesAreStable() {
        XCTAssertEqual([TokenError.malformed, .unsupportedAlgorithm, .badSignature, .expired, .notYetValid,
                        .missingClaim("sub"), .oversized, .invalidIdentifier("dev")].map(\.code),
                       ["malformed", "unsupported_algorithm", "bad_signature", "expired", "not_yet_valid",
                        "missing_claim", "oversized", "invalid_identifier"])
    }
}
