import RTP
import XCTest
@testable import SFU

/// The publisher's SR mapping kept on the publisher's clock (`SenderClock`,
/// `PublisherClockOffset`): subscribers' SRs keep the relation between a publisher's streams,
/// and layer switches follow capture time.
final class SenderClockTests: XCTestCase {
    /// 2025-11-24 16:00:00 UTC on the publisher's clock.
    static let publisherMicros: Int64 = 1_764_000_000_000_000
    let wallClock = NTPTime(unixMicroseconds: 1_764_000_100_000_000)

    func testNTPUnixMicrosecondsRoundTrip() {
        for micros: Int64 in [0, 1, 999_999, 1_000_000, Self.publisherMicros, Self.publisherMicros + 123_456] {
            XCTAssertEqual(NTPTime(unixMicroseconds: micros).unixMicroseconds, micros, "\(micros)")
        }
        XCTAssertEqual(NTPTime(raw: 0).unixMicroseconds, -2_208_988_800 * 1_000_000, "NTP era start, before 1970")
    }

    func testReferenceOffsetPutsLayersWithTheirOwnRTPOffsetsOnOneTimeline() {
        let ntp = NTPTime(unixMicroseconds: Self.publisherMicros)
        // Two layers of one track: RTP 1,000 and 4,294,000,000 (about to wrap) at the same instant.
        let high = SenderClock(ntp: ntp, rtp: 1_000)
        let low = SenderClock(ntp: ntp, rtp: 4_294_000_000)
        let (highOffset, lowOffset) = (high.referenceOffset(clockRate: 90_000), low.referenceOffset(clockRate: 90_000))
        // A frame captured 1.5 s after the SRs carries RTP + 135,000 on each layer.
        XCTAssertEqual((1_000 &+ 135_000) &+ highOffset, (4_294_000_000 &+ 135_000) &+ lowOffset)
        // And one captured 33 ms later is 2,970 units further on the shared timeline.
        XCTAssertEqual(((4_294_000_000 &+ 137_970) &+ lowOffset) &- ((1_000 &+ 135_000) &+ highOffset), 2_970)
    }

    func testRTPAtSenderMicrosExtrapolatesAtTheNominalRateAcrossTheWrap() {
        let clock = SenderClock(ntp: NTPTime(unixMicroseconds: Self.publisherMicros), rtp: 4_294_967_000)
        XCTAssertEqual(clock.rtp(atSenderMicros: Self.publisherMicros, clockRate: 48_000), 4_294_967_000)
        XCTAssertEqual(clock.rtp(atSenderMicros: Self.publisherMicros + 2_500_000, clockRate: 48_000), 4_294_967_000 &+ 120_000)
        XCTAssertEqual(clock.rtp(atSenderMicros: Self.publisherMicros - 20_000, clockRate: 48_000), 4_294_967_000 &- 960)
    }

    func testClockOffsetFollowsTheLowerEnvelopeDriftsSlowlyAndResetsOnAStep() {
        var offset = PublisherClockOffset()
        XCTAssertNil(offset.offset)
        // SRs sent at 0, 1, 2 s on the publisher's clock arrive 40, 10 and 90 ms later on ours
        // (ours reads 5 s more): the least transit wins.
        offset.observe(arrival: 5_040_000, senderMicros: 0)
        XCTAssertEqual(offset.offset, 5_040_000)
        offset.observe(arrival: 6_010_000, senderMicros: 1_000_000)
        XCTAssertEqual(offset.offset, 5_010_000)
        offset.observe(arrival: 7_090_000, senderMicros: 2_000_000)
        XCTAssertEqual(offset.offset, 5_011_080, "rises 1 ms per second (1.08 s since the last SR) towards later samples, no more")
        // The publisher's clock stepped back 2 s: samples now 2 s higher; the estimate jumps.
        offset.observe(arrival: 8_010_000, senderMicros: 1_000_000)
        XCTAssertEqual(offset.offset, 7_010_000)
    }

