import RTP
import XCTest
@testable import SFU

final class LayerSelectorTests: XCTestCase {
    /// Publisher's three simulcast layers (the issue's ≈150/500/1500 kbit/s) and the audio
    /// reservation (one Opus stream with overhead).
    let layers: [UInt64] = [150_000, 500_000, 1_500_000]
    let audio: UInt64 = 40_000

    /// Runs `selector` every 100 ms over `estimate(t)` from `start` to `end` (µs); returns
    /// (time, target) at every change and the decisions asking for probes.
    private func run(_ selector: inout LayerSelector, from start: Int64 = 0, to end: Int64, maxLayer: Int = 2,
                     estimate: (Int64) -> UInt64) -> (changes: [(Int64, Int?)], probes: [Int64]) {
        var changes: [(Int64, Int?)] = []
        var probes: [Int64] = []
        var now = start
        while now <= end {
            let decision = selector.update(estimateBps: estimate(now), audioBps: audio, layerBitrates: layers, maxLayer: maxLayer, now: now)
            if decision.changed { changes.append((now, decision.target)) }
            if decision.wantsProbe { probes.append(now) }
            now += 100_000
        }
        return (changes, probes)
    }

    /// Estimate shaped like `BandwidthEstimatorTests`' capped run: 2.5 Mbit/s, cap at 5 s
    /// (falls to ~270k within 1 s, then a 255–330k sawtooth), cap lifted at 20 s (doubles every
    /// 1.5 s with probing, up to 2.5M).
    private func cappedTrace(_ t: Int64) -> UInt64 {
        switch t {
        case ..<5_000_000: return 2_500_000
        case ..<6_000_000: return UInt64(2_500_000 - Double(t - 5_000_000) / 1e6 * 2_230_000)
        case ..<20_000_000: return 255_000 + UInt64((t / 100_000) % 20) * 3_750
        default:
            var value = 280_000.0
            for _ in 0..<Int((t - 20_000_000) / 1_500_000) { value *= 2 }
            return UInt64(min(value, 2_500_000))
        }
    }

    func testCapGivesLowLayerWithinFiveSecondsAndHighWithinFifteenAfterLifting() {
        var selector = LayerSelector()
        let (changes, _) = run(&selector, to: 35_000_000, estimate: cappedTrace)
        print("changes (s, layer): \(changes.map { "(\(Double($0.0) / 1e6), \($0.1.map(String.init) ?? "paused"))" }.joined(separator: " "))")
        XCTAssertEqual(changes.first?.1, 2, "starts on the high layer")
        let low = changes.first { $0.0 >= 5_000_000 && $0.1 == 0 }
        XCTAssertNotNil(low)
        XCTAssertLessThanOrEqual(low?.0 ?? .max, 10_000_000, "low layer within 5 s of the cap")
        XCTAssertFalse(changes.contains { $0.1 == nil }, "270k still carries the 150k layer: never paused")
        let high = changes.first { $0.0 >= 20_000_000 && $0.1 == 2 }
        XCTAssertNotNil(high)
        XCTAssertLessThanOrEqual(high?.0 ?? .max, 35_000_000, "high layer within 15 s of lifting")
        XCTAssertEqual(selector.target, 2)
    }

    /// Link flapping every 3 s between 2.2 Mbit/s (high fits with headroom) and 1.3 Mbit/s
    /// (high does not fit, mid does): at most one switch per 4 s cool-down.
    func testFlappingLinkSwitchesAtMostOncePerCoolDown() {
        var selector = LayerSelector()
        let (changes, _) = run(&selector, to: 60_000_000) { t in (t / 3_000_000) % 2 == 0 ? 2_200_000 : 1_300_000 }
        print("flapping changes (s, layer): \(changes.map { "(\(Double($0.0) / 1e6), \($0.1.map(String.init) ?? "-"))" }.joined(separator: " "))")
        XCTAssertGreaterThan(changes.count, 2, "it does follow the link")
        for (a, b) in zip(changes, changes.dropFirst()) {
            XCTAssertGreaterThanOrEqual(b.0 - a.0, selector.config.coolDown, "switch at \(a.0) then \(b.0)")
        }
        XCTAssertFalse(changes.contains { $0.1 == nil })
    }

