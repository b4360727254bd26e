import XCTest
@testable import SFU

/// The pacer's counters per lane and per worker (docs/stats.md, "Pacer"), with `now` passed in.
final class PacerStatsTests: XCTestCase {
    /// 12 × 1,200 B at once on a lane paced at 2.5 × 300 kbit/s: the 40 ms burst budget
    /// (3,750 B) lets four leave, eight queue; the queue's age grows with `now`; releases
    /// count and the longest wait is kept, on the lane and on the worker.
    func testLaneCountsSentQueuedReleasedAndQueueAge() throws {
        let driver = PacerDriver()
        for seq in 0..<12 { driver.offer(.video, ssrc: 0xA, seq: UInt16(seq), ts: 9_000, size: 1_200, now: 1_000) }
        let atOnce = try XCTUnwrap(driver.pacer.laneStats(driver.lane, now: 1_000))
        XCTAssertEqual(atOnce.counters.sentAtOnce, 4)
        XCTAssertEqual(atOnce.counters.queued, 8)
        XCTAssertEqual(atOnce.queuedPackets, 8)
        XCTAssertEqual(atOnce.queuedBytes, 8 * 1_200)
        XCTAssertEqual(atOnce.rateBps, 750_000)
        XCTAssertEqual(atOnce.queueAge, 0)
        XCTAssertEqual(driver.pacer.laneStats(driver.lane, now: 31_000)?.queueAge, 30_000, "the oldest has waited 30 ms")

        driver.run(from: 5_000)
        let drained = try XCTUnwrap(driver.pacer.laneStats(driver.lane, now: 1_000_000))
        XCTAssertEqual(drained.counters.released, 8)
        XCTAssertEqual(drained.queuedPackets, 0)
        XCTAssertEqual(drained.queueAge, 0, "nothing waits")
        let lastEgress = try XCTUnwrap(driver.egress.last?.time)
        XCTAssertEqual(drained.counters.maxQueueTime, lastEgress - 1_000, "the last one waited longest")
        XCTAssertEqual(driver.pacer.stats.maxQueueTime, drained.counters.maxQueueTime)
        XCTAssertEqual(driver.pacer.stats.released, 8)
        XCTAssertEqual(driver.pacer.stats.sentAtOnce, 4)
    }

    /// Two lanes: each counts only its own packets; the worker's counters are their sum
    /// (`PacerStats.+`, the same sum the worker pool makes).
    func testWorkerCountersAreTheSumOfTheLanes() throws {
        let pacer = Pacer()
        let alice = ParticipantID(1), bob = ParticipantID(2)
        pacer.setEstimate(alice, bps: 300_000, now: 0)
        pacer.setEstimate(bob, bps: nil, now: 0)  // unpaced: everything at once
        for (lane, count) in [(alice, 10), (bob, 7)] {
            for seq in 0..<count {
                let bytes = pacerPacket(ssrc: 0xA, seq: UInt16(seq), ts: 1, size: 1_000, transport: pacer.transportSequence(of: lane))
                _ = bytes.withUnsafeBytes { pacer.admit(lane, .video, packet: $0, frameSSRC: 0xA, frameTimestamp: 1, transportCCID: 3, now: 0) }
            }
        }
        _ = pacer.takeTransportSequence(bob)
        let a = try XCTUnwrap(pacer.laneStats(alice, now: 0)).counters
        let b = try XCTUnwrap(pacer.laneStats(bob, now: 0)).counters
        XCTAssertEqual(a.sentAtOnce, 4)  // 3,750 B budget: 4 × 1,000 B (the 4th starts below it)
        XCTAssertEqual(a.queued, 6)
        XCTAssertEqual(b.sentAtOnce, 7)
        XCTAssertEqual(b.queued, 0)
        XCTAssertEqual(b.probePackets, 1)
        XCTAssertEqual(a.probePackets, 0)
        XCTAssertEqual(a + b, pacer.stats)
        XCTAssertNil(pacer.laneStats(ParticipantID(9), now: 0), "a lane never used")
    }

