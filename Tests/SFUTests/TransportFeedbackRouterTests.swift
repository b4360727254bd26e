import RTP
@testable import SFU
import XCTest

/// Transport-cc towards publishers (docs/rtcp.md): the router records the transport-wide
/// sequence number of every packet a publisher sends and reports arrivals and losses on tick.
final class TransportFeedbackRouterTests: XCTestCase {
    func testPublisherGetsTransportFeedbackForItsPacketsIncludingLosses() throws {
        let router = makeRouter()
        try router.join(alice, room: room, description: receiver("alice-cname"), now: 0)
        try router.join(bob, room: room, description: receiver("bob-cname"), now: 0)
        try router.publish(alice, track: audioTrack("a-audio", ssrc: 0x1111), now: 0)
        // Transport sequence 100…109 with 104 lost, 1 ms apart.
        for (index, transport) in (UInt16(100)...109).enumerated() where transport != 104 {
            let packet = rtpPacket(ssrc: 0x1111, seq: UInt16(500 + index), ts: UInt32(960 * index), pt: 111, extensions: [
                RTPHeaderExtension(id: publisherExtensions.transportCC, value: [UInt8(transport >> 8), UInt8(transport & 0xFF)]),
            ])
            _ = try send(router, from: alice, packet, now: 1_000_000 + Int64(index) * 1_000)
        }
        let outgoing = router.tick(now: 1_200_000, ntp: NTPTime(raw: 0))
        let feedback = outgoing.filter { $0.participant == alice }.flatMap(\.packets).compactMap { packet -> RTCPTransportFeedback? in
            if case .transportFeedback(let f) = packet { return f } else { return nil }
        }
        XCTAssertEqual(feedback.count, 1)
        let decoded = try XCTUnwrap(feedback.first).decoded()
        XCTAssertEqual(decoded.baseSequenceNumber, 100)
        let results = decoded.packetResults
        XCTAssertEqual(results.map(\.sequenceNumber), Array(100...109))
        XCTAssertEqual(results.filter { $0.arrivalMicros == nil }.map(\.sequenceNumber), [104])
        // Arrivals keep their 1 ms spacing (250 µs resolution).
        let arrivals = results.compactMap(\.arrivalMicros)
        XCTAssertEqual(arrivals[1] - arrivals[0], 1_000)
        XCTAssertFalse(outgoing.contains { $0.participant == bob && $0.packets.contains { if case .transportFeedback = $0 { true } else { false } } },
                       "bob sent nothing, so gets no feedback")
    }
}
