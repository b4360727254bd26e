import RTP
import XCTest
@testable import SFU

/// Issue 4, BrowserSimulcastCapTests cap run 1 on the issue's branch: under a real 300 kbit/s
/// cap a growing-queue cut put bob's estimate at 190k, below alice's layer 0 + audio, so the
/// video paused; with only audio delivered (≈ 100k) the estimate could not grow past
/// 1.5 × that, the paused-video probes came every 5 s and the one that read 269k was dropped
/// for the over-use its own burst tripped — the video never resumed (10 s traced).
/// These traces feed a scripted 300k link (`SimulatedLink`, transport-cc through the wire
/// codec) into the real estimator and selector, `now` passed in.
final class PausedRecoveryTests: XCTestCase {
    /// alice's layers as in the browser test (layer 0 a little above 150k, so that 190k − audio
    /// does not fit it), her Opus with overhead as the audio reservation.
    private let layers: [UInt64] = [160_000, 500_000, 1_500_000]
    private let audio: UInt64 = 40_000

    private func estimator(at bps: UInt64) -> BandwidthEstimator {
        var config = BandwidthEstimator.Config()
        config.initialBps = bps
        return BandwidthEstimator(config: config)
    }

    /// The selector (every 200 ms, as the router evaluates) and the estimator on a 300k link
    /// whose receiver stamps in bunches (a loaded browser: 40 ms held of every 250 ms, which
    /// trips the delay-gradient detector with no queue on the path). The estimate starts at
    /// the 190k cut with the video paused; paused, only 100k (audio and the other publisher)
    /// is sent, on layer 0 its 160k + 100k. Probes are what the selector asks for.
    /// Returns when layer 0 was resumed (µs after the cut, nil if not within `duration`) and
    /// the estimate per 200 ms.
    private func pausedUnderCap(duration: Int64) throws -> (resumedAfter: Int64?, estimates: [UInt64], probes: Int, pausedAgain: Bool, trace: CongestionTrace) {
        var link = SimulatedLink(capacityBps: 300_000)
        link.receiverStall = (every: 250_000, length: 40_000)
        var trace = CongestionTrace(link: link, estimator: estimator(at: 190_000))
        var selector = LayerSelector()
        // Uncapped on the top layer, then the cut (the router's growing-queue path).
        XCTAssertNotNil(selector.update(estimateBps: 1_479_000, audioBps: audio, layerBitrates: layers, maxLayer: 2, now: 0).target)
        let cutAt: Int64 = 200_000
        let paused = selector.update(estimateBps: 190_000, audioBps: audio, layerBitrates: layers, maxLayer: 2, now: cutAt)
        XCTAssertTrue(paused.changed)
        XCTAssertNil(paused.target, "190k − 40k of audio does not fit layer 0 (160k): paused")
        var estimates: [UInt64] = []
        var resumedAfter: Int64?
        var probes = 0
        var pausedAgain = false
        var now = cutAt
        while now < cutAt + duration {
            now += 200_000
            let sending: Double = selector.target == nil ? 100_000 : Double(layers[0] + 100_000)
            try trace.run(until: now) { _ in sending }
            let estimate = trace.estimator.estimate(now: now)
            estimates.append(estimate)
            let decision = selector.update(estimateBps: estimate, audioBps: audio, layerBitrates: layers, maxLayer: 2, now: now)
            if decision.changed, decision.target == 0, resumedAfter == nil { resumedAfter = now - cutAt }
            if decision.changed, decision.target == nil, resumedAfter != nil { pausedAgain = true }
            if decision.wantsProbe, let bps = decision.probeBps, selector.target == nil {
                probes += 1
                // Run 1's first paused probe read 151k (less than the estimate): it lifted
                // nothing — here it is not sent at all; the recovery rests on the next ones.
                if probes > 1 { trace.probe(rateBps: bps) }
            }
        }
        return (resumedAfter, estimates, probes, pausedAgain, trace)
    }

