import RTP
import XCTest
@testable import SFU

/// Issue 4 end to end in the router, with scripted links and feedback (`DownlinkSimulation`):
/// transport-cc feedback → estimate → layer choice → keyframe switch, probes, pause.
final class DownlinkAdaptationTests: XCTestCase {
    func describe(_ subscriber: SimulatedSubscriber) -> String {
        subscriber.targets.map { "\(Double($0.time) / 1e6)s→\($0.target.map(String.init) ?? "paused")" }.joined(separator: " ")
    }

    /// Bob's downlink: 5 Mbit/s, then 300 kbit/s from 20 s, lifted again at 30 s. Carol has
    /// 10 Mbit/s throughout. Layers measure ≈ 150/500/1500 kbit/s.
    func testTransportCCTraceDowngradesOnKeyframeAndProbesBackUp() throws {
        let simulation = try DownlinkSimulation(subscribers: [(bob, 5_000_000, true), (carol, 10_000_000, true)], rtx: [carol])
        let bobSim = simulation.subscriber(bob)
        let carolSim = simulation.subscriber(carol)
        try simulation.run(until: 20_000_000)
        print("bob ramp-up:", describe(bobSim))
        XCTAssertEqual(bobSim.target(at: 20_000_000), 2, "a 5 Mbit/s link reaches the top layer: \(describe(bobSim))")
        let carolTop = try XCTUnwrap(carolSim.targets.last?.time, describe(carolSim))
        XCTAssertEqual(carolSim.targets.last?.target, 2, describe(carolSim))

        // The link drops to 300 kbit/s.
        try simulation.run(until: 30_000_000) { now in if now == 20_000_000 + 5_000 { bobSim.link.capacityBps = 300_000 } }
        let down = try XCTUnwrap(bobSim.targets.first { $0.time > 20_000_000 && $0.target == 0 }, describe(bobSim))
        XCTAssertLessThanOrEqual(down.time - 20_000_000, 5_000_000, "layer 0 within 5 s: \(describe(bobSim))")
        let forwardedLow = try XCTUnwrap(bobSim.switches.first { $0.time > 20_000_000 && $0.to == 0 })
        XCTAssertLessThanOrEqual(forwardedLow.time - 20_000_000, 5_000_000)
        XCTAssertTrue(bobSim.switches.allSatisfy { $0.keyframe }, "every forwarded layer change starts on a keyframe")
        XCTAssertEqual(bobSim.videoSequenceBreaks, 0, "switches keep the outgoing sequence continuous")

        // Cap lifted.
        bobSim.link.capacityBps = 5_000_000
        let lifted = simulation.now
        try simulation.run(until: 46_000_000)
        print("bob after lift:", describe(bobSim))
        let up = try XCTUnwrap(bobSim.targets.first { $0.time > lifted && $0.target == 2 }, describe(bobSim))
        XCTAssertLessThanOrEqual(up.time - lifted, 15_000_000, "back to layer 2 within 15 s")
        let firstUpgrade = try XCTUnwrap(bobSim.targets.first { $0.time > lifted && ($0.target ?? 0) > 0 })
        let probe = try XCTUnwrap(bobSim.paddingTimes.first { $0 > lifted }, "a probe after the lift")
        XCTAssertLessThan(probe, firstUpgrade.time, "probe before the upgrade")
        XCTAssertTrue(bobSim.switches.allSatisfy { $0.keyframe })

        // Carol kept the top layer from the time she reached it.
        XCTAssertTrue(carolSim.targets.filter { $0.time >= carolTop }.allSatisfy { $0.target == 2 }, describe(carolSim))
        XCTAssertLessThan(carolTop, 15_000_000)
        XCTAssertEqual(carolSim.targets.last?.time, carolTop, "no change after reaching the top layer: \(describe(carolSim))")
        // Padding: bob (no RTX) on his video SSRC, carol on her RTX SSRC.
        let bobVideo = try XCTUnwrap(simulation.router.subscriptions(of: bob).first { $0.kind == .video })
        let carolVideo = try XCTUnwrap(simulation.router.subscriptions(of: carol).first { $0.kind == .video })
        XCTAssertEqual(bobSim.paddingSSRCs, [bobVideo.ssrc])
        XCTAssertEqual(carolSim.paddingSSRCs, [carolVideo.rtxSSRC])
        XCTAssertEqual(carolSim.videoSequenceBreaks, 0)
        let stats = try XCTUnwrap(simulation.router.downlinkStats(bob, now: simulation.now))
        print("bob stats:", stats.estimateBps, "probes", stats.probesStarted, "padding", stats.paddingPackets, stats.paddingBytes, "last probe", stats.lastProbeBps ?? 0)
        XCTAssertGreaterThan(stats.probesStarted, 0)
        XCTAssertLessThanOrEqual(stats.paddingBytes, stats.probesStarted * UInt64(Router.probeBudgetBytes) + stats.probesStarted * 300, "probes stay within their byte budget")
        // Each probe is one bounded burst: padding within `probeDuration` of its first packet
        // (padding comes every 20 ms tick while a probe runs; probes are ≥ 0.7 s apart).
        var bursts: [(start: Int64, last: Int64)] = []
        for time in bobSim.paddingTimes + carolSim.paddingTimes.map({ $0 + 1_000_000_000 }) {
            if let current = bursts.last, time - current.last <= 100_000 { bursts[bursts.count - 1].last = time } else { bursts.append((time, time)) }
        }
        XCTAssertEqual(UInt64(bursts.filter { $0.start < 1_000_000_000 }.count), stats.probesStarted)
        XCTAssertTrue(bursts.allSatisfy { $0.last - $0.start <= Router.probeDuration }, "\(bursts)")
        XCTAssertEqual(stats.video.first?.currentLayer, 2)
        XCTAssertEqual(stats.video.first?.targetLayer, 2)
    }