    func testPausesWhenLowestLayerDoesNotFitAndResumes() {
        var selector = LayerSelector()
        let (changes, _) = run(&selector, to: 20_000_000) { t in
            switch t {
            case ..<3_000_000: return 300_000      // low layer
            case ..<10_000_000: return 150_000     // 110k after audio < 150k: pause
            default: return 400_000                // resume
            }
        }
        XCTAssertEqual(changes.first?.1, 0)
        let pause = changes.first { $0.1 == nil }
        XCTAssertNotNil(pause)
        XCTAssertLessThanOrEqual(pause?.0 ?? .max, 3_500_000, "paused 500 ms after the drop, not held by the cool-down")
        let resume = changes.first { $0.0 >= 10_000_000 && $0.1 == 0 }
        XCTAssertNotNil(resume)
        XCTAssertLessThanOrEqual(resume?.0 ?? .max, 12_000_000, "resumes after the 2 s hold")
    }

    /// A severe shortfall (available < 70 % of the current layer: a capped link) switches at
    /// the first evaluation that sees it — no 500 ms hold, even inside the cool-down — and
    /// marks the decision urgent (the router stops the old layer at once); a mild one waits
    /// the hold and is not urgent.
    func testSevereShortfallSwitchesAtOnceAndUrgently() {
        var selector = LayerSelector()
        XCTAssertEqual(selector.update(estimateBps: 2_500_000, audioBps: audio, layerBitrates: layers, maxLayer: 2, now: 0).target, 2)
        // 1 s later (inside the 4 s cool-down) the estimate falls to 300k: 260k available < 0.7 × 1.5M.
        let severe = selector.update(estimateBps: 300_000, audioBps: audio, layerBitrates: layers, maxLayer: 2, now: 1_000_000)
        XCTAssertTrue(severe.changed)
        XCTAssertEqual(severe.target, 0)
        XCTAssertEqual(severe.reason, .bandwidthDecreased)
        XCTAssertTrue(severe.urgent)

        var mild = LayerSelector()
        XCTAssertEqual(mild.update(estimateBps: 2_500_000, audioBps: audio, layerBitrates: layers, maxLayer: 2, now: 0).target, 2)
        // 1.3M: 1.26M available, short of 1.5M but above 0.7 × 1.5M: waits 500 ms and the cool-down.
        var decisions: [LayerSelector.Decision] = []
        for step in 0...30 { decisions.append(mild.update(estimateBps: 1_300_000, audioBps: audio, layerBitrates: layers, maxLayer: 2, now: 1_000_000 + Int64(step) * 100_000)) }
        let change = decisions.firstIndex { $0.changed }
        XCTAssertEqual(change.map { 1_000_000 + Int64($0) * 100_000 }, 4_000_000, "after the cool-down (the 500 ms hold has passed by then)")
        XCTAssertEqual(change.map { decisions[$0].target }, 1)
        XCTAssertEqual(change.map { decisions[$0].urgent }, false)

        var outside = LayerSelector()
        XCTAssertEqual(outside.update(estimateBps: 2_500_000, audioBps: audio, layerBitrates: layers, maxLayer: 2, now: 0).target, 2)
        let first = outside.update(estimateBps: 1_300_000, audioBps: audio, layerBitrates: layers, maxLayer: 2, now: 10_000_000)
        XCTAssertFalse(first.changed, "a mild shortfall waits the 500 ms hold")
        let held = outside.update(estimateBps: 1_300_000, audioBps: audio, layerBitrates: layers, maxLayer: 2, now: 10_500_000)
        XCTAssertEqual(held.target, 1)
        XCTAssertFalse(held.urgent)
    }

