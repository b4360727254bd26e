import XCTest
@testable import Auth

final class SecureRandomTests: XCTestCase {
    func testProducesRequestedLengthAndDistinctValues() throws {
        let a = try SecureRandom.bytes(count: 32)
        let b = try SecureRandom.bytes(count: 32)
        XCTAssertEqual(a.count, 32)
        XCTAssertNotEqual(a, b, "two 256-bit draws colliding means the RNG is broken")
        XCTAssertEqual(try SecureRandom.bytes(count: 0), [])
    }

    func testRejectsBadLengths() {
        XCTAssertThrowsError(try SecureRandom.bytes(count: -1)) { XCTAssertEqual($0 as? SecureRandomError, .invalidLength) }
        XCTAssertThrowsError(try SecureRandom.bytes(count: 1 << 21)) { XCTAssertEqual($0 as? SecureRandomError, .invalidLength) }
    }

    func testIdentifierIsValidAccountIdentifier() throws {
        let id = try SecureRandom.identifier()
        XCTAssertEqual(id.count, 22)
        XCTAssertTrue(Identifier.isValid(id))
    }
}
