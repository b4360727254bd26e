import RTP
import XCTest
@testable import SFU

final class BandwidthEstimatorTests: XCTestCase {
    private func kbps(_ values: [UInt64]) -> String { values.map { "\($0 / 1000)" }.joined(separator: " ") }

    private func startingAt(_ bps: UInt64) -> BandwidthEstimator {
        var config = BandwidthEstimator.Config()
        config.initialBps = bps
        return BandwidthEstimator(config: config)
    }

    /// A subscriber whose estimate was 1.5 Mbit/s hits a 300 kbit/s cap: within 5 s the
    /// estimate is near 300k and stays there; the cap is lifted after 20 s and the estimate
    /// grows again (no probing: 8 %/s multiplicative increase only).
    func testCappedLinkConvergesAndRecoversWithoutProbing() throws {
        var trace = CongestionTrace(link: SimulatedLink(capacityBps: 300_000), estimator: startingAt(1_500_000))
        try trace.run(until: 20_000_000)
        let capped = trace.samples(from: 5_000_000, to: 20_000_000)
        trace.link.capacityBps = 2_500_000
        try trace.run(until: 35_000_000)
        let recovered = trace.samples(from: 34_000_000, to: 35_000_000)
        print("no probing: first 5 s \(kbps(trace.samples(from: 0, to: 5_000_000).enumerated().filter { $0.offset % 5 == 0 }.map(\.element))); 5-20 s every 1 s: \(kbps(capped.enumerated().filter { $0.offset % 10 == 0 }.map(\.element))); 34-35 s: \(kbps(recovered))")
        XCTAssertTrue(capped.allSatisfy { $0 >= 180_000 && $0 <= 400_000 }, "near 300k from 5 s on")
        XCTAssertTrue(recovered.allSatisfy { $0 >= 700_000 }, "grows after the cap is lifted")
    }

    /// Same cap, then lifted, with a 10-packet probe at 2 × the estimate every 2 s
    /// (libwebrtc's ALR probing shape): the estimate reaches 2 Mbit/s — enough for a
    /// 1.5 Mbit/s layer with 30 % headroom — within 15 s of the cap being lifted.
    func testProbingRecoversWithinFifteenSeconds() throws {
        var trace = CongestionTrace(link: SimulatedLink(capacityBps: 300_000), estimator: startingAt(1_500_000))
        trace.probeEvery = 2_000_000
        try trace.run(until: 20_000_000)
        let capped = trace.samples(from: 5_000_000, to: 20_000_000)
        trace.link.capacityBps = 2_500_000
        try trace.run(until: 35_000_000)
        let after = trace.samples(from: 20_000_000, to: 35_000_000)
        let reached = trace.samples.first { $0.time > 20_000_000 && $0.bps >= 1_950_000 }?.time
        print("probing: capped 5-20 s every 1 s \(kbps(capped.enumerated().filter { $0.offset % 10 == 0 }.map(\.element))); after lifting every 1 s \(kbps(after.enumerated().filter { $0.offset % 10 == 0 }.map(\.element))); ≥1.95M at \(reached.map { Double($0 - 20_000_000) / 1e6 } ?? -1) s")
        XCTAssertTrue(capped.allSatisfy { $0 >= 180_000 && $0 <= 420_000 }, "probes against the cap do not lift the estimate")
        XCTAssertNotNil(reached)
        XCTAssertLessThanOrEqual(reached ?? .max, 35_000_000)
        XCTAssertNotNil(trace.estimator.lastProbeBps)
    }

    /// A receiver that stalls 40 ms of every 250 ms and then stamps the held packets at once
    /// (a browser on a loaded host), on an uncongested 5 Mbit/s link: the bunches are not
    /// queuing (libwebrtc's burst grouping), so the estimate does not collapse from 1 Mbit/s.
    func testReceiverStallsAreNotReadAsCongestion() throws {
        var link = SimulatedLink(capacityBps: 5_000_000)
        link.receiverStall = (every: 250_000, length: 40_000)
        var trace = CongestionTrace(link: link, estimator: startingAt(1_000_000))
        try trace.run(until: 20_000_000)
        let late = trace.samples(from: 5_000_000, to: 20_000_000)
        print("receiver stalls: 5-20 s every 1 s \(kbps(late.enumerated().filter { $0.offset % 10 == 0 }.map(\.element))) kbit/s, "
            + "usage \(trace.estimator.usage)")
        XCTAssertTrue(late.allSatisfy { $0 >= 800_000 }, "held within 20 % of the start: min \(late.min() ?? 0)")
        XCTAssertEqual(trace.estimator.queueOnsets, 0, "bunched stamps are no growing queue")
    }

