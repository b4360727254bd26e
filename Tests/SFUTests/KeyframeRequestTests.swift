import RTP
import XCTest
@testable import SFU

final class KeyframeRequestTests: XCTestCase {
    func testPLIOnSubscriberJoinIsThrottledAndCoalescedPerPublisherStream() throws {
        let router = makeRouter()
        try router.join(alice, room: room, description: receiver("a"), now: 0)
        try router.publish(alice, track: videoTrack("cam", layers: [StreamDescription(ssrc: 0x51)]), now: 0)
        try router.publish(alice, track: audioTrack("mic", ssrc: 0x52), now: 0)
        XCTAssertTrue(keyframeRequests(router.tick(now: 0, ntp: NTPTime(raw: 0))).isEmpty, "no subscriber yet")

        try router.join(bob, room: room, description: receiver("b"), now: 100_000)
        let first = router.tick(now: 100_000, ntp: NTPTime(raw: 0))
        XCTAssertEqual(keyframeRequests(first).map(\.0), [alice])
        XCTAssertEqual(keyframeRequests(first).map(\.1), [0x51], "video only")
        let sender = try XCTUnwrap(first.first?.packets.first.flatMap { packet -> UInt32? in
            if case .pictureLossIndication(let pli) = packet { return pli.senderSSRC } else { return nil }
        })
        XCTAssertNotEqual(sender, 0)

        // Two more subscribers inside the 500 ms window: one PLI when the window ends.
        try router.join(carol, room: room, description: receiver("c"), now: 200_000)
        try router.join(ParticipantID(4), room: room, description: receiver("d"), now: 300_000)
        XCTAssertTrue(keyframeRequests(router.tick(now: 300_000, ntp: NTPTime(raw: 0))).isEmpty)
        XCTAssertTrue(keyframeRequests(router.tick(now: 599_999, ntp: NTPTime(raw: 0))).isEmpty)
        XCTAssertEqual(keyframeRequests(router.tick(now: 600_000, ntp: NTPTime(raw: 0))).map(\.1), [0x51])
        XCTAssertTrue(keyframeRequests(router.tick(now: 2_000_000, ntp: NTPTime(raw: 0))).isEmpty, "nothing pending")
        let stats = try XCTUnwrap(router.trackStats(alice, track: TrackID("cam"))?.streams.first)
        XCTAssertEqual(stats.keyframeRequestsAsked, 3)
        XCTAssertEqual(stats.keyframeRequestsSent, 2)
    }

    func testSubscriberPLIIsRoutedByMediaSSRCNotSenderAndCoalesced() throws {
        let router = makeRouter()
        for person in [alice, bob, carol] { try router.join(person, room: room, description: receiver("x"), now: 0) }
        try router.publish(alice, track: videoTrack("cam", layers: [StreamDescription(ssrc: 0xA1)]), now: 0)
        try router.publish(carol, track: videoTrack("cam", layers: [StreamDescription(ssrc: 0xC1)]), now: 0)
        _ = router.tick(now: 0, ntp: NTPTime(raw: 0))
        let fromAlice = try XCTUnwrap(router.subscriptions(of: bob).first { $0.publisher == alice }?.ssrc)
        let fromCarol = try XCTUnwrap(router.subscriptions(of: bob).first { $0.publisher == carol }?.ssrc)
        // Bob sends all feedback from SSRC 1 (unrelated to anything), naming Carol's stream.
        let out = try rtcp(router, from: bob, [.pictureLossIndication(RTCPPictureLossIndication(senderSSRC: 1, mediaSSRC: fromCarol))], now: 1_000_000)
        XCTAssertEqual(keyframeRequests(out).map(\.0), [carol])
        XCTAssertEqual(keyframeRequests(out).map(\.1), [0xC1])
        // Bob and Carol both ask for Alice's keyframe within 500 ms: one PLI, then one more after the window.
        let pliFromBob = try rtcp(router, from: bob, [.pictureLossIndication(RTCPPictureLossIndication(senderSSRC: 1, mediaSSRC: fromAlice))], now: 1_100_000)
        XCTAssertEqual(keyframeRequests(pliFromBob).map(\.1), [0xA1])
        let carolSees = try XCTUnwrap(router.subscriptions(of: carol).first { $0.publisher == alice }?.ssrc)
        let firFromCarol = try rtcp(router, from: carol, [.fullIntraRequest(RTCPFullIntraRequest(senderSSRC: 1, entries: [.init(ssrc: carolSees, sequenceNumber: 3)]))], now: 1_200_000)
        XCTAssertTrue(keyframeRequests(firFromCarol).isEmpty, "throttled")
        _ = try rtcp(router, from: bob, [.pictureLossIndication(RTCPPictureLossIndication(senderSSRC: 1, mediaSSRC: fromAlice))], now: 1_300_000)
        XCTAssertEqual(keyframeRequests(router.tick(now: 1_600_000, ntp: NTPTime(raw: 0))).map(\.1), [0xA1], "both coalesced into one")
        XCTAssertEqual(router.subscriptionStats(subscriber: carol, publisher: alice, track: TrackID("cam"))?.keyframeRequestsReceived, 1)
    }

