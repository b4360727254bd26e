import RTP
import XCTest
@testable import SFU

/// Issue 4: "a publisher's link flapping every 3 s around a layer threshold does not make
/// subscribers switch more than once per cool-down". The publisher (`DownlinkSimulation`)
/// pauses and resumes its top layer every 3 s, as Chromium does when its send estimate
/// crosses the top layer's need; a resumed layer starts with a keyframe.
final class FlappingPublisherTests: XCTestCase {
    let config = LayerSelector.Config()

    /// What one subscriber went through, sampled at every 5 ms step.
    struct Trace {
        var switchTimes: [Int64] = []          // router stats `layerSwitches` increments
        var lastSwitches: UInt64 = 0
        var reasons: [(Int64, String)] = []    // `lastReason` changes
        var silentForwarded: Int64 = 0         // steps forwarding a layer silent > silence window
        var lastForwarded: Int64?
        var longestGap: Int64 = 0              // longest stretch without forwarded video
    }

    func describe(_ subscriber: SimulatedSubscriber) -> String {
        subscriber.targets.map { "\(Double($0.time) / 1e6)s→\($0.target.map(String.init) ?? "paused")" }.joined(separator: " ")
    }

    /// Bob adapts by bandwidth (transport-cc, 10 Mbit/s), carol has no feedback at all (the
    /// liveness rule alone). Top layer off/on every 3 s from 15 s (off) to 42 s (on: the tenth
    /// toggle), then steady.
    func testTopLayerFlappingEvery3sSwitchesAtMostOncePerCoolDown() throws {
        let simulation = try DownlinkSimulation(subscribers: [(bob, 10_000_000, true), (carol, 10_000_000, false)])
        let topRate = simulation.layerRates[2]
        try simulation.run(until: 14_000_000)
        for id in [bob, carol] {
            XCTAssertEqual(simulation.subscriber(id).targets.last?.target, 2, "warm-up ends on the top layer: \(describe(simulation.subscriber(id)))")
        }
        let flapStart: Int64 = 15_000_000, lastToggle: Int64 = 42_000_000, end: Int64 = 56_000_000
        var topOn = true
        var topOffSince: Int64?
        var traces: [ParticipantID: Trace] = [bob: Trace(), carol: Trace()]
        for id in [bob, carol] {
            traces[id]?.lastSwitches = try XCTUnwrap(simulation.router.subscriptionStats(subscriber: id, publisher: alice, track: TrackID("cam"))).layerSwitches
        }
        try simulation.run(until: end) { now in
            if now >= flapStart, now <= lastToggle, (now - flapStart) % 3_000_000 == 0 {
                topOn.toggle()
                simulation.layerRates[2] = topOn ? topRate : 0
                if topOn {
                    simulation.keyframeDue.insert(simulation.layerSSRCs[2])  // a resumed layer starts on a keyframe
                    topOffSince = nil
                } else {
                    topOffSince = now
                }
            }
            for id in [bob, carol] {
                guard let stats = simulation.router.subscriptionStats(subscriber: id, publisher: alice, track: TrackID("cam")),
                      var trace = traces[id] else { continue }
                if stats.layerSwitches > trace.lastSwitches { trace.switchTimes.append(now) }
                trace.lastSwitches = stats.layerSwitches
                // Stall window (a lower layer keeps arriving) + one tick + the lower layer's keyframe.
                if let off = topOffSince, stats.currentLayer == 2, now - off > Router.layerStall + 100_000 { trace.silentForwarded += 5_000 }
                if let reason = simulation.router.downlinkStats(id, now: now)?.video.first?.lastReason, trace.reasons.last?.1 != reason {
                    trace.reasons.append((now, reason))
                }
                let sim = simulation.subscriber(id)
                if let last = sim.videoTimes.last { trace.lastForwarded = last }
                if now >= flapStart, let last = trace.lastForwarded { trace.longestGap = max(trace.longestGap, now - last) }
                traces[id] = trace
            }
        }
        for id in [bob, carol] {
            let sim = simulation.subscriber(id)
            let trace = try XCTUnwrap(traces[id])
            let name = id == bob ? "bob (bandwidth + liveness)" : "carol (liveness only)"
            let decisions = sim.targets.filter { $0.time >= flapStart }
            print(name, "targets:", describe(sim))
            print(name, "switches (router stats) at", trace.switchTimes.map { Double($0) / 1e6 },
                  "reasons", trace.reasons.map { "\(Double($0.0) / 1e6)s \($0.1)" }, "longest video gap", Double(trace.longestGap) / 1e6, "s")
            // At most once per cool-down: target decisions and forwarded switches.
            for (earlier, later) in zip(decisions, decisions.dropFirst()) {
                XCTAssertGreaterThanOrEqual(later.time - earlier.time, config.coolDown, "\(name): \(describe(sim))")
            }
            // A forwarded switch follows its decision at the next keyframe of the layer (≤ one
            // keyframe request interval here), so their spacing may shrink by that much.
            for (earlier, later) in zip(trace.switchTimes, trace.switchTimes.dropFirst()) {
                XCTAssertGreaterThanOrEqual(later - earlier, config.coolDown - RouterConfig(ssrcSeed: 0).keyframeRequestInterval, "\(name): \(trace.switchTimes)")
            }
            XCTAssertLessThanOrEqual(trace.switchTimes.count, 2, "\(name): down once, up once after the flapping")
            XCTAssertGreaterThanOrEqual(trace.switchTimes.count, 2, "\(name): the flap did move it down, and back up")
            // Never stays on a layer that is not arriving beyond the silence window.
            XCTAssertEqual(trace.silentForwarded, 0, name)
            XCTAssertLessThan(trace.longestGap, Router.layerStall + 200_000, "\(name): video throughout, the freeze bounded by the stall window")
            XCTAssertTrue(sim.switches.allSatisfy { $0.keyframe }, name)
            XCTAssertEqual(sim.videoSequenceBreaks, 0, name)
            // Back on the top layer after the flapping stops, within hold + cool-down.
            let top = try XCTUnwrap(sim.targets.last, name)
            XCTAssertEqual(top.target, 2, "\(name): \(describe(sim))")
            XCTAssertLessThanOrEqual(top.time - lastToggle, config.resumeHold + config.coolDown, "\(name): \(describe(sim))")
            let stats = try XCTUnwrap(simulation.router.subscriptionStats(subscriber: id, publisher: alice, track: TrackID("cam")))
            XCTAssertEqual(stats.currentLayer, 2, name)
        }
    }

