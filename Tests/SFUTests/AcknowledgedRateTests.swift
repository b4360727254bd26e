import XCTest
@testable import SFU

final class AcknowledgedRateTests: XCTestCase {
    /// 1200-byte packets at `bps` from `start` for `duration` µs; arrivals held during
    /// `stall` (every, length) and released at once, as a starved receiver stamps them.
    private func feed(_ rate: inout AcknowledgedRate, bps: Double, from start: Int64, for duration: Int64,
                      stall: (every: Int64, length: Int64)? = nil) -> [Double] {
        var seen: [Double] = []
        let gap = Int64(1200 * 8 * 1_000_000 / bps)
        var t = start
        while t < start + duration {
            var arrival = t
            if let stall, arrival % stall.every < stall.length { arrival = arrival - arrival % stall.every + stall.length }
            rate.add(arrival: arrival, size: 1200)
            if let bps = rate.bps { seen.append(bps) }
            t += gap
        }
        return seen
    }

    /// 400 kbit/s acknowledged in bunches (nothing for 120 ms of every 400 ms, then all at
    /// once): single 150 ms windows read 0 or far above, the estimate stays near 400k.
    func testBunchedAcknowledgementsStayNearTheRate() {
        var rate = AcknowledgedRate()
        let seen = feed(&rate, bps: 400_000, from: 0, for: 10_000_000, stall: (400_000, 120_000))
        let late = seen.suffix(seen.count / 2)
        print("bunched 400k: min \(Int(late.min() ?? 0)) max \(Int(late.max() ?? 0))")
        XCTAssertFalse(late.isEmpty)
        XCTAssertTrue(late.allSatisfy { $0 > 300_000 && $0 < 520_000 }, "min \(late.min() ?? 0) max \(late.max() ?? 0)")
    }

    /// 1.5 Mbit/s, then 300 kbit/s (a capped link): the estimate follows within 3 s.
    func testStepDownIsFollowed() throws {
        var rate = AcknowledgedRate()
        _ = feed(&rate, bps: 1_500_000, from: 0, for: 5_000_000)
        XCTAssertEqual(try XCTUnwrap(rate.bps), 1_500_000, accuracy: 150_000)
        _ = feed(&rate, bps: 300_000, from: 5_000_000, for: 3_000_000)
        XCTAssertEqual(try XCTUnwrap(rate.bps), 300_000, accuracy: 60_000)
    }
}
