import XCTest
@testable import Auth

final class IdentifierTests: XCTestCase {
    func testAcceptsAllowedAlphabet() {
        XCTAssertTrue(Identifier.isValid("a"))
        XCTAssertTrue(Identifier.isValid("Alice.Smith_01-phone"))
        XCTAssertTrue(Identifier.isValid(String(repeating: "x", count: 64)))
    }

    func testRejectsEmptyLongAndForeignCharacters() {
        XCTAssertFalse(Identifier.isValid(""))
        XCTAssertFalse(Identifier.isValid(String(repeating: "x", count: 65)))
        for bad in ["a:b", "a b", "a/b", "é", "a\n", "a\0b", "👍"] {
            XCTAssertFalse(Identifier.isValid(bad), bad)
        }
    }

    func testValidateNamesTheField() {
        XCTAssertThrowsError(try Identifier.validate("a:b", field: "dev")) {
            XCTAssertEqual($0 as? TokenError, .invalidIdentifier("dev"))
        }
    }
}
