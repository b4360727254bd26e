import RTP
import XCTest
@testable import SFU

/// REMB paths, flapping, pause and the subscriber's maximum (issue 4), with scripted REMB
/// traces through `DownlinkSimulation`.
final class DownlinkControlTests: XCTestCase {
    func describe(_ subscriber: SimulatedSubscriber) -> String {
        subscriber.targets.map { "\(Double($0.time) / 1e6)s→\($0.target.map(String.init) ?? "paused")" }.joined(separator: " ")
    }

    /// A REMB trace that flaps every 3 s between room for layer 2 (2.6 Mbit/s) and only
    /// layer 1 (1.2 Mbit/s, not a severe shortfall) switches at most once per cool-down.
    func testFlappingTraceSwitchesAtMostOncePerCoolDown() throws {
        let simulation = try DownlinkSimulation(subscribers: [(bob, 20_000_000, false)])
        let bobSim = simulation.subscriber(bob)
        bobSim.remb = { now in (now / 3_000_000) % 2 == 0 ? 2_600_000 : 1_200_000 }
        try simulation.run(until: 40_000_000)
        print("flapping:", describe(bobSim))
        // Decisions made by the selector (the first entry is the slot's default before any).
        let decided = bobSim.targets.dropFirst()
        XCTAssertGreaterThanOrEqual(decided.count, 3, "the trace does move the layer: \(describe(bobSim))")
        let coolDown = LayerSelector.Config().coolDown
        for (previous, next) in zip(decided, decided.dropFirst()) {
            XCTAssertGreaterThanOrEqual(next.time - previous.time, coolDown, describe(bobSim))
        }
        XCTAssertLessThanOrEqual(decided.count, 1 + Int(40_000_000 / coolDown))
        XCTAssertTrue(bobSim.switches.allSatisfy { $0.keyframe })
        XCTAssertEqual(bobSim.videoSequenceBreaks, 0)
    }

    /// REMB-only subscriber: its REMB is the estimate. Below the lowest layer plus audio the
    /// video pauses while audio keeps flowing; it resumes on a keyframe without a sequence
    /// gap. Its REMB never reaches the publisher.
    func testREMBOnlySubscriberPausesVideoBeforeAudioAndResumes() throws {
        let simulation = try DownlinkSimulation(subscribers: [(bob, 20_000_000, false), (carol, 20_000_000, false)])
        let bobSim = simulation.subscriber(bob)
        bobSim.remb = { now in now < 6_000_000 || now >= 12_000_000 ? 3_000_000 : 100_000 }
        simulation.subscriber(carol).remb = { _ in 3_000_000 }
        try simulation.run(until: 6_000_000)
        XCTAssertEqual(bobSim.target(at: 6_000_000), 2, describe(bobSim))
        try simulation.run(until: 11_900_000)
        let pause = try XCTUnwrap(bobSim.targets.first { $0.time > 6_000_000 && $0.target == nil }, describe(bobSim))
        XCTAssertLessThanOrEqual(pause.time - 6_000_000, 1_000_000, "paused after the 500 ms hold")
        let pausedWindow = (pause.time + 100_000)..<11_900_000
        XCTAssertEqual(bobSim.videoTimes.filter { pausedWindow.contains($0) }.count, 0, "no video while paused")
        let audio = bobSim.audioTimes.filter { pausedWindow.contains($0) }.count
        XCTAssertGreaterThanOrEqual(audio, Int((pausedWindow.upperBound - pausedWindow.lowerBound) / 20_000) - 1, "audio keeps flowing")
        var stats = try XCTUnwrap(simulation.router.downlinkStats(bob, now: simulation.now))
        XCTAssertEqual(stats.video.first?.paused, true)
        XCTAssertEqual(stats.video.first?.lastReason, "paused")
        XCTAssertEqual(stats.rembBps, 100_000)
        let subscription = try XCTUnwrap(simulation.router.subscriptionStats(subscriber: bob, publisher: alice, track: TrackID("cam")))
        XCTAssertTrue(subscription.paused)
        XCTAssertGreaterThan(subscription.droppedPaused, 0)
        // Carol, same publisher, unaffected.
        XCTAssertEqual(simulation.subscriber(carol).targets.last?.target, 2)

        try simulation.run(until: 20_000_000)
        let resumed = try XCTUnwrap(bobSim.targets.first { $0.time > 12_000_000 && $0.target != nil }, describe(bobSim))
        XCTAssertLessThanOrEqual(resumed.time - 12_000_000, 5_000_000)
        XCTAssertTrue(bobSim.videoTimes.contains { $0 > resumed.time }, "video flows again")
        XCTAssertTrue(bobSim.switches.allSatisfy { $0.keyframe })
        XCTAssertEqual(bobSim.videoSequenceBreaks, 0, "no sequence gap across the pause")
        stats = try XCTUnwrap(simulation.router.downlinkStats(bob, now: simulation.now))
        XCTAssertEqual(stats.video.first?.paused, false)
        XCTAssertEqual(stats.rembReceived, 40)
        // The SFU terminates subscribers' REMB; alice (transport-cc) gets none of its own either.
        XCTAssertFalse(simulation.toPublisher.contains { if case .remb = $0 { true } else { false } })
    }

