@testable import Bench
import SplitMix
import XCTest

/// ``SetupPacing``: random phases within the first interval, gaps of 0.9–1.1 intervals whose
/// mean is the interval, and the aligned schedule of the runs before it. Seeded draws: the same
/// values every run.
final class SetupPacingTests: XCTestCase {
    func testFirstSetupsSpreadOverTheFirstInterval() {
        let pacing = SetupPacing(intervalMs: 112)
        var random = SplitMix64(seed: 7)
        let delays = (0 ..< 2_000).map { _ in pacing.firstDelayMs(using: &random) }
        XCTAssertTrue(delays.allSatisfy { (0 ..< 112).contains($0) })
        // Every 16 ms slice of the interval gets some of 2,000 pairs (~285 each): no bunching.
        let slices = Dictionary(grouping: delays) { $0 / 16 }.mapValues(\.count)
        XCTAssertEqual(slices.count, 7)
        XCTAssertTrue(slices.values.allSatisfy { (200 ... 370).contains($0) }, "\(slices)")
    }

    func testGapsStayWithinTenPercentAndAverageTheInterval() {
        let pacing = SetupPacing(intervalMs: 112)
        var random = SplitMix64(seed: 42)
        let gaps = (0 ..< 10_000).map { _ in pacing.gapMs(using: &random) }
        XCTAssertEqual(gaps.min(), 101, "112 − 11")
        XCTAssertEqual(gaps.max(), 123, "112 + 11")
        let mean = Double(gaps.reduce(0, +)) / Double(gaps.count)
        XCTAssertEqual(mean, 112, accuracy: 0.3, "the offered rate is unchanged")
    }

    /// The shortest gap must not ask a device for more than the server's command rate over
    /// a setup: the interval is set for 90 % of it.
    func testShortestGapStaysWithinTheServersCommandRate() {
        let interval = BenchPair.minimumSetupIntervalMs(commandsPerSecond: 50)
        XCTAssertEqual(interval, 112)
        let pacing = SetupPacing(intervalMs: interval)
        var random = SplitMix64(seed: 1)
        let shortest = (0 ..< 10_000).map { _ in pacing.gapMs(using: &random) }.min()!
        let commandsPerSecond = Double(BenchPair.commandsPerDevicePerSetup) * 1000 / Double(shortest)
        XCTAssertLessThanOrEqual(commandsPerSecond, 50)
    }

    func testAlignedStartsAtOnceWithExactGaps() {
        let pacing = SetupPacing(intervalMs: 112, aligned: true)
        var random = SplitMix64(seed: 3)
        XCTAssertEqual((0 ..< 100).map { _ in pacing.firstDelayMs(using: &random) }, Array(repeating: 0, count: 100))
        XCTAssertEqual((0 ..< 100).map { _ in pacing.gapMs(using: &random) }, Array(repeating: 112, count: 100))
    }

    func testNoIntervalMeansNoWait() {
        let pacing = SetupPacing(intervalMs: 0)
        var random = SplitMix64(seed: 9)
        XCTAssertEqual(pacing.firstDelayMs(using: &random), 0)
        XCTAssertEqual(pacing.gapMs(using: &random), 0)
    }

    /// `--rate R` over P pairs: each pair one setup per P/R s, so that the pairs together
    /// offer R; never faster than the server's command limit allows; nil = the limit's pace.
    func testIntervalForAnOfferedRate() {
        XCTAssertEqual(SetupPacing.intervalMs(pairs: 200, offeredRate: 1000, minimumMs: 112), 200)
        XCTAssertEqual(SetupPacing.intervalMs(pairs: 400, offeredRate: 1000, minimumMs: 112), 400)
        XCTAssertEqual(SetupPacing.intervalMs(pairs: 3, offeredRate: 7, minimumMs: 112), 429, "428.57 rounded")
        XCTAssertEqual(SetupPacing.intervalMs(pairs: 100, offeredRate: 1000, minimumMs: 112), 112, "capped at the limit")
        XCTAssertEqual(SetupPacing.intervalMs(pairs: 200, offeredRate: nil, minimumMs: 112), 112)
        XCTAssertEqual(SetupPacing.intervalMs(pairs: 0, offeredRate: 1000, minimumMs: 112), 112)
        XCTAssertEqual(SetupPacing.intervalMs(pairs: 5_000, offeredRate: 0.1, minimumMs: 112), 50_000_000)
        XCTAssertEqual(SetupPacing.rate(pairs: 200, intervalMs: 200), 1000)
        XCTAssertEqual(SetupPacing.rate(pairs: 200, intervalMs: 0), 0)
    }

    /// The report says what rate the pairs offer, and says so plainly when they fall short.
    func testOfferedRateNote() {
        XCTAssertEqual(SignalingRun.offeredRateNote(rate: 1000, pairs: 200, minimumMs: 112),
                       "offered rate: 1000.0 setups/s (--rate 1000.0; each pair one setup per 200 ms on average)")
        XCTAssertEqual(SignalingRun.offeredRateNote(rate: 1000, pairs: 100, minimumMs: 112),
                       "offered rate: 892.9 setups/s, below --rate 1000.0: 100 pairs at one setup per 112 ms cannot offer more (give more --pairs)")
    }
}