    /// The browser cap test's shape in the router: bob on the top layer, his link drops to
    /// 300 kbit/s behind a 0.8 s tail-drop queue (NetEmu's 30 kB). The delay rise cuts the
    /// estimate, the selector switches to layer 0 at once (severe shortfall) and the router
    /// stops forwarding the top layer at that moment — not until layer 0's keyframe — so the
    /// queue drains while the keyframe comes. The publisher ignores the switch's first
    /// keyframe request; the router asks again (500 ms throttle) while nothing is forwarded.
    func testCapStopsTheTopLayerAtOnceAndSwitchesOnTheKeyframe() throws {
        let simulation = try DownlinkSimulation(subscribers: [(bob, 5_000_000, true), (carol, 10_000_000, true)])
        let bobSim = simulation.subscriber(bob)
        bobSim.link.maxQueueDelay = 800_000
        try simulation.run(until: 20_000_000)
        XCTAssertEqual(bobSim.target(at: 20_000_000), 2, describe(bobSim))
        let capAt: Int64 = 20_005_000
        var estimates: [String] = []
        var ignoredRequest: Int64?
        try simulation.run(until: 26_000_000) { now in
            if now == capAt { bobSim.link.capacityBps = 300_000 }
            // The publisher misses the switch's first keyframe request: the router must ask again.
            if ignoredRequest == nil, now > capAt, simulation.keyframeDue.remove(simulation.layerSSRCs[0]) != nil { ignoredRequest = now }
            if now >= capAt - 5_000, now <= capAt + 1_500_000, now % 100_000 == 0, let stats = simulation.router.downlinkStats(bob, now: now) {
                estimates.append("\(stats.estimateBps / 1000)/\((stats.deliveredBps ?? 0) / 1000)/\(stats.usage)/fb\(stats.transportFeedbacks)")
            }
        }
        print("bob's estimate every 100 ms from the cap:", estimates.joined(separator: " "))
        print("bob under the cap:", describe(bobSim))
        let down = try XCTUnwrap(bobSim.targets.first { $0.time > capAt && $0.target == 0 }, describe(bobSim))
        XCTAssertLessThanOrEqual(down.time - capAt, 1_000_000, "layer 0 chosen within 1 s: \(describe(bobSim))")
        XCTAssertFalse(bobSim.targets.contains { $0.time > capAt && $0.target == nil }, "300k carries layer 0 and audio: never paused")
        let lastTop = bobSim.videoLog.last { $0.layer == 2 }?.time ?? 0
        XCTAssertLessThanOrEqual(lastTop, down.time, "nothing of the top layer after the switch decision")
        let firstLow = try XCTUnwrap(bobSim.switches.first { $0.time > capAt && $0.to == 0 })
        XCTAssertTrue(firstLow.keyframe)
        XCTAssertNotNil(ignoredRequest, "the switch asked for a layer 0 keyframe")
        XCTAssertLessThanOrEqual(firstLow.time - down.time, 800_000, "layer 0 resumes on the repeated request's keyframe (500 ms throttle)")
        XCTAssertEqual(bobSim.videoSequenceBreaks, 0, "the outgoing sequence stays continuous across the gap")
        // The queue built before the switch drains for ≈ 0.5 s; a probe into it would overflow it.
        let padding = bobSim.paddingTimes.filter { $0 > capAt && $0 < capAt + 1_500_000 }
        XCTAssertEqual(padding, [], "no probe padding while the capped queue drains")
        // The queue fills 0.2 s after the cap; feedback every 100 ms (this simulation) shows the
        // growing queue at 0.195 s: at most one top-layer frame (7 packets here) is tail-dropped.
        // Without the probe guard a probe 1.24 s after the cap dropped 9.
        XCTAssertLessThanOrEqual(bobSim.link.drops, 7, "the top layer stopped as the 0.8 s queue filled")
        let stats = try XCTUnwrap(simulation.router.downlinkStats(bob, now: simulation.now))
        print("bob under the cap: \(bobSim.link.drops) tail drops, estimate \(stats.estimateBps), switch \(Double(down.time - capAt) / 1e6) s after the cap, "
            + "top layer stopped \(Double(lastTop - capAt) / 1e6) s, layer 0 keyframe \(Double(firstLow.time - capAt) / 1e6) s")
        XCTAssertEqual(simulation.subscriber(carol).targets.last?.target, 2, "carol keeps the top layer")
    }