    /// Each drop cause counted apart: a lane at `maxPacketsPerLane`, a pool without a free
    /// slot, a packet larger than a slot; retransmissions dropped alone.
    func testDroppedFramesByCause() throws {
        var config = PacerConfig()
        config.slotCount = 6
        config.maxPacketsPerLane = 4
        config.slotSize = 1_300
        let pacer = Pacer(config: config)
        let alice = ParticipantID(1), bob = ParticipantID(2)
        for lane in [alice, bob] { pacer.setEstimate(lane, bps: 30_000, now: 0) }  // 75 kbit/s floor: 1,200 B budget, one packet
        func offer(_ lane: ParticipantID, _ packetClass: PacketClass = .video, ts: UInt32, size: Int = 1_200) -> PacerAdmission {
            let bytes = pacerPacket(ssrc: 0xA, seq: 0, ts: ts, size: size, transport: pacer.transportSequence(of: lane))
            return bytes.withUnsafeBytes {
                pacer.admit(lane, packetClass, packet: $0, frameSSRC: 0xA, frameTimestamp: ts, transportCCID: 3, now: 0)
            }
        }
        XCTAssertEqual(offer(alice, ts: 1), .sendNow)
        for ts: UInt32 in 2...5 { XCTAssertEqual(offer(alice, ts: ts), .queued) }
        XCTAssertEqual(offer(alice, ts: 6), .dropped, "lane full at 4")
        XCTAssertEqual(offer(alice, .retransmission, ts: 0), .dropped, "a resend finds the lane full too")
        XCTAssertEqual(offer(bob, ts: 1), .sendNow)
        XCTAssertEqual(offer(bob, ts: 2), .queued)
        XCTAssertEqual(offer(bob, ts: 3), .queued)
        XCTAssertEqual(offer(bob, ts: 4), .dropped, "pool of 6 full (4 + 2)")
        XCTAssertEqual(offer(bob, ts: 5, size: 1_250), .dropped, "1,250 + 64 trailer > 1,300")

        let a = try XCTUnwrap(pacer.laneStats(alice, now: 0)).counters
        let b = try XCTUnwrap(pacer.laneStats(bob, now: 0)).counters
        XCTAssertEqual([a.droppedFramesLaneFull, a.droppedFramesPoolFull, a.droppedFramesOversized, a.droppedFrames], [1, 0, 0, 1])
        XCTAssertEqual(a.droppedRetransmissions, 1)
        XCTAssertEqual([b.droppedFramesLaneFull, b.droppedFramesPoolFull, b.droppedFramesOversized, b.droppedFrames], [0, 1, 1, 2])
        XCTAssertEqual(b.keyframeRequests, 1, "one pending request per lane and stream")
        XCTAssertEqual(pacer.stats.droppedFrames, 3)
        XCTAssertEqual(pacer.stats, a + b)
    }

    /// A lane whose participant left starts from zero for the next participant with its id;
    /// the worker's counters keep what it did.
    func testRemovedLaneStartsFromZero() throws {
        let driver = PacerDriver()
        for seq in 0..<6 { driver.offer(.video, ssrc: 0xA, seq: UInt16(seq), ts: 1, size: 1_200, now: 0) }
        driver.pacer.removeLane(driver.lane)
        XCTAssertEqual(driver.pacer.laneStats(driver.lane, now: 0)?.counters, PacerStats())
        XCTAssertEqual(driver.pacer.stats.sentAtOnce + driver.pacer.stats.queued, 6)
    }

    /// Every stored UInt64 counter is in `PacerStats.fields` (the sum and /metrics use it).
    func testFieldListIsComplete() {
        let stored = Mirror(reflecting: PacerStats()).children.compactMap { child in child.value is UInt64 ? child.label : nil }
        XCTAssertEqual(Set(stored), Set(PacerStats.fields.map(\.name)))
        XCTAssertEqual(stored.count, PacerStats.fields.count)
    }
}