    /// A receiver starved for 300 ms of every second (a browser on a host at load 15), which
    /// then reads its backlog (FIFO) at 5 Mbit/s, 5 × the send rate: the estimate does not
    /// collapse (the burst grouping and the standing-queue test keep it from reading the
    /// stalls as a bottleneck).
    func testLongReceiverStallsAreNotABottleneck() throws {
        var link = SimulatedLink(capacityBps: 5_000_000)
        link.receiverStall = (every: 1_000_000, length: 300_000)
        link.catchUpBps = 5_000_000
        var trace = CongestionTrace(link: link, estimator: startingAt(1_000_000))
        try trace.run(until: 20_000_000) { _ in 1_000_000 }
        let late = trace.samples(from: 5_000_000, to: 20_000_000)
        print("300 ms receiver stalls: 5-20 s every 1 s \(kbps(late.enumerated().filter { $0.offset % 10 == 0 }.map(\.element))) kbit/s, loss bursts \(trace.estimator.lossBursts), delay \(Int(trace.estimator.delayBasedBps ?? 0)) loss \(Int(trace.estimator.lossBasedBps ?? 0)) ratio \(trace.estimator.lossRatio ?? -1)")
        XCTAssertTrue(late.allSatisfy { $0 >= 800_000 }, "no collapse: min \(late.min() ?? 0)")
        XCTAssertEqual(trace.estimator.queueOnsets, 0, "a stall and its catch-up are no growing queue")
    }

    /// 5 % random loss without queueing: loss-based holds (2…10 %), the estimate does not
    /// collapse.
    func testRandomFivePercentLossDoesNotCollapse() throws {
        var trace = CongestionTrace(link: SimulatedLink(capacityBps: 5_000_000, randomLoss: 0.05), estimator: startingAt(1_000_000))
        try trace.run(until: 20_000_000)
        let late = trace.samples(from: 10_000_000, to: 20_000_000)
        print("5 % loss: \(kbps(late.enumerated().filter { $0.offset % 10 == 0 }.map(\.element))) kbit/s, loss ratio \(trace.estimator.lossRatio ?? -1)")
        XCTAssertTrue(late.allSatisfy { $0 >= 800_000 }, "held within 20 % of the start")
        XCTAssertEqual(trace.estimator.lossRatio ?? 0, 0.05, accuracy: 0.04)
    }

    /// The browser test's shape: 1.55 Mbit/s (top layer + audio) into a link that drops to
    /// 300 kbit/s behind a 0.8 s tail-drop queue (NetEmu's 30 kB at 300 kbit/s), the sender
    /// not backing off. The queue delays the loss signal by its own length, so the delay
    /// rise must cut first — to the rate the queue drains at, not the 500 ms or smoothed
    /// rate that still reads the pre-cap flow — and the loss burst then holds it there.
    func testSaturatedQueueCutsToTheDrainRateWithinASecond() throws {
        var link = SimulatedLink(capacityBps: 5_000_000)
        link.maxQueueDelay = 800_000
        var trace = CongestionTrace(link: link, estimator: startingAt(1_500_000))
        try trace.run(until: 3_000_000) { _ in 1_550_000 }
        XCTAssertGreaterThanOrEqual(trace.estimator.estimateBps, 1_500_000, "uncapped: no cut")
        trace.link.capacityBps = 300_000
        try trace.run(until: 6_000_000) { _ in 1_550_000 }
        let cut = trace.samples.first { $0.time > 3_000_000 && $0.bps <= 400_000 }
        print("saturated queue: every 100 ms after the cap \(kbps(trace.samples(from: 3_000_000, to: 4_500_000))); "
            + "loss bursts \(trace.estimator.lossBursts), recent \(Int(trace.estimator.recentReceivedBps ?? 0))")
        let at = try XCTUnwrap(cut?.time, "never cut to the capacity")
        XCTAssertLessThanOrEqual(at - 3_000_000, 1_000_000, "cut within 1 s of the cap")
        let after = trace.samples(from: at, to: 6_000_000)
        XCTAssertTrue(after.allSatisfy { $0 >= 150_000 && $0 <= 400_000 }, "stays at the capacity, no collapse: \(kbps(after))")
        XCTAssertGreaterThan(trace.estimator.lossBursts, 0, "the overflowing queue is seen as a loss burst")
    }