    /// An estimate below the lowest layer + audio pauses the video — unless the subscriber is
    /// acknowledging that much right now (a cut that read low): then the lowest layer stays.
    func testNoPauseWhileTheDeliveredRateCarriesTheLowestLayer() {
        var selector = LayerSelector()
        XCTAssertEqual(selector.update(estimateBps: 2_500_000, audioBps: audio, layerBitrates: layers, maxLayer: 2, now: 0).target, 2)
        let lowest = Double(layers[0])
        // A cut to well under layer 0 + audio while the receiver acknowledges 1.1 × layer 0 + audio.
        let cut = UInt64(0.5 * lowest) + audio
        let carried = UInt64(1.1 * lowest) + audio
        let kept = selector.update(estimateBps: cut, audioBps: audio, layerBitrates: layers, maxLayer: 2, now: 10_000_000, deliveredBps: carried)
        XCTAssertEqual(kept.target, 0, "down to the lowest layer, not paused")
        XCTAssertTrue(kept.changed)
        let stays = selector.update(estimateBps: cut, audioBps: audio, layerBitrates: layers, maxLayer: 2, now: 20_000_000, deliveredBps: carried)
        XCTAssertEqual(stays.target, 0)
        XCTAssertFalse(stays.changed, "and stays there while the deliveries carry it")
        // The deliveries fall below it too (a real cap): paused.
        let paused = selector.update(estimateBps: cut, audioBps: audio, layerBitrates: layers, maxLayer: 2, now: 30_000_000, deliveredBps: UInt64(0.8 * lowest) + audio)
        XCTAssertNil(paused.target)
        XCTAssertEqual(paused.reason, .paused)
        // The lowest layer's 1 s rate is a keyframe burst above its sustained rate, which fits: kept.
        var bursty = LayerSelector()
        _ = bursty.update(estimateBps: 2_500_000, audioBps: audio, layerBitrates: layers, maxLayer: 2, now: 0)
        let estimate = UInt64(0.9 * lowest) + audio
        XCTAssertEqual(bursty.update(estimateBps: estimate, audioBps: audio, layerBitrates: layers, maxLayer: 2, now: 10_000_000,
                                     lowestSustainedBps: UInt64(0.8 * lowest)).target, 0, "not paused")
        // A mild shortfall waits the 500 ms downgrade hold, then pauses when even the sustained rate does not fit.
        _ = bursty.update(estimateBps: estimate, audioBps: audio, layerBitrates: layers, maxLayer: 2, now: 20_000_000,
                          lowestSustainedBps: UInt64(0.95 * lowest))
        XCTAssertNil(bursty.update(estimateBps: estimate, audioBps: audio, layerBitrates: layers, maxLayer: 2, now: 20_600_000,
                                   lowestSustainedBps: UInt64(0.95 * lowest)).target, "paused when even the sustained rate does not fit")
        // Without a delivered rate (no transport-cc): as before, paused at once.
        var plain = LayerSelector()
        _ = plain.update(estimateBps: 2_500_000, audioBps: audio, layerBitrates: layers, maxLayer: 2, now: 0)
        XCTAssertNil(plain.update(estimateBps: cut, audioBps: audio, layerBitrates: layers, maxLayer: 2, now: 10_000_000).target)
    }

    /// A mild dip (the top layer short by < 30 %) for 400 ms is under the 500 ms downgrade
    /// hold. (A severe one switches at once: `testSevereShortfallSwitchesAtOnceAndUrgently`;
    /// the estimator cuts that deep only on a queue or heavy loss, and climbs back at
    /// 8 %/s, so a severe dip that heals within 500 ms does not happen without a probe.)
    /// A subscription that starts before any layer arrives (or whose layers all stopped)
    /// has no layer: when layers arrive the selector decides afresh from the estimate — not
    /// as from a pause, which would wait for an upgrade's headroom and hold while the router
    /// forwards whatever layer comes (its default, the top one).
    func testFirstDecisionWaitsForArrivingLayers() {
        var selector = LayerSelector()
        let early = selector.update(estimateBps: 300_000, audioBps: audio, layerBitrates: [0, 0, 0], maxLayer: 2, now: 0)
        XCTAssertFalse(early.changed)
        XCTAssertNil(early.target)
        let first = selector.update(estimateBps: 300_000, audioBps: audio, layerBitrates: layers, maxLayer: 2, now: 200_000)
        XCTAssertTrue(first.changed)
        XCTAssertEqual(first.target, 0, "300k carries the low layer only")
        XCTAssertEqual(first.reason, .initial)
        let gone = selector.update(estimateBps: 300_000, audioBps: audio, layerBitrates: [0, 0, 0], maxLayer: 2, now: 400_000)
        XCTAssertNil(gone.target)
        XCTAssertEqual(gone.reason, .layerInactive)
        let back = selector.update(estimateBps: 3_000_000, audioBps: audio, layerBitrates: layers, maxLayer: 2, now: 600_000)
        XCTAssertEqual(back.target, 2, "decided afresh: the top layer fits with headroom")
        XCTAssertTrue(back.changed)
        var starved = LayerSelector()
        let paused = starved.update(estimateBps: 100_000, audioBps: audio, layerBitrates: layers, maxLayer: 2, now: 0)
        XCTAssertTrue(paused.changed, "a first decision to pause is applied too")
        XCTAssertNil(paused.target)
        XCTAssertEqual(paused.reason, .paused)
    }

