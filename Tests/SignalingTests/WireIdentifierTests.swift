import Foundation
@testable import Signaling
import XCTest

/// Identifiers off the wire: 1–64 bytes of `[A-Za-z0-9._:-]`, nothing else.
final class WireIdentifierTests: XCTestCase {
    func testEveryASCIICharacterAloneAndInsideAnIdentifier() {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._:-".unicodeScalars)
        for code in 0 ..< 128 {
            let scalar = Unicode.Scalar(UInt8(code))
            let expected = allowed.contains(scalar)
            XCTAssertEqual(WireIdentifier.isValid(String(scalar)), expected, "U+\(String(code, radix: 16))")
            XCTAssertEqual(WireIdentifier.isValid("call-\(String(scalar))-7"), expected, "U+\(String(code, radix: 16)) inside")
        }
    }

    func testLengthAndNonASCII() {
        XCTAssertFalse(WireIdentifier.isValid(""))
        XCTAssertTrue(WireIdentifier.isValid(String(repeating: "a", count: WireIdentifier.maxLength)))
        XCTAssertFalse(WireIdentifier.isValid(String(repeating: "a", count: WireIdentifier.maxLength + 1)))
        XCTAssertFalse(WireIdentifier.isValid("caf\u{E9}"), "é is two bytes, neither allowed")
        XCTAssertFalse(WireIdentifier.isValid("call\u{1F4DE}"))
        XCTAssertFalse(WireIdentifier.isValid("a\u{0}b"))
        // 21 two-byte characters are 42 bytes: the limit counts bytes, and they are refused anyway.
        XCTAssertFalse(WireIdentifier.isValid(String(repeating: "\u{E9}", count: 21)))
        // A string backed by Foundation storage is read the same way.
        XCTAssertTrue(WireIdentifier.isValid(NSString(string: "0193a7c2-5b1e-7000-8000-00000000abcd") as String))
        XCTAssertFalse(WireIdentifier.isValid(NSString(string: "bad id") as String))
    }
}