    /// Cap at 300k cut the estimate to 190k, below layer 0 + audio: with the paused-video
    /// probes (every 1.5 s, aimed at layer 0 + audio with the selector's 1.3 × headroom and
    /// 1.2 × overshoot; the first one lifts nothing, as in run 1) the estimate takes the
    /// second probe's reading, and layer 0 resumes within 6 s (the pause's 4 s cool-down
    /// bounds it from below) — and the video is not paused again. With a probe every 5 s
    /// the second would come 6 s after the pause, and the resume 2 s (upgrade hold) later.
    func testCapCutBelowLayerZeroPlusAudioResumesLayerZeroWithinSixSecondsWithProbes() throws {
        let run = try pausedUnderCap(duration: 10_000_000)
        print("paused under a 300k cap: estimate every 1 s "
            + run.estimates.enumerated().filter { $0.offset % 5 == 4 }.map { "\($0.element / 1000)k" }.joined(separator: " ")
            + ", probes \(run.probes), last probe \(run.trace.estimator.lastProbeBps.map { "\(Int($0 / 1000))k" } ?? "-"), "
            + "resumed after \(run.resumedAfter.map { String(format: "%.1f s", Double($0) / 1e6) } ?? "never")")
        let resumed = try XCTUnwrap(run.resumedAfter, "layer 0 never resumed")
        XCTAssertLessThanOrEqual(resumed, 6_000_000)
        XCTAssertGreaterThanOrEqual(run.probes, 2)
        XCTAssertFalse(run.pausedAgain, "layer 0 + audio fits the 300k link: no second pause")
    }

    /// The estimator alone, at the moment of run 1's 269k probe: the delay-gradient detector
    /// says over-use with no standing queue behind it. The probe's reading is taken (before:
    /// dropped, the estimate stayed at 190k), and an over-use behind a standing queue still
    /// refuses an unsaturated one.
    func testProbeReadingIsTakenUnderOveruseWithoutStandingQueue() throws {
        // The delay-gradient detector fed a rising one-way delay (+2 ms per packet, one every
        // 10 ms): over-use, as after a probe's own burst or a loaded receiver's stamps.
        func overusing() -> BandwidthEstimator {
            var estimator = estimator(at: 190_000)
            var index: Int64 = 0
            while estimator.usage != .overusing, index < 1_000 {
                estimator.detector.add(send: index * 10_000, arrival: 20_000 + index * 12_000)
                index += 1
            }
            return estimator
        }
        var noQueue = overusing()
        XCTAssertEqual(noQueue.usage, .overusing)
        XCTAssertFalse(noQueue.queueStanding)
        noQueue.probeCompleted(deliveredBps: 269_000, now: 1_000_000)
        XCTAssertEqual(noQueue.estimateBps, 269_000, "no standing queue behind the over-use: the probe's reading is taken")

        // Behind a standing queue (≥ 30 ms over 200 ms) the link is full: an unsaturated probe
        // is refused, a saturated one (95 % of what the link delivered) still counts.
        var queued = overusing()
        queued.queueDelay.add(oneWayDelay: 20_000, now: 0)
        queued.queueDelay.add(oneWayDelay: 80_000, now: 500_000)
        queued.queueDelay.add(oneWayDelay: 90_000, now: 600_000)
        XCTAssertTrue(queued.queueStanding)
        var refused = queued
        refused.probeCompleted(deliveredBps: 269_000, now: 700_000)
        XCTAssertEqual(refused.estimateBps, 190_000)
        queued.probeCompleted(deliveredBps: 269_000, saturated: true, now: 700_000)
        XCTAssertEqual(queued.estimateBps, 269_000)
    }

    /// While paused the selector asks for a probe toward layer 0 + audio every 1.5 s
    /// (`pausedProbeInterval`), not every 5 s, even when the probes do not lift the estimate
    /// (run 1: the first paused probe read 151k, the next came 5 s later).
    func testPausedSelectorProbesForLayerZeroEveryOneAndAHalfSeconds() {
        var selector = LayerSelector()
        _ = selector.update(estimateBps: 2_100_000, audioBps: audio, layerBitrates: layers, maxLayer: 2, now: 0)
        XCTAssertNil(selector.update(estimateBps: 190_000, audioBps: audio, layerBitrates: layers, maxLayer: 2, now: 200_000).target)
        var probes: [(at: Int64, bps: UInt64)] = []
        var now: Int64 = 200_000
        while now < 5_200_000 {
            now += 200_000
            let decision = selector.update(estimateBps: 190_000, audioBps: audio, layerBitrates: layers, maxLayer: 2, now: now)
            XCTAssertNil(decision.target)
            if decision.wantsProbe, let bps = decision.probeBps { probes.append((now, bps)) }
        }
        print("paused at 190k: probes at " + probes.map { String(format: "%.1f s %dk", Double($0.at - 200_000) / 1e6, $0.bps / 1000) }.joined(separator: ", "))
        XCTAssertGreaterThanOrEqual(probes.count, 3, "a probe every 1.5 s within 5 s of the pause")
        // Layer 0 + audio with the 1.3 × resume headroom and the 1.2 × overshoot: 1.2 × 1.3 × 160k + 40k.
        XCTAssertEqual(probes.first?.bps, UInt64(1.2 * 1.3 * 160_000 + 40_000))
    }
}