    func testShortDipDoesNotDowngrade() {
        var selector = LayerSelector()
        let (changes, _) = run(&selector, to: 10_000_000) { t in (5_000_000..<5_400_000).contains(t) ? 1_300_000 : 2_500_000 }
        XCTAssertEqual(changes.map(\.1), [2], "a 400 ms dip is under the 500 ms downgrade hold")
    }

    func testMaxLayerAndInactiveLayersSwitchImmediately() {
        var selector = LayerSelector()
        XCTAssertEqual(selector.update(estimateBps: 3_000_000, audioBps: audio, layerBitrates: layers, maxLayer: 2, now: 0).target, 2)
        let capped = selector.update(estimateBps: 3_000_000, audioBps: audio, layerBitrates: layers, maxLayer: 1, now: 100_000)
        XCTAssertEqual(capped.target, 1)
        XCTAssertEqual(capped.reason, .maxLayer)
        let gone = selector.update(estimateBps: 3_000_000, audioBps: audio, layerBitrates: [150_000, 0, 1_500_000], maxLayer: 1, now: 200_000)
        XCTAssertEqual(gone.target, 0, "mid stopped arriving, in cool-down anyway")
        XCTAssertEqual(gone.reason, .layerInactive)
        let none = selector.update(estimateBps: 3_000_000, audioBps: audio, layerBitrates: [0, 0, 0], maxLayer: 2, now: 300_000)
        XCTAssertNil(none.target)
        XCTAssertEqual(none.reason, .layerInactive)
    }

    func testProbeRequestedBeforeUpgradeAndRateLimited() {
        var selector = LayerSelector()
        let (changes, probes) = run(&selector, to: 20_000_000) { _ in 300_000 }
        XCTAssertEqual(changes.map(\.1), [0])
        XCTAssertEqual(probes.count, 4, "1 s after the first switch (inside the cool-down), then every 5 s: \(probes)")
        XCTAssertEqual(probes.first, 1_000_000)
        XCTAssertEqual(probes.dropFirst().first, 6_000_000)
        let decision = selector.update(estimateBps: 300_000, audioBps: audio, layerBitrates: layers, maxLayer: 2, now: 25_000_000)
        XCTAssertTrue(decision.wantsProbe)
        XCTAssertEqual(decision.probeBps, 600_000, "at most 2 × the estimate (the mid layer needs 1.2 × 1.3 × 500k + audio)")
        let near = selector.update(estimateBps: 600_000, audioBps: audio, layerBitrates: layers, maxLayer: 2, now: 25_800_000)
        XCTAssertTrue(near.wantsProbe, "the estimate followed the probe: the next one 0.7 s later, not 5 s")
        XCTAssertEqual(near.probeBps, UInt64(1.2 * 1.3 * 500_000) + audio, "aims above what the mid layer needs")
        var capped = LayerSelector()
        let (_, none) = run(&capped, to: 20_000_000, maxLayer: 0) { _ in 300_000 }
        XCTAssertTrue(none.isEmpty, "no probe when already on the highest allowed layer")
    }

