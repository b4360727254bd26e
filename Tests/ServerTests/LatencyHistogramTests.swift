import XCTest
@testable import Server

final class LatencyHistogramTests: XCTestCase {
    func testSamplesLandInTheFirstBucketAtOrAboveThem() {
        var h = LatencyHistogram(bounds: [10, 100, 1_000])
        for value: Int64 in [0, 10, 11, 100, 101, 5_000] { h.record(value) }
        // ≤10: 0, 10 · ≤100: 11, 100 · ≤1000: 101 · +Inf: 5000
        XCTAssertEqual(h.counts, [2, 2, 1, 1])
        XCTAssertEqual(h.cumulative, [2, 4, 5, 6])
        XCTAssertEqual(h.count, 6)
        XCTAssertEqual(h.sum, 0 + 10 + 11 + 100 + 101 + 5_000)
        XCTAssertEqual(h.max, 5_000)
    }

    func testUnsortedBoundsAreSorted() {
        var h = LatencyHistogram(bounds: [1_000, 10, 100])
        h.record(50)
        XCTAssertEqual(h.bounds, [10, 100, 1_000])
        XCTAssertEqual(h.counts, [0, 1, 0, 0])
    }

    func testQuantileUpperBound() {
        var h = LatencyHistogram(bounds: [10, 100, 1_000])
        XCTAssertNil(h.upperBound(atQuantile: 0.99))
        for _ in 0 ..< 98 { h.record(5) }
        h.record(50)
        h.record(20_000)
        XCTAssertEqual(h.upperBound(atQuantile: 0.5), 10)
        XCTAssertEqual(h.upperBound(atQuantile: 0.99), 100)
        // Past the last bound the answer is the largest sample, not +Inf.
        XCTAssertEqual(h.upperBound(atQuantile: 1.0), 20_000)
    }

    func testExpositionIsCumulativeWithInfSumCountAndMax() {
        var h = LatencyHistogram(bounds: [10, 100])
        h.record(7); h.record(70); h.record(700)
        let lines = h.exposition(name: "x_us", help: "X.")
        XCTAssertEqual(lines, [
            "# HELP x_us X.", "# TYPE x_us histogram",
            "x_us_bucket{le=\"10\"} 1", "x_us_bucket{le=\"100\"} 2", "x_us_bucket{le=\"+Inf\"} 3",
            "x_us_sum 777", "x_us_count 3",
            "# HELP x_us_max Largest sample since the start.", "# TYPE x_us_max gauge", "x_us_max 700",
        ])
    }
}
