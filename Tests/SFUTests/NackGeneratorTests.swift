import RTP
import XCTest
@testable import SFU
import SplitMix

final class NackGeneratorTests: XCTestCase {
    func tick(_ generator: inout NackGenerator, _ now: Int64, rtt: Int64? = 50_000, jitter: Int64? = nil) -> [UInt16] {
        var out: [UInt16] = []
        generator.tick(now: now, rtt: rtt, jitter: jitter, into: &out)
        return out
    }

    func testSingleGapNackedAfterWaitRetriedAtRTTPlusWaitSpacingThenGivenUp() {
        var generator = NackGenerator(config: .video)
        for seq: UInt16 in 0...4 { generator.received(seq, now: Int64(seq) * 10_000) }
        XCTAssertEqual(generator.received(6, now: 60_000), .gap(missing: 1))
        XCTAssertEqual(tick(&generator, 65_000), [], "inside the 10 ms reorder wait")
        XCTAssertEqual(tick(&generator, 70_000), [5])
        var sentAt: [Int64] = [70_000]
        var now: Int64 = 70_000
        while now < 1_000_000 {
            now += 10_000
            if tick(&generator, now) == [5] { sentAt.append(now) }
        }
        XCTAssertEqual(sentAt, (0..<10).map { 70_000 + Int64($0) * 60_000 }, "10 tries, RTT (50 ms) + reorder wait (10 ms) apart")
        XCTAssertEqual(generator.missingCount, 0)
        XCTAssertEqual(generator.stats.requested, 1)
        XCTAssertEqual(generator.stats.nackedSequenceNumbers, 10)
        XCTAssertEqual(generator.stats.nackPackets, 10)
        XCTAssertEqual(generator.stats.lostAfterRetries, 1)
        XCTAssertEqual(generator.received(5, now: now), .duplicateOrLate, "arrival after giving up")
    }

    func testAudioGivesUpWhenARepairCannotArriveInTime() {
        var generator = NackGenerator(config: .audio)  // 300 ms
        generator.received(0, now: 0)
        generator.received(2, now: 60_000)
        var sentAt: [Int64] = []
        var now: Int64 = 60_000
        while now < 600_000 {
            now += 10_000
            if !tick(&generator, now).isEmpty { sentAt.append(now) }
        }
        // Tries 60 ms apart; age + RTT (50 ms) must stay ≤ 300 ms: the last try is at age 250 ms.
        XCTAssertEqual(sentAt, [70_000, 130_000, 190_000, 250_000, 310_000])
        XCTAssertEqual(generator.stats.tooLate, 1)
        XCTAssertEqual(generator.stats.lostAfterRetries, 0)
    }

    func testRecoveredCountsArrivalsAfterNACK() {
        var generator = NackGenerator(config: .video)
        generator.received(10, now: 0)
        generator.received(13, now: 10_000)
        XCTAssertEqual(tick(&generator, 20_000), [11, 12])
        XCTAssertEqual(tick(&generator, 60_000), [], "retry after RTT + wait = 60 ms")
        XCTAssertEqual(generator.received(12, now: 70_000, isRetransmission: true), .recovered)
        XCTAssertEqual(tick(&generator, 80_000), [11], "only the one still missing is retried")
        XCTAssertEqual(generator.received(11, now: 120_000, isRetransmission: true), .recovered)
        XCTAssertEqual(generator.received(11, now: 121_000, isRetransmission: true), .duplicateOrLate)
        XCTAssertEqual(generator.stats.recovered, 2)
        XCTAssertEqual(generator.stats.requested, 2)
        XCTAssertEqual(generator.stats.nackedSequenceNumbers, 3)
    }

    func testReorderedArrivalInsideTheWindowIsNeverNACKed() {
        var generator = NackGenerator(config: .video)
        generator.received(0, now: 0)
        generator.received(1, now: 1_000)
        generator.received(3, now: 2_000)
        XCTAssertEqual(generator.received(2, now: 9_000), .reordered)
        XCTAssertEqual(tick(&generator, 20_000), [])
        XCTAssertEqual(generator.stats.reorderedBeforeNACK, 1)
        XCTAssertEqual(generator.stats.requested, 0)
    }

    func testWaitFollowsJitterAndObservedReordering() {
        var generator = NackGenerator(config: .video)
        XCTAssertEqual(generator.reorderWait(now: 0, jitter: nil), 10_000)
        XCTAssertEqual(generator.reorderWait(now: 0, jitter: 20_000), 60_000, "3 × jitter")
        XCTAssertEqual(generator.reorderWait(now: 0, jitter: 90_000), 150_000, "capped")
        // A late original 40 ms after its gap (NACKed at 10 ms, before any repair could return).
        generator.received(0, now: 0)
        generator.received(2, now: 1_000)
        XCTAssertEqual(tick(&generator, 11_000, rtt: 100_000), [1])
        XCTAssertEqual(generator.received(1, now: 41_000, rtt: 100_000), .recovered)
        XCTAssertEqual(generator.reorderWait(now: 41_000, jitter: nil), 50_000, "40 ms observed + 1/4")
        // The same reordering again is now absorbed.
        generator.received(4, now: 50_000)
        XCTAssertEqual(tick(&generator, 60_000, rtt: 100_000), [])
        XCTAssertEqual(tick(&generator, 80_000, rtt: 100_000), [])
        XCTAssertEqual(generator.received(3, now: 90_000), .reordered)
        // Observations age out after 10 s (the latest one was at 90 ms).
        XCTAssertEqual(generator.reorderWait(now: 10_090_000, jitter: nil), 50_000)
        XCTAssertEqual(generator.reorderWait(now: 10_090_001, jitter: nil), 10_000)
    }