    /// Issue 4 failure classes 1 and 2 in the router (BrowserSimulcastCapTests runs 1, 5, 7):
    /// bob joins on a 5 Mbit/s link and ramps up by exponential probing; his link is capped
    /// at 300 kbit/s behind a 0.8 s queue (NetEmu's 30 kB) for 12 s — he gets layer 0 and is
    /// never paused while the queue drains and after (the estimate never falls below what is
    /// delivered) — and after the cap is lifted the estimate reaches 1.7 Mbit/s and the top
    /// layer comes back well within the 15 s.
    func testRampUpCapAndRecoveryByExponentialProbing() throws {
        let simulation = try DownlinkSimulation(subscribers: [(bob, 5_000_000, true), (carol, 10_000_000, true)])
        let bobSim = simulation.subscriber(bob)
        bobSim.link.maxQueueDelay = 800_000
        var estimates: [(time: Int64, bps: UInt64)] = []
        let capAt: Int64 = 10_005_000, liftAt: Int64 = 22_005_000
        try simulation.run(until: 34_000_000) { now in
            if now == capAt { bobSim.link.capacityBps = 300_000 }
            if now == liftAt { bobSim.link.capacityBps = 5_000_000 }
            if now % 100_000 == 0, let stats = simulation.router.downlinkStats(bob, now: now) { estimates.append((now, stats.estimateBps)) }
        }
        print("bob:", describe(bobSim))
        func every(_ step: Int64, from: Int64, to: Int64) -> String {
            estimates.filter { $0.time >= from && $0.time < to && ($0.time - from) % step == 0 }.map { "\($0.bps / 1000)" }.joined(separator: " ")
        }
        print("bob's estimate every 500 ms: join \(every(500_000, from: 0, to: 10_000_000)) | cap \(every(500_000, from: capAt - 5_000, to: liftAt)) | lifted \(every(500_000, from: liftAt - 5_000, to: 34_000_000))")
        let stats = try XCTUnwrap(simulation.router.downlinkStats(bob, now: simulation.now))
        var bursts: [Int64] = []
        var lastPadding: Int64 = .min / 2
        for time in bobSim.paddingTimes {
            if time - lastPadding > 100_000 { bursts.append(time) }
            lastPadding = time
        }
        print("bob: probes \(stats.probesStarted) starting at \(bursts.map { Double($0) / 1e6 }) s, last probe \(stats.lastProbeBps ?? 0), drops \(bobSim.link.drops)")

        let top = try XCTUnwrap(bobSim.targets.first { $0.target == 2 }, describe(bobSim))
        XCTAssertLessThanOrEqual(top.time, 6_000_000, "a new subscriber reaches the top layer within 6 s: \(describe(bobSim))")
        let low = try XCTUnwrap(bobSim.targets.first { $0.time > capAt && $0.target == 0 }, describe(bobSim))
        XCTAssertLessThanOrEqual(low.time - capAt, 1_000_000, describe(bobSim))
        XCTAssertFalse(bobSim.targets.contains { $0.time > capAt && $0.target == nil }, "never paused: \(describe(bobSim))")
        XCTAssertFalse(bobSim.targets.contains { $0.time > low.time && $0.time < liftAt && ($0.target ?? 0) > 0 }, "held layer 0 under the cap")
        let capped = estimates.filter { $0.time >= capAt + 1_000_000 && $0.time < liftAt }.map(\.bps)
        XCTAssertGreaterThanOrEqual(capped.min() ?? 0, 212_000, "never below layer 0 + audio as delivered (≈ 212k incl. headers)")
        let reached = try XCTUnwrap(estimates.first { $0.time > liftAt && $0.bps >= 1_700_000 }, "1.7 Mbit/s after lifting")
        XCTAssertLessThanOrEqual(reached.time - liftAt, 8_000_000, "1.7 Mbit/s within 8 s of lifting")
        let back = try XCTUnwrap(bobSim.targets.first { $0.time > liftAt && $0.target == 2 }, describe(bobSim))
        XCTAssertLessThanOrEqual(back.time - liftAt, 10_000_000, "top layer within 10 s of lifting: \(describe(bobSim))")
        XCTAssertEqual(simulation.subscriber(carol).targets.last?.target, 2, "carol keeps the top layer")
    }

