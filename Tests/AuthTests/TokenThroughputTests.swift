import Foundation
import XCTest
@testable import Auth

/// Prints mint/verify throughput (no timing assertion; figures depend on build mode and load).
final class TokenThroughputTests: XCTestCase {
    func testMintAndVerifyThroughputPrintsFigures() throws {
        let signer = TokenSigner(secret: try SecureRandom.bytes(count: 32))
        let claims = try TokenClaims(account: "alice", device: "phone-1", issuedAt: 1_700_000_000, expiresAt: 1_700_086_400)
        let iterations = 5000
        var tokens: [String] = []
        tokens.reserveCapacity(iterations)
        let mintStart = Date()
        for _ in 0 ..< iterations { tokens.append(signer.mint(claims)) }
        let mintSeconds = Date().timeIntervalSince(mintStart)
        let verifyStart = Date()
        var verified = 0
        for token in tokens where try signer.verify(token, now: 1_700_000_100) == claims { verified += 1 }
        let verifySeconds = Date().timeIntervalSince(verifyStart)
        XCTAssertEqual(verified, iterations)
        print(String(format: "token throughput: mint %.0f/s, verify %.0f/s (%d tokens, %d bytes each)",
                     Double(iterations) / mintSeconds, Double(iterations) / verifySeconds, iterations, tokens[0].utf8.count))
    }
}