    /// Exponential probing: while each probe succeeds (the estimate follows it) the next
    /// one comes 0.7 s later at up to 2 × the estimate, also for the layer above an upgrade
    /// that waits for its hold; a failed probe waits `probeInterval` (5 s).
    func testSuccessfulProbesStepUpAndFailedOnesBackOff() {
        var selector = LayerSelector()
        var estimate: UInt64 = 300_000
        var probes: [(Int64, UInt64)] = []
        var changes: [(Int64, Int?)] = []
        var now: Int64 = 0
        while now <= 8_000_000 {
            let decision = selector.update(estimateBps: estimate, audioBps: audio, layerBitrates: layers, maxLayer: 2, now: now)
            if decision.changed { changes.append((now, decision.target)) }
            // The link carries anything: the estimate follows each probe 0.4 s later.
            if decision.wantsProbe, let bps = decision.probeBps { probes.append((now, bps)) }
            if let last = probes.last, now - last.0 == 400_000 { estimate = max(estimate, last.1) }
            now += 100_000
        }
        print("probes (s, kbit/s): \(probes.map { "(\(Double($0.0) / 1e6), \($0.1 / 1000))" }), changes \(changes)")
        XCTAssertEqual(probes.map(\.1), [600_000, 820_000, 1_640_000, 2_380_000], "2 × the estimate, capped at the next layer's need")
        XCTAssertEqual(probes.map(\.0), [1_000_000, 1_700_000, 2_400_000, 3_100_000])
        XCTAssertEqual(changes.last?.1, 2, "on the top layer")
        XCTAssertLessThanOrEqual(changes.last?.0 ?? .max, 4_500_000, "within 4.5 s of the start")

        // The link stops following: one failed probe, the next 5 s later.
        var capped = LayerSelector()
        var times: [Int64] = []
        now = 0
        while now <= 12_000_000 {
            let decision = capped.update(estimateBps: 300_000, audioBps: audio, layerBitrates: layers, maxLayer: 2, now: now)
            if decision.wantsProbe { times.append(now) }
            now += 100_000
        }
        XCTAssertEqual(times, [1_000_000, 6_000_000, 11_000_000])

        // An estimate already within 80 % of the next probe's target (1.92M on h, the top layer
        // needing 2.38M) that the probe does not lift: no success, the next probe 5 s later —
        // not every 0.7 s into a full link.
        var near = LayerSelector()
        times = []
        now = 0
        while now <= 12_000_000 {
            let decision = near.update(estimateBps: 1_920_000, audioBps: audio, layerBitrates: layers, maxLayer: 2, now: now)
            if decision.wantsProbe { times.append(now) }
            now += 100_000
        }
        XCTAssertEqual(near.target, 1)
        XCTAssertEqual(times, [1_000_000, 6_000_000, 11_000_000])
    }

    /// A false growing-queue alarm (`LayerSelector.undoUrgentSwitch`): the estimate dips to
    /// 250k for one evaluation (the estimator's provisional cut), the selector switches from
    /// the top layer to layer 0 urgently; the cut is undone 600 ms later and so is the switch
    /// — back on the top layer at once, without charging the cool-down (a real downgrade right
    /// after is still allowed) — but only within `undoWindow` and only for an urgent switch.
    func testUrgentSwitchIsUndoneAfterAFalseAlarm() {
        var selector = LayerSelector()
        _ = run(&selector, to: 10_000_000) { _ in 3_000_000 }
        XCTAssertEqual(selector.target, 2)
        let dip = selector.update(estimateBps: 250_000, audioBps: audio, layerBitrates: layers, maxLayer: 2, now: 10_100_000)
        XCTAssertEqual(dip.target, 0)
        XCTAssertTrue(dip.urgent)
        XCTAssertTrue(selector.inCoolDown(now: 10_200_000))
        XCTAssertEqual(selector.undoUrgentSwitch(now: 10_700_000), 2)
        XCTAssertEqual(selector.target, 2)
        XCTAssertFalse(selector.inCoolDown(now: 10_800_000), "the false alarm's switch does not count")
        XCTAssertNil(selector.undoUrgentSwitch(now: 10_800_000), "once")
        let steady = selector.update(estimateBps: 3_000_000, audioBps: audio, layerBitrates: layers, maxLayer: 2, now: 10_800_000)
        XCTAssertFalse(steady.changed)

        // Too late, or not urgent: nothing to undo.
        let again = selector.update(estimateBps: 250_000, audioBps: audio, layerBitrates: layers, maxLayer: 2, now: 11_000_000)
        XCTAssertTrue(again.urgent)
        XCTAssertNil(selector.undoUrgentSwitch(now: 11_000_000 + LayerSelector.undoWindow + 1))
        XCTAssertEqual(selector.target, 0)
        var mild = LayerSelector()
        _ = run(&mild, to: 10_000_000) { _ in 3_000_000 }
        _ = run(&mild, from: 10_100_000, to: 11_000_000) { _ in 1_300_000 }  // f short by 16 %: a plain 500 ms downgrade
        XCTAssertEqual(mild.target, 1)
        XCTAssertNil(mild.undoUrgentSwitch(now: 11_100_000))
    }