    /// A paused subscriber still probes: bob's link drops to 120 kbit/s (not even layer 0 +
    /// audio fits: video paused), then comes back at 5 Mbit/s. With only audio flowing the
    /// estimate cannot grow past 1.5 × the audio, so without a probe the video would stay
    /// paused; probe padding on his RTX SSRC (the paused media sequence left alone) shows the
    /// bandwidth, and the video resumes within a few seconds.
    func testPausedSubscriberProbesAndResumes() throws {
        let simulation = try DownlinkSimulation(subscribers: [(bob, 5_000_000, true), (carol, 10_000_000, true)], rtx: [bob])
        let bobSim = simulation.subscriber(bob)
        try simulation.run(until: 10_000_000)
        XCTAssertEqual(bobSim.target(at: 10_000_000), 2, describe(bobSim))
        bobSim.link.capacityBps = 120_000
        try simulation.run(until: 20_000_000)
        let paused = try XCTUnwrap(bobSim.targets.first { $0.time > 10_000_000 && $0.target == nil }, "paused under 120k: \(describe(bobSim))")
        bobSim.link.capacityBps = 5_000_000
        let lifted = simulation.now
        try simulation.run(until: 35_000_000)
        print("paused subscriber: \(describe(bobSim)); padding after the lift at \(bobSim.paddingTimes.filter { $0 > lifted }.prefix(1).map { Double($0) / 1e6 })")
        XCTAssertLessThan(paused.time, lifted)
        let resumed = try XCTUnwrap(bobSim.targets.first { $0.time > lifted && $0.target != nil }, "resumed: \(describe(bobSim))")
        XCTAssertLessThanOrEqual(resumed.time - lifted, 8_000_000, "video back within 8 s of the lift: \(describe(bobSim))")
        let bobVideo = try XCTUnwrap(simulation.router.subscriptions(of: bob).first { $0.kind == .video })
        XCTAssertTrue(bobSim.paddingSSRCs.isSubset(of: [bobVideo.rtxSSRC]), "padding only on the RTX SSRC")
        XCTAssertEqual(bobSim.videoSequenceBreaks, 0)
    }
}