    /// alice's audio and video SRs describe the same instant but reach the SFU 10 ms and
    /// 150 ms after it. bob's SRs for both must keep alice's relation between the streams:
    /// the same shift of her clock for each. Re-anchoring each on its own SR's arrival (the
    /// code before) put the two 140 ms apart, which a subscriber's lip sync then "corrects".
    func testSubscriberSenderReportsShiftEveryStreamOfAPublisherByTheSameOffset() throws {
        let router = makeRouter()
        try router.join(alice, room: room, description: receiver("alice"), now: 0)
        try router.join(bob, room: room, description: receiver("bob"), now: 0)
        try router.publish(alice, track: audioTrack("mic", ssrc: 1), now: 0)
        try router.publish(alice, track: videoTrack("cam", layers: [StreamDescription(ssrc: 8)]), now: 0)
        let (audioRTP, videoRTP): (UInt32, UInt32) = (3_000_000_000, 77_000)
        // Media captured at 1 s on alice's clock + 20 ms steps, arriving 5 ms later (router µs = alice's + 0).
        var audioOut: [(input: UInt32, output: UInt32)] = []
        var videoOut: [(input: UInt32, output: UInt32)] = []
        for index in 0..<10 {
            let captured = Int64(index) * 20_000
            let audio = audioRTP &+ UInt32(index) * 960
            let video = videoRTP &+ UInt32(index) * 1_800
            if let out = try send(router, from: alice, rtpPacket(ssrc: 1, seq: UInt16(index), ts: audio, pt: 111), now: 1_000_000 + captured + 5_000).first {
                audioOut.append((audio, out.ts))
            }
            if let out = try send(router, from: alice, rtpPacket(ssrc: 8, seq: UInt16(index), ts: video, pt: 96, payload: index == 0 ? vp8Keyframe : vp8Delta), now: 1_000_000 + captured + 5_000).first {
                videoOut.append((video, out.ts))
            }
        }
        XCTAssertEqual(audioOut.count, 10)
        XCTAssertEqual(videoOut.count, 10)
        // Both SRs describe alice's instant 1.2 s (RTP at 0 s + 1.2 s); audio arrives 10 ms, video 150 ms later.
        let srInstant = Self.publisherMicros + 1_200_000
        let ntp = NTPTime(unixMicroseconds: srInstant)
        _ = try rtcp(router, from: alice, [.senderReport(RTCPSenderReport(ssrc: 1, ntpTimestamp: ntp.raw, rtpTimestamp: audioRTP &+ 57_600, packetCount: 10, octetCount: 40))], now: 1_210_000)
        _ = try rtcp(router, from: alice, [.senderReport(RTCPSenderReport(ssrc: 8, ntpTimestamp: ntp.raw, rtpTimestamp: videoRTP &+ 108_000, packetCount: 10, octetCount: 40))], now: 1_350_000)

        var reports: [UInt32: RTCPSenderReport] = [:]
        for packet in router.tick(now: 3_000_000, ntp: wallClock).filter({ $0.participant == bob }).flatMap(\.packets) {
            if case .senderReport(let sr) = packet { reports[sr.ssrc] = sr }
        }
        let subscriptions = router.subscriptions(of: bob)
        let audioSSRC = try XCTUnwrap(subscriptions.first { $0.track == TrackID("mic") }?.ssrc)
        let videoSSRC = try XCTUnwrap(subscriptions.first { $0.track == TrackID("cam") }?.ssrc)
        let (audioSR, videoSR) = (try XCTUnwrap(reports[audioSSRC]), try XCTUnwrap(reports[videoSSRC]))
        // Which instant of alice's clock each SR of bob's names: its RTP, back to alice's RTP,
        // back to her clock through her SR.
        func aliceMicros(_ sr: RTCPSenderReport, out: (input: UInt32, output: UInt32), sourceAtSR: UInt32, rate: Int64) -> Int64 {
            let source = sr.rtpTimestamp &- (out.output &- out.input)
            return srInstant + Int64(Int32(bitPattern: source &- sourceAtSR)) * 1_000_000 / rate
        }
        let audioInstant = aliceMicros(audioSR, out: audioOut[0], sourceAtSR: audioRTP &+ 57_600, rate: 48_000)
        let videoInstant = aliceMicros(videoSR, out: videoOut[0], sourceAtSR: videoRTP &+ 108_000, rate: 90_000)
        XCTAssertEqual(audioSR.ntpTimestamp, videoSR.ntpTimestamp, "one wall-clock instant in one tick")
        XCTAssertLessThanOrEqual(abs(audioInstant - videoInstant), 30, "same instant of alice's clock within a clock unit: \(audioInstant - videoInstant) µs")
        // The shift is the SR with the least transit (10 ms), plus the drift allowance up to
        // the later SR (1 ms/s × 0.14 s = 140 µs): bob's SR at router time 3 s names alice's
        // 2.99 s − 140 µs.
        XCTAssertLessThanOrEqual(abs(audioInstant - (Self.publisherMicros + 2_990_000 - 140)), 30)
    }

