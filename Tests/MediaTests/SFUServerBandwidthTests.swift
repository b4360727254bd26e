import DTLS
import ICE
@testable import Media
import RTP
import SFU
import SRTP
import XCTest

/// Downlink congestion control wiring over real UDP (issue 4): the server records what it
/// sends a subscriber for the estimator, feeds the subscriber's REMB to it, terminates it
/// (nothing goes to the publisher), and reports the downlink in its stats.
final class SFUServerBandwidthTests: XCTestCase {
    var server: SFUServer!
    let events = ServerEvents()

    override func tearDown() {
        server?.stop()
        server = nil
    }

    func testSubscriberREMBReachesItsEstimateAndStats() throws {
        server = try SFUServer(configuration: MediaConfiguration(host: "127.0.0.1", port: 0, ssrcSeed: 11))
        events.attach(to: server)
        server.start()
        let a = try SyntheticClient("alice/phone", serverPort: server.port)
        let b = try SyntheticClient("bob/laptop", serverPort: server.port)
        try joinAndConnect(a, server: server, room: "r1", events: events, others: [])
        try joinAndConnect(b, server: server, room: "r1", events: events, others: [a])
        try settleOffers([a, b], server: server, events: events)
        for index in 0..<20 { try a.sendRTP(payload: [UInt8](repeating: UInt8(index), count: 160)) }
        XCTAssertTrue(try drive([a, b]) { b.received.count >= 20 })

        func member(_ client: SyntheticClient) -> SFUMemberStats? { server.stats().members.first { $0.member == client.member } }
        let sending = try XCTUnwrap(member(b)?.downlink)
        XCTAssertGreaterThan(sending.sendingBps, 0, "forwards are recorded for the estimator")
        XCTAssertEqual(sending.rembReceived, 0)
        XCTAssertEqual(sending.video, [], "audio only: no layer state")

        let rtcpAtPublisher = a.rtcpReceived
        var packet = try RTCPCompound.serialize([.remb(RTCPReceiverEstimatedMaxBitrate(senderSSRC: b.ssrc, bitrate: 64_000, ssrcs: []))])
        packet.reserveCapacity(packet.count + 32)
        try XCTUnwrap(b.srtp).protectRTCP(&packet)
        b.send(packet)
        XCTAssertTrue(try drive([a, b], timeout: 5) { member(b)?.downlink?.rembReceived == 1 })
        let downlink = try XCTUnwrap(member(b)?.downlink)
        XCTAssertEqual(downlink.rembBps, 64_000)
        XCTAssertEqual(downlink.estimateBps, 64_000, "with REMB alone the REMB is the estimate")
        // Terminated: alice gets at most its regular reports, and never a REMB of bob's
        // (a REMB-only publisher would get our own; alice has transport-cc).
        XCTAssertLessThanOrEqual(a.rtcpReceived - rtcpAtPublisher, 2)
        XCTAssertEqual(member(a)?.downlink?.rembSent, 0)
    }
}
