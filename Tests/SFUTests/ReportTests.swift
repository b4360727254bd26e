import RTP
import XCTest
@testable import SFU

final class ReportTests: XCTestCase {
    let wallClock = NTPTime(unixMicroseconds: 1_764_000_000_000_000)

    func packets(in outgoing: [OutgoingRTCP], for participant: ParticipantID) -> [RTCPPacket] {
        outgoing.filter { $0.participant == participant }.flatMap(\.packets)
    }

    /// A scripted 48 kHz stream: 20 ms packets 100…109 with 103 and 106 lost, arriving with
    /// 0 / +1 ms extra delay alternately, so every transit difference |D| is 48 units.
    ///
    /// Hand computation, RFC 3550 §A.3: expected = 109 - 100 + 1 = 10, received 8, lost 2,
    /// fraction = (2 << 8) / 10 = 51. §A.8 (integer form, J scaled by 16, 7 differences):
    /// 0→48→93→135→175→212→247→280 (J += |D| - ((J + 8) >> 4)); 280 >> 4 = 17.
    /// Cross-check with the real-valued form J += (|D| - J) / 16:
    /// 3, 5.81, 8.45, 10.92, 13.24, 15.41, 17.45 → 17.
    func testReceiverReportLossJitterAndLSRMatchHandComputedRFC3550Values() throws {
        let router = makeRouter()
        try router.join(alice, room: room, description: receiver("a"), now: 0)
        try router.join(bob, room: room, description: receiver("b"), now: 0)
        try router.publish(alice, track: audioTrack("mic", ssrc: 0x1234), now: 0)
        let received: [UInt16] = [100, 101, 102, 104, 105, 107, 108, 109]
        for (index, seq) in received.enumerated() {
            let arrival = 1_000_000 + Int64(seq - 100) * 20_000 + (index % 2 == 1 ? 1_000 : 0)
            _ = try send(router, from: alice, rtpPacket(ssrc: 0x1234, seq: seq, ts: 50_000 + UInt32(seq - 100) * 960, pt: 111), now: arrival)
        }
        let senderNTP = NTPTime(raw: 0xE000_0000_1234_5678)
        _ = try rtcp(router, from: alice, [.senderReport(RTCPSenderReport(ssrc: 0x1234, ntpTimestamp: senderNTP.raw, rtpTimestamp: 50_000, packetCount: 10, octetCount: 40))], now: 4_750_000)
        XCTAssertTrue(packets(in: router.tick(now: 4_999_999, ntp: wallClock), for: alice).isEmpty, "audio only: 5 s interval")
        let reports = packets(in: router.tick(now: 5_000_000, ntp: wallClock), for: alice)
        guard case .receiverReport(let rr) = reports.first else { return XCTFail("expected an RR first, got \(reports)") }
        XCTAssertEqual(rr.reportBlocks.count, 1)
        let block = try XCTUnwrap(rr.reportBlocks.first)
        XCTAssertEqual(block.ssrc, 0x1234)
        XCTAssertEqual(block.fractionLost, 51)
        XCTAssertEqual(block.cumulativeLost, 2)
        XCTAssertEqual(block.extendedHighestSequenceNumber, 109)
        XCTAssertEqual(block.jitter, 17)
        XCTAssertEqual(block.lastSenderReport, 0x0000_1234, "middle 32 bits of 0xE0000000_12345678")
        XCTAssertEqual(block.delaySinceLastSenderReport, 16384, "250 ms × 65536")
        XCTAssertEqual(router.trackStats(alice, track: TrackID("mic"))?.streams.first?.cumulativeLost, 2)

        // Next interval without loss: fraction back to 0, cumulative stays.
        for seq in UInt16(110)...119 {
            _ = try send(router, from: alice, rtpPacket(ssrc: 0x1234, seq: seq, ts: 50_000 + UInt32(seq - 100) * 960, pt: 111), now: 5_000_000 + Int64(seq) * 20_000)
        }
        guard case .receiverReport(let next) = packets(in: router.tick(now: 10_000_000, ntp: wallClock), for: alice).first else { return XCTFail("no RR") }
        XCTAssertEqual(next.reportBlocks.first?.fractionLost, 0)
        XCTAssertEqual(next.reportBlocks.first?.cumulativeLost, 2)
        XCTAssertEqual(next.reportBlocks.first?.extendedHighestSequenceNumber, 119)
    }