    /// End to end: estimator + selector + a sender that sends what the selector picks (plus
    /// audio) and probes when asked, through a 300 kbit/s cap lifted after 20 s.
    func testEndToEndWithEstimatorAndProbes() throws {
        var config = BandwidthEstimator.Config()
        config.initialBps = 2_000_000
        var trace = CongestionTrace(link: SimulatedLink(capacityBps: 300_000), estimator: BandwidthEstimator(config: config))
        var selector = LayerSelector()
        var sendRate = Double(layers[2] + audio)
        var changes: [(Int64, Int?)] = []
        var now: Int64 = 0
        while now < 35_000_000 {
            now += 100_000
            if now == 20_000_000 { trace.link.capacityBps = 2_500_000 }
            let rate = sendRate
            try trace.run(until: now, sendRate: { _ in rate })
            let decision = selector.update(estimateBps: trace.estimator.estimateBps, audioBps: audio, layerBitrates: layers, maxLayer: 2, now: now)
            if decision.changed { changes.append((now, decision.target)) }
            sendRate = Double((decision.target.map { layers[$0] } ?? 0) + audio)
            if decision.wantsProbe, let probe = decision.probeBps { trace.probe(rateBps: probe) }
        }
        print("end to end changes (s, layer): \(changes.map { "(\(Double($0.0) / 1e6), \($0.1.map(String.init) ?? "paused"))" }.joined(separator: " "))")
        let low = changes.first { $0.1 == 0 }
        XCTAssertLessThanOrEqual(low?.0 ?? .max, 5_000_000, "low layer within 5 s of the cap")
        let high = changes.first { $0.0 >= 20_000_000 && $0.1 == 2 }
        XCTAssertLessThanOrEqual(high?.0 ?? .max, 35_000_000, "high layer within 15 s after lifting")
        XCTAssertFalse(changes.contains { $0.1 == nil }, "never paused")
    }
}

final class BitrateMeterTests: XCTestCase {
    func testSteadyRateAndWindowExpiry() {
        var meter = BitrateMeter()
        XCTAssertEqual(meter.bitrate(now: 0), 0)
        // 500 kbit/s: a 1250-byte packet every 20 ms.
        for index in 0..<150 { meter.add(bytes: 1250, now: Int64(index) * 20_000) }
        XCTAssertEqual(Double(meter.bitrate(now: 3_000_000)), 500_000, accuracy: 60_000)
        XCTAssertEqual(meter.bitrate(now: 4_100_000), 0, "nothing in the last second")
    }

    func testReadAtBucketBoundaryIsNotLow() {
        var meter = BitrateMeter()
        var t: Int64 = 0
        while t <= 2_000_000 { meter.add(bytes: 1250, now: t); t += 20_000 }  // 500 kbit/s, last at 2.0 s
        XCTAssertEqual(Double(meter.bitrate(now: 2_000_000)), 500_000, accuracy: 15_000, "span = covered buckets, not the window")
    }

    func testFirstSecondUsesElapsedTime() {
        var meter = BitrateMeter()
        for index in 0..<10 { meter.add(bytes: 1250, now: 1_000_000 + Int64(index) * 20_000) }
        XCTAssertEqual(Double(meter.bitrate(now: 1_200_000)), 500_000, accuracy: 100_000, "200 ms of a 500k stream is not 100k")
    }

    /// A 150 kbit/s layer (~70 ms frames of 1,300 B) with one 8 kB keyframe burst: the
    /// plain rate reads the burst as ≈ +64 kbit/s for a second; the sustained rate does not.
    func testSustainedRateLeavesOutAKeyframeBurst() {
        var steady = BitrateMeter()
        var burst = BitrateMeter()
        var t: Int64 = 0
        while t < 3_000_000 {
            steady.add(bytes: 1_300, now: t)
            burst.add(bytes: 1_300, now: t)
            t += 70_000
        }
        burst.add(bytes: 8_000, now: 2_610_000)
        let now: Int64 = 3_000_000
        XCTAssertEqual(Double(steady.bitrate(now: now)), 150_000, accuracy: 12_000)
        XCTAssertEqual(Double(steady.sustainedBitrate(now: now)), Double(steady.bitrate(now: now)), accuracy: 20_000, "steady: the same")
        XCTAssertGreaterThan(burst.bitrate(now: now), 200_000, "the burst counts in the plain rate")
        XCTAssertEqual(Double(burst.sustainedBitrate(now: now)), 150_000, accuracy: 20_000, "but not in the sustained one")
        XCTAssertEqual(BitrateMeter().sustainedBitrate(now: now), 0)
    }