    /// A publisher without transport-cc that accepts REMB gets one per report interval with
    /// the receive-side estimate, laid out as draft-alvestrand-rmcat-remb-03 §2.2.
    func testREMBGeneratedForREMBOnlyPublisher() throws {
        var ids = publisherExtensions
        ids.transportCC = 0
        let track = TrackDescription(id: TrackID("cam"), kind: .video, codecs: [vp8Publish],
                                     layers: [0x10, 0x20, 0x30].map { StreamDescription(ssrc: $0) }, extensions: ids, acceptsREMB: true)
        let simulation = try DownlinkSimulation(subscribers: [(bob, 20_000_000, true)], publisher: track)
        try simulation.run(until: 5_050_000)
        let rembs = simulation.toPublisher.compactMap { packet -> RTCPReceiverEstimatedMaxBitrate? in
            if case .remb(let remb) = packet { remb } else { nil }
        }
        XCTAssertEqual(rembs.count, 5, "one per 1 s report interval")
        let remb = try XCTUnwrap(rembs.last)
        // No loss: grows 8 %/s from the first REMB up to 1.5 × what arrives (+ 10 kbit/s);
        // audio ≈ 112 bytes per 20 ms.
        let layers = try XCTUnwrap(simulation.router.downlinkStats(bob, now: simulation.now)?.video.first?.layerBitrates)
        let incoming = Double(layers.reduce(0, +)) + 112 * 8 * 50
        XCTAssertEqual(Double(remb.bitrate), 1.5 * incoming + 10_000, accuracy: 0.05 * incoming)
        XCTAssertEqual(remb.ssrcs, [0xA1, 0x10, 0x20, 0x30])

        let bytes = try RTCPCompound.serialize([.remb(remb)])
        XCTAssertEqual(bytes.count, 20 + 4 * 4)
        XCTAssertEqual(bytes[0], 0x8F, "V=2, P=0, FMT=15")
        XCTAssertEqual(bytes[1], 206, "PT=PSFB")
        XCTAssertEqual(Int(bytes[2]) << 8 | Int(bytes[3]), bytes.count / 4 - 1)
        func be32(_ at: Int) -> UInt32 { bytes[at..<(at + 4)].reduce(0) { $0 << 8 | UInt32($1) } }
        XCTAssertEqual(be32(4), remb.senderSSRC)
        XCTAssertEqual(be32(8), 0, "media source SSRC is 0")
        XCTAssertEqual(Array(bytes[12..<16]), Array("REMB".utf8))
        XCTAssertEqual(bytes[16], 4, "Num SSRC")
        let exponent = UInt64(bytes[17] >> 2)
        let mantissa = UInt64(bytes[17] & 0x03) << 16 | UInt64(bytes[18]) << 8 | UInt64(bytes[19])
        XCTAssertEqual(Double(mantissa << exponent), Double(remb.bitrate), accuracy: Double(remb.bitrate) / 100_000)
        XCTAssertEqual([be32(20), be32(24), be32(28), be32(32)], [0xA1, 0x10, 0x20, 0x30])
    }

    /// A subscriber with neither transport-cc nor REMB: its receiver reports' fraction lost
    /// drives the loss-based estimate (GCC §6), down to a pause under persistent 25 % loss,
    /// with audio still forwarded.
    func testReceiverReportLossDrivesASubscriberWithoutTransportCC() throws {
        let simulation = try DownlinkSimulation(subscribers: [(bob, 20_000_000, false)])
        let bobSim = simulation.subscriber(bob)
        try simulation.run(until: 3_000_000)
        XCTAssertEqual(bobSim.targets.count, 1, "no signal yet: no adaptation, \(describe(bobSim))")
        bobSim.reportLoss = { _ in 64 }
        try simulation.run(until: 20_000_000)
        print("rr loss:", describe(bobSim))
        let stats = try XCTUnwrap(simulation.router.downlinkStats(bob, now: simulation.now))
        XCTAssertEqual(stats.lossRatio, 0.25)
        XCTAssertLessThan(stats.estimateBps, 150_000)
        XCTAssertEqual(bobSim.targets.last?.target, nil, "paused: \(describe(bobSim))")
        XCTAssertTrue(bobSim.targets.contains { $0.target == 0 }, "layer 0 before the pause")
        XCTAssertTrue(bobSim.audioTimes.contains { $0 > 19_000_000 })
    }