    func testSenderReportExtrapolatesTimestampAndCountsWhatWasForwarded() throws {
        let router = makeRouter()
        try router.join(alice, room: room, description: receiver("alice-cname"), now: 0)
        try router.join(bob, room: room, description: receiver("b"), now: 0)
        try router.publish(alice, track: audioTrack("mic", ssrc: 1), now: 0)
        var lastOut: UInt32 = 0
        for index in 0..<3 {
            let out = try send(router, from: alice, rtpPacket(ssrc: 1, seq: 65535 &+ UInt16(index), ts: 4_294_966_000 &+ UInt32(index) * 960, pt: 111, payload: [1, 2, 3, 4, 5]), now: Int64(index) * 20_000)
            lastOut = try XCTUnwrap(out.first?.ts)
        }
        let outgoing = try XCTUnwrap(router.subscriptions(of: bob).first?.ssrc)
        let reports = packets(in: router.tick(now: 5_000_000, ntp: wallClock), for: bob)
        guard case .senderReport(let sr) = reports.first else { return XCTFail("expected an SR, got \(reports)") }
        XCTAssertEqual(sr.ssrc, outgoing)
        XCTAssertEqual(sr.ntpTimestamp, wallClock.raw)
        // Last packet forwarded at 40 ms; 4.96 s later at 48 kHz = 238080 units, across the 32-bit wrap.
        XCTAssertEqual(sr.rtpTimestamp, lastOut &+ 238_080)
        XCTAssertEqual(sr.packetCount, 3)
        XCTAssertEqual(sr.octetCount, 15, "payload octets only (RFC 3550 §6.4.1)")
        guard case .sourceDescription(let sdes) = reports.last else { return XCTFail("expected SDES last") }
        XCTAssertEqual(sdes.chunks.first?.ssrc, outgoing)
        XCTAssertEqual(sdes.chunks.first?.cname, "alice-cname", "publisher's CNAME: lip sync")

        // With a publisher SR the anchor is the SR: its RTP time at its arrival, plus elapsed time.
        _ = try rtcp(router, from: alice, [.senderReport(RTCPSenderReport(ssrc: 1, ntpTimestamp: 1, rtpTimestamp: 4_294_966_000 &+ 48_000, packetCount: 3, octetCount: 15))], now: 1_000_000)
        guard case .senderReport(let anchored) = packets(in: router.tick(now: 10_000_000, ntp: wallClock), for: bob).first else { return XCTFail("no SR") }
        // Source time at 10 s = SR RTP + 9 s × 48000; output = source + (lastOut - lastIn).
        let offset = lastOut &- (4_294_966_000 &+ 1920)
        XCTAssertEqual(anchored.rtpTimestamp, 4_294_966_000 &+ 48_000 &+ 432_000 &+ offset)
    }