    func testKeyframeFromPublisherCancelsPendingRequest() throws {
        let router = makeRouter()
        try router.join(alice, room: room, description: receiver("a"), now: 0)
        try router.join(bob, room: room, description: receiver("b"), now: 0)
        try router.publish(alice, track: videoTrack("cam", layers: [StreamDescription(ssrc: 7)]), now: 0)
        XCTAssertEqual(keyframeRequests(router.tick(now: 0, ntp: NTPTime(raw: 0))).count, 1)
        try router.join(carol, room: room, description: receiver("c"), now: 100_000)
        _ = try send(router, from: alice, rtpPacket(ssrc: 7, seq: 1, ts: 0, pt: 96, payload: vp8Keyframe), now: 200_000)
        XCTAssertTrue(keyframeRequests(router.tick(now: 600_000, ntp: NTPTime(raw: 0))).isEmpty, "answered by the keyframe")
    }

    func testFIRForPublishersThatOnlyNegotiatedFIR() throws {
        let router = makeRouter()
        try router.join(alice, room: room, description: receiver("a"), now: 0)
        try router.join(bob, room: room, description: receiver("b"), now: 0)
        try router.publish(alice, track: videoTrack("cam", layers: [StreamDescription(ssrc: 9)], request: .fir), now: 0)
        let first = router.tick(now: 0, ntp: NTPTime(raw: 0))
        try router.join(carol, room: room, description: receiver("c"), now: 1_000_000)
        let second = router.tick(now: 1_000_000, ntp: NTPTime(raw: 0))
        func firSequence(_ out: [OutgoingRTCP]) -> [UInt8] {
            out.flatMap(\.packets).flatMap { packet -> [UInt8] in
                if case .fullIntraRequest(let fir) = packet { return fir.entries.filter { $0.ssrc == 9 }.map(\.sequenceNumber) } else { return [] }
            }
        }
        XCTAssertEqual(firSequence(first), [1])
        XCTAssertEqual(firSequence(second), [2], "RFC 5104: new request, new command sequence number")
    }

    func testNACKIsRoutedByMediaSSRCAndCounted() throws {
        let router = makeRouter()
        for person in [alice, bob, carol] { try router.join(person, room: room, description: receiver("x"), now: 0) }
        try router.publish(alice, track: audioTrack("mic", ssrc: 1), now: 0)
        try router.publish(carol, track: audioTrack("mic", ssrc: 3), now: 0)
        let fromCarol = try XCTUnwrap(router.subscriptions(of: bob).first { $0.publisher == carol }?.ssrc)
        let fromAlice = try XCTUnwrap(router.subscriptions(of: bob).first { $0.publisher == alice }?.ssrc)
        _ = try rtcp(router, from: bob, [.nack(RTCPGenericNACK(senderSSRC: fromAlice, mediaSSRC: fromCarol, sequenceNumbers: [10, 11, 13]))], now: 0)
        XCTAssertEqual(router.subscriptionStats(subscriber: bob, publisher: carol, track: TrackID("mic"))?.nackedPackets, 3)
        XCTAssertEqual(router.subscriptionStats(subscriber: bob, publisher: alice, track: TrackID("mic"))?.nackedPackets, 0, "not by sender SSRC")
        _ = try rtcp(router, from: bob, [.nack(RTCPGenericNACK(senderSSRC: 1, mediaSSRC: 0xDEAD, sequenceNumbers: [1]))], now: 0)
        XCTAssertEqual(router.participantStats(bob)?.unknownFeedbackSSRC, 1)
    }

    func testMalformedRTCPIsCountedAndThrows() throws {
        let router = makeRouter()
        try router.join(alice, room: room, description: receiver("a"), now: 0)
        let garbage: [UInt8] = [0x81, 0xC9, 0x00, 0x07, 0x00]
        XCTAssertThrowsError(try garbage.withUnsafeBytes { try router.handleRTCP(from: alice, packet: $0, now: 0, ntp: NTPTime(raw: 0)) })
        XCTAssertEqual(router.participantStats(alice)?.malformedRTCP, 1)
    }
}
