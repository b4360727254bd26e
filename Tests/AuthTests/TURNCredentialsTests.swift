import Foundation
import XCTest
@testable import Auth

final class TURNCredentialsTests: XCTestCase {
    /// Vector computed independently:
    /// python3 -c 'import hmac,hashlib,base64; u="1700003600:alice";
    ///   print(base64.b64encode(hmac.new(b"coturn-shared-secret",u.encode(),hashlib.sha1).digest()).decode())'
    /// → igdZ8kesMome7M9yvKcGWZZbLTc=
    func testKnownVector() throws {
        let issuer = TURNCredentialIssuer(secret: "coturn-shared-secret", ttl: 3600,
                                          uris: ["turn:turn.example.org:3478?transport=udp"])
        let creds = try issuer.issue(account: "alice", now: 1_700_000_000)
        XCTAssertEqual(creds.username, "1700003600:alice")
        XCTAssertEqual(creds.password, "igdZ8kesMome7M9yvKcGWZZbLTc=")
        XCTAssertEqual(creds.ttlSeconds, 3600)
        XCTAssertEqual(creds.uris, ["turn:turn.example.org:3478?transport=udp"])
    }

    /// The draft's JSON response uses `ttl`, not `ttlSeconds`.
    func testJSONUsesDraftFieldNames() throws {
        let creds = TURNCredentials(username: "1:a", password: "p", ttlSeconds: 60, uris: ["turn:x"])
        let object = try JSONSerialization.jsonObject(with: JSONEncoder().encode(creds)) as? [String: Any]
        XCTAssertEqual(object?["ttl"] as? Int, 60)
        XCTAssertNil(object?["ttlSeconds"])
        XCTAssertEqual(try JSONDecoder().decode(TURNCredentials.self, from: JSONEncoder().encode(creds)), creds)
    }

    /// A colon in the account would let a client shift the expiry field coturn parses.
    func testRejectsInvalidAccount() {
        let issuer = TURNCredentialIssuer(secret: "s", uris: [])
        XCTAssertThrowsError(try issuer.issue(account: "9999999999:alice", now: 0)) {
            XCTAssertEqual($0 as? TokenError, .invalidIdentifier("account"))
        }
        XCTAssertThrowsError(try issuer.issue(account: "", now: 0))
    }

    func testDifferentSecretsGiveDifferentPasswords() throws {
        let a = try TURNCredentialIssuer(secret: "one", uris: []).issue(account: "bob", now: 10)
        let b = try TURNCredentialIssuer(secret: "two", uris: []).issue(account: "bob", now: 10)
        XCTAssertEqual(a.username, b.username)
        XCTAssertNotEqual(a.password, b.password)
    }
}

final class SecretHoldersRedactionTests: XCTestCase {
    func testSignerAndIssuerDoNotPrintKeys() {
        let signer = TokenSigner(secret: Array("signer-key-material".utf8))
        let issuer = TURNCredentialIssuer(secret: "issuer-key-material", uris: ["turn:x"])
        var dumped = ""
        dump(signer, to: &dumped)
        dump(issuer, to: &dumped)
        XCTAssertTrue(dumped.contains("turn:x"), dumped)
        for text in ["\(signer)", String(reflecting: signer), "\(issuer)", String(reflecting: issuer), dumped] {
            XCTAssertFalse(text.contains("key-material"), text)
            // Reflected secret bytes would show up as "- 115" ("s") lines or "N elements".
            XCTAssertFalse(text.contains("- 115") || text.contains("- 105") || text.contains("elements"), text)
        }
    }
}
