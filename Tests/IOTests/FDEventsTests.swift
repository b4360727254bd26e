@testable import IO
import XCTest

final class FDEventsTests: XCTestCase {
    func testARepeatedFDHasItsEventsORedTogether() {
        var set = FDEvents()
        set.insert(7, 0x01)
        set.insert(3, 0x04)
        set.insert(7, 0x04)
        XCTAssertEqual(set.events(of: 7), 0x05)
        XCTAssertEqual(set.events(of: 3), 0x04)
        XCTAssertNil(set.events(of: 4))
        XCTAssertEqual(set.pairs.map(\.fd), [7, 3], "insertion order until sorted")
    }

    /// The comparison a refresh relies on: the same pairs are equal once sorted, whatever the
    /// order they came in; other events or another fd are not.
    func testSortedSetsCompareByTheirPairs() {
        var a = FDEvents(), b = FDEvents()
        a.insert(9, 0x01); a.insert(12, 0x01); a.insert(-1, 0x04)
        b.insert(12, 0x01); b.insert(-1, 0x04); b.insert(9, 0x01)
        a.sort(); b.sort()
        XCTAssertEqual(a, b)
        var c = b
        c.insert(9, 0x04)
        XCTAssertNotEqual(c, b)
        var d = b
        d.remove(12)
        XCTAssertNotEqual(d, b)
        XCTAssertNil(d.events(of: 12))
        XCTAssertEqual(d.events(of: -1), 0x04, "a negative fd keeps its own key")
        d.removeAll()
        XCTAssertTrue(d.isEmpty)
        XCTAssertEqual(d, FDEvents())
    }
}
