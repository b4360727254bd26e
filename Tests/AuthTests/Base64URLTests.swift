import XCTest
@testable import Auth

final class Base64URLTests: XCTestCase {
    /// RFC 4648 §10 test vectors, converted to the url-safe alphabet without padding.
    func testRFC4648Vectors() {
        let vectors: [(String, String)] = [
            ("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"),
            ("fooba", "Zm9vYmE"), ("foobar", "Zm9vYmFy"),
        ]
        for (plain, encoded) in vectors {
            XCTAssertEqual(Base64URL.encode(Array(plain.utf8)), encoded)
            XCTAssertEqual(Base64URL.decode(encoded), Array(plain.utf8))
        }
    }

    /// Bytes 0xFB 0xFF map to `+/` in standard base64 and must become `-_`.
    func testUsesURLSafeAlphabet() {
        XCTAssertEqual(Base64URL.encode([0xFB, 0xFF, 0xBF]), "-_-_")
        XCTAssertEqual(Base64URL.decode("-_-_"), [0xFB, 0xFF, 0xBF])
    }

    func testRejectsPaddingStandardAlphabetAndBadLengths() {
        XCTAssertNil(Base64URL.decode("Zg=="))
        XCTAssertNil(Base64URL.decode("+/+/"))
        XCTAssertNil(Base64URL.decode("Z"))
        XCTAssertNil(Base64URL.decode("Zm9v Yg"))
        XCTAssertNil(Base64URL.decode("Zm9vYg\n"))
    }

    /// "Zh" decodes to "f" only if trailing bits are ignored; canonical decoding rejects it.
    func testRejectsNonCanonicalTrailingBits() {
        XCTAssertEqual(Base64URL.decode("Zg"), Array("f".utf8))
        XCTAssertNil(Base64URL.decode("Zh"))
    }

    func testRoundTripsAllByteValues() {
        let all = (0 ... 255).map { UInt8($0) }
        for length in 0 ... 40 {
            let slice = Array(all[length ..< (length + 200)])
            XCTAssertEqual(Base64URL.decode(Base64URL.encode(slice)), slice)
        }
    }
}
