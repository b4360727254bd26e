import RTP
import XCTest
@testable import SFU
import SplitMix

/// Scripted uplinks (no clock, no sockets): a publisher sends a video stream through a path
/// with delay jitter (and so reordering) and loss; the generator runs on 20 ms ticks and
/// NACKed packets come back as RTX one RTT later (lost again with the same probability).
final class NackGeneratorSimulationTests: XCTestCase {
    struct Outcome {
        var stats: NackGeneratorStats
        var packets: Int
        var dropped: Int
        /// Packets never delivered (neither original nor any repair).
        var residual: Int
        /// NACKed sequence numbers whose original was not lost (needless requests).
        var needless: Int
    }

    /// - Parameters:
    ///   - delay: one-way base delay and ± jitter, µs (delay uniform in base ± jitter).
    ///   - loss: loss probability, originals and repairs alike.
    func simulate(config: NackGeneratorConfig = .video, seconds: Int = 20, interval: Int64 = 5_000, delay: (base: Int64, jitter: Int64), loss: Double, rtt: Int64 = 100_000, seed: UInt64) -> Outcome {
        var random = SplitMix64(state: seed)
        let count = seconds * 1_000_000 / Int(interval)
        let first: UInt16 = 64_000  // crosses 65535 → 0
        var arrivals: [(at: Int64, index: Int)] = []
        var dropped = Set<Int>()
        for index in 0..<count {
            if Double.random(in: 0..<1, using: &random) < loss {
                dropped.insert(index)
                continue
            }
            let sentAt = Int64(index) * interval
            arrivals.append((sentAt + delay.base + Int64.random(in: -delay.jitter...delay.jitter, using: &random), index))
        }
        arrivals.sort { $0.at < $1.at }
        var repairs: [(at: Int64, index: Int)] = []
        var delivered = Set<Int>()
        var needless = Set<Int>()
        var generator = NackGenerator(config: config)
        var reception = ReceptionStats()
        var next = 0
        var now: Int64 = 0
        let end = Int64(count) * interval + 2_000_000
        var out: [UInt16] = []
        while now <= end {
            now += 20_000
            // Deliver everything due by this tick, originals and repairs, in arrival order.
            repairs.sort { $0.at < $1.at }
            var repairIndex = 0
            while true {
                let original = next < arrivals.count && arrivals[next].at <= now ? arrivals[next] : nil
                let repair = repairIndex < repairs.count && repairs[repairIndex].at <= now ? repairs[repairIndex] : nil
                guard original != nil || repair != nil else { break }
                if let original, repair == nil || original.at <= repair!.at {
                    next += 1
                    let seq = first &+ UInt16(truncatingIfNeeded: original.index)
                    reception.record(seq: seq, rtpTimestamp: UInt32(truncatingIfNeeded: Int64(original.index) * interval * 90 / 1000), arrival: original.at, clockRate: 90000)
                    generator.received(seq, now: original.at, rtt: rtt)
                    delivered.insert(original.index)
                } else if let repair {
                    repairIndex += 1
                    generator.received(first &+ UInt16(truncatingIfNeeded: repair.index), now: repair.at, isRetransmission: true, rtt: rtt)
                    delivered.insert(repair.index)
                }
            }
            repairs.removeFirst(repairIndex)
            out.removeAll(keepingCapacity: true)
            generator.tick(now: now, rtt: rtt, jitter: NackGenerator.jitterMicroseconds(reception.jitter, clockRate: 90000), into: &out)
            for seq in out {
                let index = Int(seq &- first)
                if !dropped.contains(index) { needless.insert(index) }
                if Double.random(in: 0..<1, using: &random) >= loss {
                    repairs.append((now + rtt + Int64.random(in: -delay.jitter...delay.jitter, using: &random), index))
                }
            }
        }
        return Outcome(stats: generator.stats, packets: count, dropped: dropped.count, residual: count - delivered.count, needless: needless.count)
    }

    func report(_ name: String, _ outcome: Outcome) {
        let s = outcome.stats
        print("\(name): packets \(outcome.packets), dropped \(outcome.dropped), requested \(s.requested), NACKed seqs \(s.nackedSequenceNumbers), NACK packets \(s.nackPackets), needless \(outcome.needless), reordered before NACK \(s.reorderedBeforeNACK), recovered \(s.recovered), lost after retries \(s.lostAfterRetries), too late \(s.tooLate), residual \(outcome.residual)")
    }

    /// Issue 4: jitter with reordering (50 ± 30 ms) must not trigger a storm of needless NACKs.
    func testJitterWithReorderingCausesAlmostNoNACKs() {
        let outcome = simulate(delay: (50_000, 30_000), loss: 0, seed: 1)
        report("50±30 ms, no loss", outcome)
        // A generator that does not wait out the reorder window, on the same script.
        var eager = NackGeneratorConfig.video
        eager.maxReorderWait = eager.minReorderWait
        let baseline = simulate(config: eager, delay: (50_000, 30_000), loss: 0, seed: 1)
        report("50±30 ms, no loss, fixed 10 ms wait", baseline)
        XCTAssertGreaterThan(outcome.stats.reorderedBeforeNACK, 1000, "the script does reorder heavily")
        XCTAssertLessThanOrEqual(outcome.stats.nackedSequenceNumbers, UInt64(outcome.packets / 200), "≤ 0.5% of packets NACKed")
        XCTAssertGreaterThan(baseline.stats.nackedSequenceNumbers, 10 * max(outcome.stats.nackedSequenceNumbers, 1), "the wait is what prevents the storm")
        XCTAssertEqual(outcome.residual, 0)
    }

    func testJitterReorderingAndTenPercentLossAreRepaired() {
        let outcome = simulate(delay: (50_000, 30_000), loss: 0.10, seed: 2)
        report("50±30 ms, 10% loss", outcome)
        XCTAssertLessThanOrEqual(Double(outcome.residual), Double(outcome.packets) * 0.005, "residual loss ≤ 0.5%")
        XCTAssertGreaterThanOrEqual(outcome.stats.requested, UInt64(outcome.dropped) * 95 / 100, "nearly every loss asked for")
        XCTAssertLessThanOrEqual(outcome.needless, outcome.packets / 100, "needless NACKs ≤ 1% of packets")
        XCTAssertGreaterThan(outcome.stats.recovered, UInt64(outcome.dropped) * 9 / 10)
    }

    func testSteadyPathWithBurstyLossRecoversEverything() {
        let outcome = simulate(delay: (20_000, 2_000), loss: 0.05, rtt: 40_000, seed: 3)
        report("20±2 ms, 5% loss", outcome)
        XCTAssertEqual(outcome.residual, 0)
        XCTAssertEqual(outcome.needless, 0)
        XCTAssertEqual(outcome.stats.lostAfterRetries + outcome.stats.tooLate, 0)
    }
}
