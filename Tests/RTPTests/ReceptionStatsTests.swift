import XCTest
@testable import RTP

final class ReceptionStatsTests: XCTestCase {
    /// 20 ms Opus frames at 48 kHz: 960 ticks per packet.
    func testLossAndFractionLostAcrossWrap() {
        var stats = ReceptionStats()
        var seq: UInt16 = 65000
        var ts: UInt32 = 1000
        var arrival: Int64 = 5_000_000
        var sent = 0
        var receivedCount = 0
        // 1000 packets, every 10th lost; crosses 65535 → 0.
        for index in 0..<1000 {
            if index % 10 != 5 {
                XCTAssertTrue(stats.record(seq: seq, rtpTimestamp: ts, arrival: arrival, clockRate: 48000))
                receivedCount += 1
            }
            sent += 1
            seq &+= 1
            ts &+= 960
            arrival += 20_000
        }
        XCTAssertEqual(stats.expected, 1000)
        XCTAssertEqual(stats.received, UInt32(receivedCount))
        XCTAssertEqual(stats.cumulativeLost, 100)
        XCTAssertEqual(stats.extendedHighestSequenceNumber, 65536 + UInt32(seq &- 1))
        XCTAssertEqual(stats.jitter, 0, "perfectly paced packets have no jitter")
        let block = stats.makeReportBlock(ssrc: 77, lastSenderReport: 5, delaySinceLastSenderReport: 6)
        XCTAssertEqual(block.fractionLost, 25)  // 100/1000 * 256 = 25.6 → 25
        XCTAssertEqual(block.cumulativeLost, 100)
        XCTAssertEqual(block.ssrc, 77)
        XCTAssertEqual(block.lastSenderReport, 5)
        // Next interval: 10 packets, none lost → fraction 0, cumulative unchanged.
        for _ in 0..<10 {
            stats.record(seq: seq, rtpTimestamp: ts, arrival: arrival, clockRate: 48000)
            seq &+= 1; ts &+= 960; arrival += 20_000
        }
        let second = stats.makeReportBlock(ssrc: 77)
        XCTAssertEqual(second.fractionLost, 0)
        XCTAssertEqual(second.cumulativeLost, 100)
    }

    func testJitterConvergesToConstantAlternatingDelay() {
        // Arrival alternates ±2 ms around the ideal: |D| = 4 ms = 192 ticks at 48 kHz
        // every packet, so J converges to 192 (J += (|D| - J)/16).
        var stats = ReceptionStats()
        for index in 0..<500 {
            let wobble: Int64 = index % 2 == 0 ? 2000 : -2000
            stats.record(seq: UInt16(index), rtpTimestamp: UInt32(index * 960), arrival: Int64(index) * 20_000 + wobble, clockRate: 48000)
        }
        XCTAssertEqual(Int(stats.jitter), 192, accuracy: 1)
    }

    func testDuplicatesAndReorderingAndRestart() {
        var stats = ReceptionStats()
        stats.record(seq: 10, rtpTimestamp: 0, arrival: 0, clockRate: 90000)
        stats.record(seq: 12, rtpTimestamp: 0, arrival: 0, clockRate: 90000)
        stats.record(seq: 11, rtpTimestamp: 0, arrival: 0, clockRate: 90000)  // reordered
        stats.record(seq: 12, rtpTimestamp: 0, arrival: 0, clockRate: 90000)  // duplicate
        XCTAssertEqual(stats.expected, 3)
        XCTAssertEqual(stats.cumulativeLost, -1)
        XCTAssertEqual(stats.makeReportBlock(ssrc: 1).fractionLost, 0)
        // A jump of 20000 is not accepted until confirmed by the next sequential packet (A.1).
        XCTAssertFalse(stats.record(seq: 20_000, rtpTimestamp: 0, arrival: 0, clockRate: 90000))
        XCTAssertEqual(stats.extendedHighestSequenceNumber, 12)
        XCTAssertTrue(stats.record(seq: 20_001, rtpTimestamp: 0, arrival: 0, clockRate: 90000))
        XCTAssertEqual(stats.extendedHighestSequenceNumber, 20_001)
        XCTAssertEqual(stats.expected, 1)
        XCTAssertEqual(stats.received, 1)
    }

    func testReportBlockClampsCumulativeLostTo24Bits() throws {
        var stats = ReceptionStats()
        stats.record(seq: 0, rtpTimestamp: 0, arrival: 0, clockRate: 8000)
        // Walk forward in jumps below MAX_DROPOUT, receiving one packet per 2999.
        var seq: UInt16 = 0
        for _ in 0..<3000 {
            seq &+= 2999
            stats.record(seq: seq, rtpTimestamp: 0, arrival: 0, clockRate: 8000)
        }
        XCTAssertGreaterThan(stats.cumulativeLost, 0x7F_FFFF)
        let block = stats.makeReportBlock(ssrc: 1)
        XCTAssertEqual(block.cumulativeLost, 0x7F_FFFF)
        XCTAssertEqual(block.fractionLost, 255)
        let parsed = try RTCPCompound.parse(RTCPCompound.serialize([.receiverReport(.init(ssrc: 2, reportBlocks: [block]))]))
        XCTAssertEqual(parsed, [.receiverReport(.init(ssrc: 2, reportBlocks: [block]))])
    }
}
