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

    func testTimeOrderedIdentifiersSortByTimeAndDiffer() throws {
        let now: Int64 = 1_796_051_423_000
        let a = try SecureRandom.timeOrderedIdentifier(wallMillis: now)
        let b = try SecureRandom.timeOrderedIdentifier(wallMillis: now)
        let later = try SecureRandom.timeOrderedIdentifier(wallMillis: now + 1)
        XCTAssertEqual(a.count, 35)
        XCTAssertTrue(a.hasPrefix("01a22d01cf18-"))
        XCTAssertNotEqual(a, b, "128 random bits after the time")
        XCTAssertLessThan(max(a, b), later, "a later millisecond sorts after whatever the random part")
        XCTAssertTrue(Identifier.isValid(a))
    }
}

/// ``TimeOrderedID``: 12 hex digits, zero-padded, in time order as text.
final class TimeOrderedIDTests: XCTestCase {
    func testPrefixIsTwelveHexDigitsInTimeOrder() {
        XCTAssertEqual(TimeOrderedID.prefix(wallMillis: 1_796_051_423_000), "01a22d01cf18")
        XCTAssertEqual(TimeOrderedID.prefix(wallMillis: 0), "000000000000")
        XCTAssertEqual(TimeOrderedID.prefix(wallMillis: -5), "000000000000", "negative counts as 0")
        XCTAssertLessThan(TimeOrderedID.prefix(wallMillis: 0xF_FFFF_FFFF), TimeOrderedID.prefix(wallMillis: 0x10_0000_0000),
                          "no shorter string at a hex-digit boundary")
    }
}