    func testRepairArrivalsDoNotWidenTheWait() {
        var generator = NackGenerator(config: .video)
        generator.received(0, now: 0)
        generator.received(2, now: 0)
        XCTAssertEqual(tick(&generator, 10_000, rtt: 100_000), [1])
        // Original form (no RTX) arriving one RTT later: a repair, not reordering.
        XCTAssertEqual(generator.received(1, now: 110_000, rtt: 100_000), .recovered)
        XCTAssertEqual(generator.reorderWait(now: 110_000, jitter: nil), 10_000)
    }

    func testBurstLossAndSeveralGapsGoOutAsOneNACKPerTick() throws {
        var generator = NackGenerator(config: .video)
        generator.received(100, now: 0)
        generator.received(151, now: 1_000)  // 50 lost
        generator.received(152, now: 2_000)
        generator.received(160, now: 3_000)  // 7 lost
        let nack = try XCTUnwrap(generator.makeNACK(senderSSRC: 0xC0, mediaSSRC: 0xAB, now: 20_000, rtt: nil, jitter: nil))
        XCTAssertEqual(nack.sequenceNumbers, Array(101...150) + Array(153...159))
        XCTAssertEqual(nack.mediaSSRC, 0xAB)
        XCTAssertEqual(nack.packedItems.count, 4, "101–117, 118–134, 135–151 (150), 153–159")
        // Serialized and parsed back: one RTCP packet with every number.
        let bytes = try RTCPCompound.serialize([.nack(nack)])
        let parsed = try bytes.withUnsafeBytes { try RTCPCompound.parse($0) }
        XCTAssertEqual(parsed.count, 1)
        guard case .nack(let back) = parsed[0] else { return XCTFail("not a NACK") }
        XCTAssertEqual(Set(back.sequenceNumbers), Set(nack.sequenceNumbers))
        XCTAssertNil(generator.makeNACK(senderSSRC: 0xC0, mediaSSRC: 0xAB, now: 40_000, rtt: nil, jitter: nil), "retry waits an RTT")
        XCTAssertEqual(generator.stats.nackPackets, 1)
        XCTAssertEqual(generator.stats.requested, 57)
    }

    func testNACKSizeIsCappedPerTick() {
        var generator = NackGenerator(config: .video)
        generator.received(0, now: 0)
        generator.received(301, now: 0)
        XCTAssertEqual(tick(&generator, 20_000), Array(1...200))
        XCTAssertEqual(tick(&generator, 40_000), Array(201...300))
    }

    func testGapAcrossWrap() {
        var random = SplitMix64(state: 11)
        for start in [UInt16(65533), 65535, 0] + (0..<10).map({ _ in UInt16.random(in: 0...UInt16.max, using: &random) }) {
            var generator = NackGenerator(config: .video)
            generator.received(start, now: 0)
            generator.received(start &+ 1, now: 1_000)
            generator.received(start &+ 4, now: 2_000)
            XCTAssertEqual(tick(&generator, 20_000), [start &+ 2, start &+ 3], "start \(start)")
            XCTAssertEqual(generator.received(start &+ 3, now: 30_000, isRetransmission: true), .recovered)
        }
    }

    func testLargeJumpsRestartTracking() {
        var generator = NackGenerator(config: .video)
        generator.received(10, now: 0)
        generator.received(20, now: 1_000)
        XCTAssertEqual(generator.missingCount, 9)
        XCTAssertEqual(generator.received(5_000, now: 2_000), .restarted)
        XCTAssertEqual(generator.missingCount, 0)
        XCTAssertEqual(generator.received(5_001, now: 3_000), .inOrder)
        XCTAssertEqual(generator.received(40_000, now: 4_000), .restarted, "backward by more than half the space")
        XCTAssertEqual(generator.received(39_000, now: 5_000), .duplicateOrLate, "backward by exactly 1000: a late packet")
        XCTAssertEqual(generator.received(38_999, now: 5_000), .restarted, "backward by more than 1000")
        XCTAssertEqual(generator.received(39_001, now: 6_000), .gap(missing: 1))
        XCTAssertEqual(generator.stats.restarts, 3)
        XCTAssertEqual(tick(&generator, 20_000), [39_000])
    }

    func testMissingListIsBounded() {
        var config = NackGeneratorConfig.video
        config.maxMissing = 100
        var generator = NackGenerator(config: config)
        generator.received(0, now: 0)
        generator.received(81, now: 0)
        generator.received(162, now: 0)
        XCTAssertEqual(generator.missingCount, 100)
        XCTAssertEqual(generator.stats.overflowed, 60)
        XCTAssertEqual(tick(&generator, 20_000).first, 61, "1–60, the oldest, were dropped")
    }

    func testZeroRetriesGivesUpWithoutAsking() {
        var config = NackGeneratorConfig.video
        config.maxRetries = 0
        var generator = NackGenerator(config: config)
        generator.received(0, now: 0)
        generator.received(2, now: 0)
        XCTAssertEqual(tick(&generator, 20_000), [])
        XCTAssertEqual(generator.stats.lostAfterRetries, 1)
        XCTAssertEqual(generator.missingCount, 0)
    }

    func testJitterConversion() {
        XCTAssertEqual(NackGenerator.jitterMicroseconds(1800, clockRate: 90000), 20_000)
        XCTAssertNil(NackGenerator.jitterMicroseconds(1800, clockRate: 0))
    }
}