    /// Issue 4 failure class 1 (BrowserSimulcastCapTests runs 4 and 7): 1.55 Mbit/s into a
    /// link capped at 300 kbit/s behind a 0.8 s tail-drop queue; 0.4 s after the cap the
    /// sender drops to 200 kbit/s (layer 0 + audio: the router's urgent switch) while the
    /// queue it left drains, then sends that for 12 s with a 6 kB layer-0 keyframe every 3 s,
    /// to a receiver that stalls 40 ms of every 250 ms (a loaded browser). From 1 s after
    /// the cap the estimate never falls below the 200 kbit/s being delivered: over-uses while
    /// the queue drains or while the delay is not rising hold (`Config.minOveruseGrowth`),
    /// and a keyframe's queue cuts from its drain rate, the capacity. (This trace does not
    /// reproduce run 7's 180k with the old rules either — the scripted receiver is tidier
    /// than a loaded Chromium — so it guards the outcome; `QueueOnsetTests` check the two
    /// readings the rules rest on.)
    func testCapBehindADrainingQueueNeverCutsBelowTheDeliveredRate() throws {
        func drainingCap(_ config: BandwidthEstimator.Config) throws -> (samples: [UInt64], estimator: BandwidthEstimator, text: String) {
            var link = SimulatedLink(capacityBps: 5_000_000)
            link.maxQueueDelay = 800_000
            var trace = CongestionTrace(link: link, estimator: BandwidthEstimator(config: config))
            try trace.run(until: 3_000_000) { _ in 1_550_000 }
            trace.link.capacityBps = 300_000
            try trace.run(until: 3_400_000) { _ in 1_550_000 }
            trace.link.receiverStall = (every: 250_000, length: 40_000)
            trace.burstEvery = (every: 3_000_000, bytes: 6_000)
            try trace.run(until: 16_000_000) { _ in 200_000 }
            XCTAssertNotNil(trace.samples.first { $0.time > 3_000_000 && $0.time < 4_000_000 && $0.bps <= 400_000 }, "the cap is cut to within 1 s")
            let after = trace.samples(from: 4_000_000, to: 16_000_000)
            let text = "every 100 ms from the cap \(kbps(trace.samples(from: 3_000_000, to: 5_000_000))); 4–16 s every 1 s "
                + "\(kbps(after.enumerated().filter { $0.offset % 10 == 0 }.map(\.element))); min \(after.min() ?? 0), "
                + "over-use holds \(trace.estimator.overuseHolds), growing-queue cuts \(trace.estimator.queueOnsets), drops \(trace.link.drops)"
            return (after, trace.estimator, text)
        }
        var config = BandwidthEstimator.Config()
        config.initialBps = 1_500_000
        let run = try drainingCap(config)
        print("draining cap: " + run.text)
        XCTAssertTrue(run.samples.allSatisfy { $0 >= 200_000 }, "never below the delivered 200 kbit/s: min \(run.samples.min() ?? 0)")
        XCTAssertTrue(run.samples.allSatisfy { $0 <= 450_000 }, "nor far above the 300k cap")
        XCTAssertGreaterThan(run.estimator.overuseHolds, 0, "over-uses without a rising delay held")
    }

    /// 50 % loss without any queueing (no delay signal): the loss burst alone sets the
    /// estimate to the received rate (≈ 500k of 1 Mbit/s) within 0.5 s, where the 1 s loss
    /// sample would take a second for × 0.75.
    func testLossBurstFallsToTheReceivedRateAtOnce() throws {
        var trace = CongestionTrace(link: SimulatedLink(capacityBps: 5_000_000, randomLoss: 0.5), estimator: startingAt(1_000_000))
        try trace.run(until: 2_000_000) { _ in 1_000_000 }
        print("50 % loss: every 100 ms \(kbps(trace.samples(from: 0, to: 2_000_000)))")
        let at = try XCTUnwrap(trace.samples.first { $0.bps <= 650_000 }?.time)
        XCTAssertLessThanOrEqual(at, 500_000)
        // Until the 1 s loss sample takes over (× (1 − loss/2) per sample, GCC §6).
        let held = trace.samples(from: at, to: 900_000)
        XCTAssertTrue(held.allSatisfy { $0 >= 350_000 && $0 <= 650_000 }, "held at the received rate: \(kbps(held))")
    }

