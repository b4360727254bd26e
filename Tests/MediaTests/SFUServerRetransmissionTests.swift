import DTLS
import ICE
@testable import Media
import RTP
import SDP
import SRTP
import XCTest

/// Loss repair on the downlink: a subscriber's NACK (routed by the media SSRC it names) is
/// answered from the retransmission cache with the same packet it missed.
final class SFUServerRetransmissionTests: XCTestCase {
    var server: SFUServer!
    let events = ServerEvents()

    override func tearDown() {
        server?.stop()
        server = nil
    }

    func testSubscriberNACKIsAnsweredFromTheCache() throws {
        server = try SFUServer(configuration: MediaConfiguration(host: "127.0.0.1", port: 0, ssrcSeed: 7))
        events.attach(to: server)
        server.start()
        let a = try SyntheticClient("alice/phone", serverPort: server.port)
        let b = try SyntheticClient("bob/laptop", serverPort: server.port)
        try joinAndConnect(a, server: server, room: "r1", events: events, others: [])
        try joinAndConnect(b, server: server, room: "r1", events: events, others: [a])
        try settleOffers([a, b], server: server, events: events)
        let ssrc = try XCTUnwrap(b.offeredStreams.first { $0.value == a.member.streamID }?.key)

        // The first NACK allocates the subscription's cache (docs/rtcp.md: caches exist for
        // subscribers that NACK); it names a packet from before, which is counted missing.
        func nack(_ sequenceNumbers: [UInt16]) throws {
            var packet = try RTCPCompound.serialize([.nack(RTCPGenericNACK(senderSSRC: b.ssrc, mediaSSRC: ssrc, sequenceNumbers: sequenceNumbers))])
            packet.reserveCapacity(packet.count + 32)
            try XCTUnwrap(b.srtp).protectRTCP(&packet)
            b.send(packet)
        }
        try a.sendRTP(payload: Array("warm-up".utf8))
        XCTAssertTrue(try drive([a, b]) { !b.received.isEmpty })
        try nack([b.received[0].sequenceNumber])
        _ = try drive([a, b], timeout: 0.2) { false }

        // Subscriber-side sequence numbers are continuous: the warm-up was S, pkt-k is S+1+k.
        let lostSequence = b.received[0].sequenceNumber &+ 5
        b.dropOnArrival = [lostSequence]
        b.received.removeAll()
        for index in 0..<10 { try a.sendRTP(payload: Array("pkt-\(index)".utf8)) }
        XCTAssertTrue(try drive([a, b]) { b.received.count >= 9 })
        XCTAssertFalse(b.received.contains { $0.sequenceNumber == lostSequence })
        b.received.removeAll()
        try nack([lostSequence])
        XCTAssertTrue(try drive([a, b]) { !b.received.isEmpty }, "stats \(server.stats().counters)")
        // No RTX negotiated for audio: the original packet comes again, same SSRC and seq.
        let repaired = try XCTUnwrap(b.received.first)
        XCTAssertEqual(repaired.sequenceNumber, lostSequence)
        XCTAssertEqual(repaired.ssrc, ssrc)
        XCTAssertEqual(String(decoding: repaired.payload, as: UTF8.self), "pkt-4")
        XCTAssertGreaterThanOrEqual(server.stats().counters.retransmitted, 1)
    }
}