    /// The subscriber's rendered size caps the layer (sizes learned from VP8 keyframes):
    /// 640×360 stops at layer 1 on a link that would carry layer 2, 300×160 at layer 0.
    func testSetMaxSizeStopsAtTheCoveringLayer() throws {
        let simulation = try DownlinkSimulation(subscribers: [(bob, 20_000_000, false)])
        let bobSim = simulation.subscriber(bob)
        bobSim.remb = { _ in 5_000_000 }
        try simulation.router.setMaxSize(subscriber: bob, publisher: alice, track: TrackID("cam"), width: 640, height: 360)
        try simulation.run(until: 6_000_000)
        XCTAssertEqual(bobSim.targets.last?.target, 1, describe(bobSim))
        var stats = try XCTUnwrap(simulation.router.downlinkStats(bob, now: simulation.now)?.video.first)
        XCTAssertEqual(stats.layerSizes, [LayerSize(width: 320, height: 180), LayerSize(width: 640, height: 360), LayerSize(width: 1280, height: 720)])
        XCTAssertEqual(stats.maxWidth, 640)
        try simulation.router.setMaxSize(subscriber: bob, publisher: alice, track: TrackID("cam"), width: 300, height: 160)
        try simulation.run(until: 7_000_000)
        XCTAssertEqual(bobSim.targets.last?.target, 0, describe(bobSim))
        stats = try XCTUnwrap(simulation.router.downlinkStats(bob, now: simulation.now)?.video.first)
        XCTAssertEqual(stats.lastReason, "maxLayer")
        XCTAssertThrowsError(try simulation.router.setMaxSize(subscriber: bob, publisher: alice, track: TrackID("cam"), width: 0, height: 10)) {
            XCTAssertEqual($0 as? SFUError, .badSize)
        }
    }

    func testVP8KeyframeSizePerRFC6386() {
        func size(_ bytes: [UInt8]) -> (Int, Int)? {
            bytes.withUnsafeBytes { KeyframeDetector.vp8KeyframeSize($0).map { ($0.width, $0.height) } }
        }
        XCTAssertTrue(size(vp8Keyframe((1280, 720)))! == (1280, 720))
        // Extended descriptor (X, I with a 15-bit picture id), and scaling bits set (ignored).
        let extended: [UInt8] = [0x90, 0x80, 0x81, 0x23, 0x00, 0x00, 0x00, 0x9D, 0x01, 0x2A, 0x80, 0x47, 0x68, 0xC2]
        XCTAssertTrue(size(extended)! == (0x0780, 0x0268))
        XCTAssertNil(size([0x10, 0x01, 0x00, 0x00, 0x9D, 0x01, 0x2A, 0, 5, 0, 5]), "delta frame")
        XCTAssertNil(size([0x10, 0x00, 0x00, 0x00, 0x9D, 0x01, 0x2B, 0, 5, 0, 5]), "bad start code")
        XCTAssertNil(size([0x10, 0x00, 0x00, 0x00, 0x9D, 0x01, 0x2A, 0, 5]), "truncated")
    }

    func testReceiveSideEstimateFollowsLoss() {
        var estimate = ReceiveSideEstimate()
        XCTAssertEqual(estimate.update(incomingBps: 1_000_000, fractionLost: 0, now: 0), 1_510_000, "1.5 × incoming + 10 kbit/s")
        XCTAssertEqual(estimate.update(incomingBps: 1_000_000, fractionLost: 0.05, now: 1_000_000), 1_510_000, "hold between 2 and 10 %")
        XCTAssertEqual(estimate.update(incomingBps: 1_000_000, fractionLost: 0.2, now: 2_000_000), 900_000, "× (1 − loss/2)")
        XCTAssertEqual(estimate.update(incomingBps: 900_000, fractionLost: 0, now: 3_000_000), 972_000, "+8 %/s after loss")
        XCTAssertEqual(estimate.update(incomingBps: 10_000, fractionLost: 0.5, now: 4_000_000), 30_000, "floor")
    }

    /// A good link reaches layer 2; the subscriber's maximum then applies at once, and
    /// lifting it lets the selection climb again.
    func testSetMaxLayerCapsTheSelection() throws {
        let simulation = try DownlinkSimulation(subscribers: [(bob, 10_000_000, true)])
        let bobSim = simulation.subscriber(bob)
        try simulation.run(until: 16_000_000)
        XCTAssertEqual(bobSim.target(at: 16_000_000), 2, describe(bobSim))
        try simulation.router.setMaxLayer(subscriber: bob, publisher: alice, track: TrackID("cam"), layer: 0)
        try simulation.run(until: 17_000_000)
        XCTAssertEqual(bobSim.target(at: 17_000_000), 0, describe(bobSim))
        let stats = try XCTUnwrap(simulation.router.downlinkStats(bob, now: simulation.now)?.video.first)
        XCTAssertEqual(stats.lastReason, "maxLayer")
        XCTAssertEqual(stats.maxLayer, 0)
        XCTAssertEqual(stats.currentLayer, 0, "switched on the keyframe the change asked for")
        XCTAssertThrowsError(try simulation.router.setMaxLayer(subscriber: bob, publisher: alice, track: TrackID("cam"), layer: -1))
        try simulation.router.setMaxLayer(subscriber: bob, publisher: alice, track: TrackID("cam"), layer: 2)
        try simulation.run(until: 30_000_000)
        XCTAssertEqual(bobSim.target(at: 30_000_000), 2, describe(bobSim))
    }
}