    /// A switch from the high to the low layer while the low layer reaches the SFU 300 ms
    /// later than the high one (a publisher's pacer or a stall upstream): with both layers'
    /// SRs the output timestamp advances by the capture difference (one frame), not by the
    /// 333 ms between the two packets' arrivals.
    func testLayerSwitchAdvancesByCaptureTimeWhenBothLayersHaveSenderReports() throws {
        for withReports in [true, false] {
            let router = makeRouter()
            try router.join(alice, room: room, description: receiver("a"), now: 0)
            try router.join(bob, room: room, description: receiver("b"), now: 0)
            try router.publish(alice, track: videoTrack("cam", layers: [StreamDescription(ssrc: 0x10), StreamDescription(ssrc: 0x30)]), now: 0)
            let (lowBase, highBase): (UInt32, UInt32) = (4_294_000_000, 5_000)
            if withReports {
                let ntp = NTPTime(unixMicroseconds: Self.publisherMicros).raw
                _ = try rtcp(router, from: alice, [.senderReport(RTCPSenderReport(ssrc: 0x10, ntpTimestamp: ntp, rtpTimestamp: lowBase, packetCount: 0, octetCount: 0)),
                                                   .senderReport(RTCPSenderReport(ssrc: 0x30, ntpTimestamp: ntp, rtpTimestamp: highBase, packetCount: 0, octetCount: 0))], now: 1_000)
            }
            var out: [Received] = []
            for index in 0..<5 {   // frames captured every 33 ms from the SRs' instant; high arrives 2 ms after capture
                out += try send(router, from: alice, rtpPacket(ssrc: 0x30, seq: 100 &+ UInt16(index), ts: highBase &+ UInt32(index) * 2_970, pt: 96,
                                                               payload: index == 0 ? vp8Keyframe : vp8Delta), now: Int64(index) * 33_000 + 2_000)
            }
            try router.setTargetLayer(subscriber: bob, publisher: alice, track: TrackID("cam"), layer: 0)
            // The low layer's keyframe captured at frame 5 (165 ms) arrives 300 ms late.
            out += try send(router, from: alice, rtpPacket(ssrc: 0x10, seq: 7, ts: lowBase &+ 5 * 2_970, pt: 96, payload: vp8Keyframe), now: 5 * 33_000 + 302_000)
            out += try send(router, from: alice, rtpPacket(ssrc: 0x10, seq: 8, ts: lowBase &+ 6 * 2_970, pt: 96, payload: vp8Delta), now: 6 * 33_000 + 302_000)
            XCTAssertEqual(out.count, 7)
            let step = out[5].ts &- out[4].ts
            if withReports {
                XCTAssertEqual(step, 2_970, "one frame of capture time")
            } else {
                XCTAssertEqual(step, 29_970, "no SRs: the 333 ms between the two arrivals at 90 kHz")
            }
            XCTAssertEqual(out[6].ts &- out[5].ts, 2_970, "the new layer keeps its own spacing")
        }
    }

    /// The capture difference can be negative (the new layer's keyframe was captured before
    /// the last packet forwarded from the old one): the output still moves forward.
    func testLayerSwitchNeverRepeatsAnOutputTimestamp() throws {
        let router = makeRouter()
        try router.join(alice, room: room, description: receiver("a"), now: 0)
        try router.join(bob, room: room, description: receiver("b"), now: 0)
        try router.publish(alice, track: videoTrack("cam", layers: [StreamDescription(ssrc: 0x10), StreamDescription(ssrc: 0x30)]), now: 0)
        let ntp = NTPTime(unixMicroseconds: Self.publisherMicros).raw
        _ = try rtcp(router, from: alice, [.senderReport(RTCPSenderReport(ssrc: 0x10, ntpTimestamp: ntp, rtpTimestamp: 0, packetCount: 0, octetCount: 0)),
                                           .senderReport(RTCPSenderReport(ssrc: 0x30, ntpTimestamp: ntp, rtpTimestamp: 0, packetCount: 0, octetCount: 0))], now: 1_000)
        var out = try send(router, from: alice, rtpPacket(ssrc: 0x30, seq: 1, ts: 10 * 2_970, pt: 96, payload: vp8Keyframe), now: 10_000)
        try router.setTargetLayer(subscriber: bob, publisher: alice, track: TrackID("cam"), layer: 0)
        out += try send(router, from: alice, rtpPacket(ssrc: 0x10, seq: 1, ts: 8 * 2_970, pt: 96, payload: vp8Keyframe), now: 20_000)
        XCTAssertEqual(out.count, 2)
        XCTAssertEqual(out[1].ts &- out[0].ts, 1, "one unit past the highest timestamp sent")
    }
}
