import XCTest
@testable import Media

/// The counter lists drive `+` (worker totals) and `/metrics`: a counter added to the struct
/// but not to its list would silently vanish from both.
final class SFUCounterFieldsTests: XCTestCase {
    func testEveryServerCounterIsListedOnce() {
        let stored = Mirror(reflecting: SFUServerCounters()).children.compactMap(\.label)
        XCTAssertEqual(Set(SFUServerCounters.fields.map(\.name)), Set(stored))
        XCTAssertEqual(SFUServerCounters.fields.count, stored.count)
    }

    func testEveryLoopCounterIsListedOnce() {
        let stored = Mirror(reflecting: MediaLoopCounters()).children.compactMap(\.label)
        XCTAssertEqual(Set(MediaLoopCounters.fields.map(\.name)), Set(stored))
        XCTAssertEqual(MediaLoopCounters.fields.count, stored.count)
    }

    func testSumAddsEveryField() {
        var a = SFUServerCounters()
        var b = SFUServerCounters()
        for (index, field) in SFUServerCounters.fields.enumerated() {
            a[keyPath: field.path] = UInt64(index + 1)
            b[keyPath: field.path] = 1_000
        }
        let sum = a + b
        for (index, field) in SFUServerCounters.fields.enumerated() {
            XCTAssertEqual(sum[keyPath: field.path], UInt64(index + 1_001), field.name)
        }
    }

    func testNamesMatchTheStoredProperties() {
        // Each listed name reads the property of that name (no crossed key paths).
        var counters = SFUServerCounters()
        let mirrorIndex = { (counters: SFUServerCounters, name: String) -> UInt64? in
            Mirror(reflecting: counters).children.first { $0.label == name }?.value as? UInt64
        }
        for (index, field) in SFUServerCounters.fields.enumerated() { counters[keyPath: field.path] = UInt64(index + 7) }
        for (index, field) in SFUServerCounters.fields.enumerated() {
            XCTAssertEqual(mirrorIndex(counters, field.name), UInt64(index + 7), field.name)
        }
        var loop = MediaLoopCounters()
        for (index, field) in MediaLoopCounters.fields.enumerated() { loop[keyPath: field.path] = UInt64(index + 3) }
        for (index, field) in MediaLoopCounters.fields.enumerated() {
            XCTAssertEqual(Mirror(reflecting: loop).children.first { $0.label == field.name }?.value as? UInt64, UInt64(index + 3), field.name)
        }
    }
}
