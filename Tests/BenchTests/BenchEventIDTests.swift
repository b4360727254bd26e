@testable import Bench
import XCTest

/// ``BenchPair/timeOrderedID(wallMillis:pair:counter:)``: time-ordered (milliseconds first, fixed
/// width), unique per pair and counter, within the protocol's eventID alphabet and length.
final class BenchEventIDTests: XCTestCase {
    func testEventIDsSortByTimeThenAreUniquePerPairAndCounter() {
        let now: Int64 = 1_796_051_423_000
        XCTAssertEqual(BenchPair.timeOrderedID(wallMillis: now, pair: 7, counter: 12), "01a22d01cf18-7-12")
        // Later milliseconds sort after earlier ones whatever the pair and counter.
        XCTAssertLessThan(BenchPair.timeOrderedID(wallMillis: now, pair: 199, counter: 99_999),
                          BenchPair.timeOrderedID(wallMillis: now + 1, pair: 0, counter: 1))
        XCTAssertNotEqual(BenchPair.timeOrderedID(wallMillis: now, pair: 1, counter: 2), BenchPair.timeOrderedID(wallMillis: now, pair: 12, counter: 2))
        let longest = BenchPair.timeOrderedID(wallMillis: Int64(0xFFFF_FFFF_FFFF), pair: 4_999, counter: Int.max)
        XCTAssertLessThanOrEqual(longest.count, 64)
        XCTAssertTrue(longest.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._:-".contains($0)) })
    }
}