    /// `LossBurst`'s significance test on counts: 80 % of 20 and 40 % of 20 pass; 5 of 20
    /// (25 %, what 5 % random loss shows once in ~60 windows) and anything under 20 packets do not.
    func testLossBurstNeedsSignificantLoss() {
        func burst(received: Int, lost: Int) -> LossBurst {
            var burst = LossBurst()
            burst.add(received: received, lost: lost, now: 0, window: 300_000)
            return burst
        }
        XCTAssertTrue(burst(received: 4, lost: 16).isSustained(above: 0.1, minPackets: 20))
        XCTAssertTrue(burst(received: 12, lost: 8).isSustained(above: 0.1, minPackets: 20))
        XCTAssertFalse(burst(received: 15, lost: 5).isSustained(above: 0.1, minPackets: 20))
        XCTAssertFalse(burst(received: 2, lost: 17).isSustained(above: 0.1, minPackets: 20))
        var aging = burst(received: 4, lost: 16)
        aging.add(received: 20, lost: 0, now: 400_000, window: 300_000)
        XCTAssertEqual(aging.ratio, 0, "feedback older than the window no longer counts")
    }

    /// 20 % random loss without queueing: × 0.9 per 1 s sample, below 600k from 1M within 10 s.
    func testHeavyLossDecreases() throws {
        var trace = CongestionTrace(link: SimulatedLink(capacityBps: 5_000_000, randomLoss: 0.2), estimator: startingAt(1_000_000))
        try trace.run(until: 10_000_000)
        XCTAssertLessThan(trace.estimator.estimateBps, 600_000)
        XCTAssertGreaterThanOrEqual(trace.estimator.estimateBps, trace.estimator.config.minBps)
    }

    func testREMBCapsAndRRLossFallback() {
        var estimator = BandwidthEstimator()
        XCTAssertEqual(estimator.estimateBps, 300_000, "initial before any input")
        estimator.remb(bitrate: 1_200_000, now: 0)
        XCTAssertEqual(estimator.estimateBps, 1_200_000, "REMB alone (no transport-cc, no loss info)")
        estimator.receiverReport(fractionLost: 64, now: 1_000_000)  // 25 %
        XCTAssertEqual(estimator.estimateBps, 1_050_000, "× (1 − 0.25 / 2)")
        estimator.receiverReport(fractionLost: 0, now: 2_000_000)
        XCTAssertGreaterThan(estimator.estimateBps, 1_050_000, "low loss grows again")
        XCTAssertLessThanOrEqual(estimator.estimateBps, 1_200_000, "never above REMB")
        estimator.remb(bitrate: 200_000, now: 3_000_000)
        XCTAssertEqual(estimator.estimateBps, 200_000)
    }

    func testFeedbackForUnknownOrOldPacketsIsIgnored() {
        var estimator = BandwidthEstimator()
        estimator.transportFeedback(TransportFeedback(baseSequenceNumber: 500, referenceTime: 1, feedbackPacketCount: 0, receiveDeltas: [1, 2, nil]), now: 0)
        XCTAssertNil(estimator.lossRatio)
        XCTAssertNil(estimator.deliveredBps)
        XCTAssertEqual(estimator.estimateBps, 300_000)
    }

    func testEstimateDecaysWhenFeedbackStops() throws {
        var trace = CongestionTrace(link: SimulatedLink(capacityBps: 5_000_000), estimator: startingAt(1_000_000))
        try trace.run(until: 2_000_000)
        let estimator = trace.estimator
        let steady = estimator.estimateBps
        XCTAssertEqual(estimator.estimate(now: trace.now), steady, "feedback is flowing")
        XCTAssertEqual(estimator.estimate(now: trace.now + 900_000), steady, "under the 1 s timeout")
        XCTAssertEqual(Double(estimator.estimate(now: trace.now + 1_500_000)), Double(steady) * 0.8, accuracy: 1)
        XCTAssertEqual(Double(estimator.estimate(now: trace.now + 2_500_000)), Double(steady) * 0.64, accuracy: 1)
        XCTAssertEqual(estimator.estimate(now: trace.now + 60_000_000), estimator.config.minBps)
    }
}