    func testRTTFromLSRAndDLSROnTheSubscriberLeg() throws {
        let router = makeRouter()
        try router.join(alice, room: room, description: receiver("a"), now: 0)
        try router.join(bob, room: room, description: receiver("b"), now: 0)
        try router.publish(alice, track: audioTrack("mic", ssrc: 1), now: 0)
        _ = try send(router, from: alice, rtpPacket(ssrc: 1, seq: 1, ts: 0, pt: 111), now: 0)
        let outgoing = try XCTUnwrap(router.subscriptions(of: bob).first?.ssrc)
        guard case .senderReport(let sr) = packets(in: router.tick(now: 5_000_000, ntp: wallClock), for: bob).first else { return XCTFail("no SR") }
        // Bob holds the SR 100 ms and its RR arrives 150 ms after we sent: RTT 50 ms.
        let block = RTCPReportBlock(ssrc: outgoing, fractionLost: 26, cumulativeLost: 5, extendedHighestSequenceNumber: 1, jitter: 33,
                                    lastSenderReport: NTPTime(raw: sr.ntpTimestamp).middle32, delaySinceLastSenderReport: 6554)
        _ = try rtcp(router, from: bob, [.receiverReport(RTCPReceiverReport(ssrc: 0xB0B, reportBlocks: [block]))], now: 5_150_000, ntp: wallClock.adding(microseconds: 150_000))
        let stats = try XCTUnwrap(router.subscriptionStats(subscriber: bob, publisher: alice, track: TrackID("mic")))
        let rtt = try XCTUnwrap(stats.rtt)
        XCTAssertLessThan(abs(rtt - 50_000), 40, "1/65536 s resolution: \(rtt) µs")
        XCTAssertEqual(router.participantStats(bob)?.rtt, rtt)
        XCTAssertEqual(stats.remoteFractionLost, 26)
        XCTAssertEqual(stats.remoteCumulativeLost, 5)
        XCTAssertEqual(stats.remoteJitter, 33)
        // LSR 0 (no SR received yet) gives no sample.
        let noSR = RTCPReportBlock(ssrc: outgoing, fractionLost: 0, cumulativeLost: 0, extendedHighestSequenceNumber: 2, jitter: 0, lastSenderReport: 0, delaySinceLastSenderReport: 0)
        _ = try rtcp(router, from: bob, [.receiverReport(RTCPReceiverReport(ssrc: 0xB0B, reportBlocks: [noSR]))], now: 6_000_000, ntp: wallClock.adding(microseconds: 1_000_000))
        XCTAssertEqual(router.subscriptionStats(subscriber: bob, publisher: alice, track: TrackID("mic"))?.rtt, rtt)
    }

    func testReportIntervalIsOneSecondWithVideoAndREMBIsKept() throws {
        let router = makeRouter()
        try router.join(alice, room: room, description: receiver("a"), now: 0)
        try router.join(bob, room: room, description: receiver("b"), now: 0)
        try router.publish(alice, track: videoTrack("cam", layers: [StreamDescription(ssrc: 8)]), now: 0)
        _ = router.tick(now: 0, ntp: wallClock)
        _ = try send(router, from: alice, rtpPacket(ssrc: 8, seq: 1, ts: 0, pt: 96, payload: vp8Keyframe), now: 10_000)
        let atOneSecond = router.tick(now: 1_000_000, ntp: wallClock)
        XCTAssertFalse(packets(in: atOneSecond, for: alice).isEmpty, "RR to the video publisher")
        XCTAssertFalse(packets(in: atOneSecond, for: bob).isEmpty, "SR to the video subscriber")
        XCTAssertTrue(router.tick(now: 1_500_000, ntp: wallClock).isEmpty)
        _ = try rtcp(router, from: bob, [.remb(RTCPReceiverEstimatedMaxBitrate(senderSSRC: 1, bitrate: 1_500_000, ssrcs: [1]))], now: 1_600_000)
        XCTAssertEqual(router.participantStats(bob)?.downlinkEstimateBps, 1_500_000)
    }

    func testNTPFromUnixTime() {
        let ntp = NTPTime(unixMicroseconds: 1_500_000)  // 1.5 s after 1970
        XCTAssertEqual(ntp.raw >> 32, 2_208_988_801)
        XCTAssertEqual(ntp.raw & 0xFFFF_FFFF, 0x8000_0000)
        XCTAssertEqual(ntp.adding(microseconds: 500_000).raw, UInt64(2_208_988_802) << 32)
    }
}