    /// A slower flap (5 s on, 3 s off): the first return outlives the 4 s hold, so the
    /// subscriber goes up and is forced down 2 s later — a failed raise, which doubles the
    /// hold to 8 s; from then on the 5 s on-phases no longer lure it up.
    func testFailedRaiseDoublesTheHold() throws {
        let simulation = try DownlinkSimulation(subscribers: [(carol, 10_000_000, false)])
        let topRate = simulation.layerRates[2]
        try simulation.run(until: 5_000_000)
        var raises: [Int64] = []
        var lastTarget = simulation.subscriber(carol).targets.last?.target
        try simulation.run(until: 60_000_000) { now in
            if now >= 5_000_000, now < 50_000_000 {
                let phase = (now - 5_000_000) % 8_000_000   // off 3 s, then on 5 s
                if phase == 0 { simulation.layerRates[2] = 0 }
                if phase == 3_000_000 {
                    simulation.layerRates[2] = topRate
                    simulation.keyframeDue.insert(simulation.layerSSRCs[2])
                }
            }
            let target = simulation.subscriber(carol).targets.last?.target
            if let target, let before = lastTarget ?? nil, target > before { raises.append(now) }
            lastTarget = target
        }
        let sim = simulation.subscriber(carol)
        print("slow flap targets:", describe(sim), "raises at", raises.map { Double($0) / 1e6 })
        let duringFlap = raises.filter { $0 < 50_000_000 }
        XCTAssertEqual(duringFlap.count, 1, "one failed raise, then the doubled hold keeps it down: \(describe(sim))")
        XCTAssertEqual(sim.targets.last?.target, 2, "back up once the layer stays: \(describe(sim))")
    }

    /// On-phases of 3.5 s: the layer is still "arriving" (silence window 1 s) 0.5 s after it
    /// stopped, when its 4 s hold would end. Only fresh packets count for the hold, so the
    /// subscriber is never raised to a layer that has in fact stopped (seen end to end
    /// before `layerFreshness`: a raise undone 0.6 s later).
    func testHoldEndingOnStalePacketsDoesNotRaise() throws {
        let simulation = try DownlinkSimulation(subscribers: [(carol, 10_000_000, false)])
        let topRate = simulation.layerRates[2]
        try simulation.run(until: 5_000_000)
        var raisedWhileSilent = 0
        var raises = 0
        var lastTarget = simulation.subscriber(carol).targets.last?.target
        var topOffSince: Int64?
        try simulation.run(until: 40_000_000) { now in
            if now >= 5_000_000, now < 40_000_000 {
                let phase = (now - 5_000_000) % 6_500_000   // off 3 s, then on 3.5 s
                if phase == 0 {
                    simulation.layerRates[2] = 0
                    topOffSince = now
                }
                if phase == 3_000_000 {
                    simulation.layerRates[2] = topRate
                    simulation.keyframeDue.insert(simulation.layerSSRCs[2])
                    topOffSince = nil
                }
            }
            let target = simulation.subscriber(carol).targets.last?.target
            if let target, let before = lastTarget ?? nil, target > before {
                raises += 1
                if topOffSince != nil { raisedWhileSilent += 1 }
            }
            lastTarget = target
        }
        print("3.5 s on-phases:", describe(simulation.subscriber(carol)))
        XCTAssertEqual(raisedWhileSilent, 0, describe(simulation.subscriber(carol)))
        XCTAssertEqual(raises, 0, "no on-phase outlasts the hold: \(describe(simulation.subscriber(carol)))")
    }
}