    func testRateDropIsSeenWithinTheWindow() {
        var meter = BitrateMeter()
        var t: Int64 = 0
        while t < 3_000_000 { meter.add(bytes: 1250, now: t); t += 10_000 }  // 1 Mbit/s
        while t < 5_000_000 { meter.add(bytes: 1250, now: t); t += 40_000 }  // 250 kbit/s
        XCTAssertEqual(Double(meter.bitrate(now: t)), 250_000, accuracy: 50_000)
    }
}

/// The cool-down budget shared with the router's liveness switches, and the resume hold's backoff.
final class LayerSelectorSharedBudgetTests: XCTestCase {
    func testLivenessSwitchesStartTheCoolDownAndFailedRaisesDoubleTheHold() {
        var first = LayerSelector()
        first.recordSwitch(from: 1, to: 2, layerLost: false, now: 0)
        first.recordSwitch(from: 2, to: 1, layerLost: true, now: 1_000_000)
        XCTAssertEqual(first.resumeHold, first.config.resumeHold, "a first loss after a bandwidth raise is no sign of flapping")
        var selector = LayerSelector()
        let config = selector.config
        XCTAssertFalse(selector.inCoolDown(now: 0))
        selector.recordSwitch(from: 2, to: 1, layerLost: true, now: 1_000_000)
        XCTAssertTrue(selector.inCoolDown(now: 1_000_000 + config.coolDown - 1))
        XCTAssertFalse(selector.inCoolDown(now: 1_000_000 + config.coolDown))
        XCTAssertEqual(selector.resumeHold, config.resumeHold, "a loss without an earlier raise keeps the hold")
        // Raised at 6 s, lost again at 8 s: a failed raise.
        selector.recordSwitch(from: 1, to: 2, layerLost: false, now: 6_000_000)
        selector.recordSwitch(from: 2, to: 1, layerLost: true, now: 8_000_000)
        XCTAssertEqual(selector.resumeHold, 2 * config.resumeHold)
        selector.recordSwitch(from: 2, to: 1, layerLost: true, now: 8_100_000)
        XCTAssertEqual(selector.resumeHold, 2 * config.resumeHold, "the same loss booked twice is judged once")
        for step in 0..<6 {
            let t = Int64(20_000_000 + step * 1_000_000)
            selector.recordSwitch(from: 1, to: 2, layerLost: false, now: t)
            selector.recordSwitch(from: 2, to: 1, layerLost: true, now: t + 500_000)
        }
        XCTAssertEqual(selector.resumeHold, config.maxResumeHold, "bounded")
        // A raise that lasts resets it.
        selector.recordSwitch(from: 1, to: 2, layerLost: false, now: 40_000_000)
        selector.recordSwitch(from: 2, to: 1, layerLost: true, now: 40_000_000 + config.failedRaiseWindow)
        XCTAssertEqual(selector.resumeHold, config.resumeHold)
    }

    func testSelectorSwitchesCountAgainstTheSameBudget() {
        var selector = LayerSelector()
        let layers: [UInt64] = [150_000, 500_000, 1_500_000]
        _ = selector.update(estimateBps: 3_000_000, audioBps: 0, layerBitrates: layers, maxLayer: 2, now: 0)
        XCTAssertEqual(selector.lastSwitch, 0)
        let lost = selector.update(estimateBps: 3_000_000, audioBps: 0, layerBitrates: [150_000, 500_000, 0], maxLayer: 2, now: 10_000_000)
        XCTAssertEqual(lost.reason, .layerInactive)
        XCTAssertEqual(selector.lastSwitch, 10_000_000)
        // Liveness moved it meanwhile (booked): the selector's upgrade waits for that cool-down.
        selector.recordSwitch(from: 1, to: 0, layerLost: true, now: 12_000_000)
        var now: Int64 = 12_000_000
        var upgradedAt: Int64?
        while now < 20_000_000, upgradedAt == nil {
            now += 200_000
            if selector.update(estimateBps: 3_000_000, audioBps: 0, layerBitrates: layers, maxLayer: 2, now: now).changed { upgradedAt = now }
        }
        XCTAssertEqual(upgradedAt, 12_000_000 + selector.config.coolDown)
    }
}
