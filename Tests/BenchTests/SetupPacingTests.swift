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
}
