import SDP
import XCTest

/// RFC 4566 §9 token-chars and the percent escape used for stream ids (RFC 8830 §2).
final class SDPTokenTests: XCTestCase {
    func testTokenCharsAreExactlyRFC4566s() {
        // token-char = %x21 / %x23-27 / %x2A-2B / %x2D-2E / %x30-39 / %x41-5A / %x5E-7E
        let expected = Set([0x21] + Array(0x23...0x27) + Array(0x2A...0x2B) + Array(0x2D...0x2E) + Array(0x30...0x39)
                           + Array(0x41...0x5A) + Array(0x5E...0x7E)).map(UInt8.init)
        XCTAssertEqual(Set((0...255).map(UInt8.init).filter(SDPToken.isTokenChar)), Set(expected))
        XCTAssertFalse(SDPToken.isToken(""))
        XCTAssertFalse(SDPToken.isToken("a/b"))
        XCTAssertTrue(SDPToken.isMSIDID(String(repeating: "a", count: 64)))
        XCTAssertFalse(SDPToken.isMSIDID(String(repeating: "a", count: 65)))
    }

    func testEscapeMakesTokensThatRoundTrip() {
        let samples = ["alice/laptop", "a b", "100%", "x:y;z=\"q\"", "ünï/cødé", "{3f95a578-f1b0}", "~"]
        for text in samples {
            let token = SDPToken.escape(text)
            XCTAssertTrue(SDPToken.isToken(token), "\(text) → \(token)")
            XCTAssertEqual(SDPToken.unescape(token), text)
        }
        XCTAssertEqual(SDPToken.escape("alice/laptop"), "alice%2Flaptop")
        XCTAssertEqual(SDPToken.escape("100%"), "100%25")
        XCTAssertEqual(SDPToken.unescape("3f95a578-f1b0"), "3f95a578-f1b0", "ids without % pass through")
        XCTAssertEqual(SDPToken.unescape("a%2fb"), "a/b", "lower-case hex")
    }

    func testMalformedEscapesAreRefused() {
        XCTAssertNil(SDPToken.unescape("a%"))
        XCTAssertNil(SDPToken.unescape("a%2"))
        XCTAssertNil(SDPToken.unescape("a%zz"))
        XCTAssertNil(SDPToken.unescape("%FF"), "not UTF-8")
    }
}
