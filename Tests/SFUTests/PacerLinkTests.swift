import RTP
import XCTest
@testable import SFU

/// Router + pacer in front of a 300 kbit/s bottleneck with a 30 kB drop-tail queue (the
/// `BrowserSimulcastCapTests` relay: `RateCap` 300 kbit/s, 30,000 bytes; `SimulatedLink`
/// models it with an 800 ms queue-delay limit, 30 kB at that rate). The publisher sends
/// 150 kbit/s of delta frames (the low layer the capped subscriber gets) and, at 1 s, a
/// 50 kB keyframe (42 × 1,200 B: the top-layer keyframe of an up-switch). Without the pacer
/// the keyframe reaches the link within a millisecond and its tail is dropped; paced at
/// 2.5 × the estimate it arrives spread over ≈ 0.6 s while the link drains.
final class PacerLinkTests: XCTestCase {
    struct Outcome {
        var linkDrops = 0
        var keyframeDrops = 0
        var pacerDrops = 0
        var maxQueued = 0
    }

    func run(estimate: UInt64?, factor: Double = 2.5) throws -> Outcome {
        let router = makeRouter()
        try router.join(alice, room: room, description: receiver("a"), now: 0)
        try router.join(bob, room: room, description: receiver("b"), now: 0)
        try router.publish(alice, track: videoTrack("cam", layers: [StreamDescription(ssrc: 0x51)]), now: 0)
        var config = PacerConfig()
        config.pacingFactor = factor
        let pacer = Pacer(config: config)
        pacer.setEstimate(bob, bps: estimate, now: 0)
        var link = SimulatedLink(capacityBps: 300_000)
        link.maxQueueDelay = 800_000
        var batch = ForwardingBatch(capacity: 4)
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 2_048, alignment: 16)
        defer { scratch.deallocate() }
        var outcome = Outcome()
        let bigFrame = 30
        func transmit(_ size: Int, timestamp: UInt32, now: Int64) {
            guard link.send(size: size, now: now) == nil else { return }
            outcome.linkDrops += 1
            if timestamp == UInt32(bigFrame * 3_000) { outcome.keyframeDrops += 1 }
        }
        var sequence: UInt16 = 0
        var nextRelease: Int64 = 0
        for frame in 0..<90 {
            let now = Int64(frame) * 33_333
            while nextRelease <= now {
                let at = nextRelease
                pacer.release(now: at) { packet in
                    let timestamp = UnsafeRawBufferPointer(rebasing: packet.bytes[4..<8]).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
                    transmit(packet.length, timestamp: timestamp, now: at)
                }
                nextRelease += pacer.config.processInterval
            }
            let keyframe = frame == 0 || frame == bigFrame
            let count = frame == bigFrame ? 42 : frame == 0 ? 3 : 1
            for index in 0..<count {
                let head = index == 0 ? (keyframe ? vp8Keyframe : vp8Delta) : vp8Continuation
                let size = keyframe ? 1_170 : 600
                let packet = rtpPacket(ssrc: 0x51, seq: sequence, ts: UInt32(frame * 3_000), pt: 96,
                                       payload: head + [UInt8](repeating: 0x5A, count: size - head.count))
                sequence &+= 1
                packet.withUnsafeBytes { _ = router.handleRTP(from: alice, packet: $0, now: now, into: &batch) }
                for decision in 0..<batch.count where batch[decision].subscriber == bob {
                    let forward = batch[decision]
                    let written = try batch.write(decision, into: scratch, transportSequenceNumber: pacer.transportSequence(of: bob))
                    switch pacer.admit(bob, .video, packet: UnsafeRawBufferPointer(rebasing: scratch[0..<written]), frameSSRC: forward.ssrc,
                                       frameTimestamp: forward.timestamp, transportCCID: forward.extensions.transportCC, now: now) {
                    case .sendNow: transmit(written, timestamp: forward.timestamp, now: now)
                    case .queued: outcome.maxQueued = max(outcome.maxQueued, pacer.queued(bob).bytes)
                    case .dropped: outcome.pacerDrops += 1
                    }
                }
            }
        }
        XCTAssertNotEqual(sequence, 0)
        return outcome
    }

    func testPacedKeyframeBurstLosesLessAtARateCappedLink() throws {
        let unpaced = try run(estimate: nil)
        let atCapacity = try run(estimate: 300_000)
        // GCC backs off to β = 0.85 of what it measured when the queue builds.
        let belowCapacity = try run(estimate: 255_000)
        print("""
            pacer vs 300 kbit/s link, 30 kB queue, 50 kB keyframe: tail drops unpaced \(unpaced.linkDrops) \
            (keyframe \(unpaced.keyframeDrops)); paced at 2.5 × 300 kbit/s \(atCapacity.linkDrops) (keyframe \(atCapacity.keyframeDrops), \
            peak pacer queue \(atCapacity.maxQueued) B); paced at 2.5 × 255 kbit/s \(belowCapacity.linkDrops) \
            (keyframe \(belowCapacity.keyframeDrops), peak pacer queue \(belowCapacity.maxQueued) B)
            """)
        // For comparison (not libwebrtc's factor): paced at the estimate itself.
        let atEstimate = try run(estimate: 255_000, factor: 1)
        print("pacer: paced at 1 × 255 kbit/s instead: tail drops \(atEstimate.linkDrops), peak pacer queue \(atEstimate.maxQueued) B")
        XCTAssertGreaterThan(unpaced.keyframeDrops, 10, "the unpaced burst overflows the queue")
        // Paced, the keyframe arrives (almost) whole; what the link cannot carry is lost later,
        // from the small delta frames behind it (one packet each: cheap to repair by NACK).
        XCTAssertLessThan(atCapacity.linkDrops, unpaced.linkDrops)
        XCTAssertLessThanOrEqual(atCapacity.keyframeDrops, unpaced.keyframeDrops / 4)
        XCTAssertLessThan(belowCapacity.linkDrops, atCapacity.linkDrops)
        XCTAssertEqual(belowCapacity.keyframeDrops, 0)
        XCTAssertEqual(atCapacity.pacerDrops + belowCapacity.pacerDrops, 0, "the pool is far from full")
        XCTAssertGreaterThan(atCapacity.maxQueued, 20_000, "the burst waited in the pacer, not in the link")
    }
}
