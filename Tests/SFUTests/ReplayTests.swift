import RTP
import XCTest
@testable import SFU

/// Every (SSRC, sequence number) reaches a subscriber at most once: a second copy fails
/// libsrtp's replay check in the subscriber's browser (err=9), after its transport counted
/// the bytes and before transport-cc records them, so it reads as loss to our estimator.
/// Seen with Chromium: a muted/idle publisher pads on RTX with copies of its last packet
/// (kRtxRedundantPayloads), hundreds of times per second of probing.
final class ReplayTests: XCTestCase {
    let vp8WithRTX = CodecDescription(name: "VP8", payloadType: 96, clockRate: 90000, rtxPayloadType: 97)

    func testRTXPaddingCopiesAndDuplicatesAreNotForwardedButRealRepairsAre() throws {
        let router = makeRouter()
        try router.join(alice, room: room, description: receiver("a"), now: 0)
        try router.join(bob, room: room, description: receiver("b"), now: 0)
        try router.publish(alice, track: TrackDescription(
            id: TrackID("cam"), kind: .video, codecs: [vp8WithRTX],
            layers: [StreamDescription(ssrc: 0x1A, rtxSSRC: 0x1B)], extensions: publisherExtensions), now: 0)
        var out: [Received] = []
        out += try send(router, from: alice, rtpPacket(ssrc: 0x1A, seq: 100, ts: 0, pt: 96, payload: vp8Keyframe), now: 0)
        out += try send(router, from: alice, rtpPacket(ssrc: 0x1A, seq: 101, ts: 3000, pt: 96, payload: vp8Delta), now: 33_000)
        out += try send(router, from: alice, rtpPacket(ssrc: 0x1A, seq: 103, ts: 9000, pt: 96, payload: vp8Delta), now: 100_000)  // 102 lost
        XCTAssertEqual(out.count, 3)

        // Payload padding: the sender repeats its last packets on RTX many times.
        var rtxSeq: UInt16 = 7000
        for _ in 0..<50 {
            for osn: UInt16 in [101, 103] {
                var result = RTPDisposition.malformed
                XCTAssertEqual(try send(router, from: alice, rtx(osn: osn, rtxSeq: rtxSeq, ts: 0, payload: vp8Delta), now: 110_000, disposition: &result).count, 0)
                XCTAssertEqual(result, .retransmission)
                rtxSeq &+= 1
            }
        }
        // A network duplicate of a media packet.
        var result = RTPDisposition.malformed
        XCTAssertEqual(try send(router, from: alice, rtpPacket(ssrc: 0x1A, seq: 103, ts: 9000, pt: 96, payload: vp8Delta), now: 111_000, disposition: &result).count, 0)
        XCTAssertEqual(result, .duplicate)

        // The repair of the lost packet is forwarded, once.
        let repaired = try send(router, from: alice, rtx(osn: 102, rtxSeq: rtxSeq, ts: 6000, payload: vp8Delta), now: 150_000)
        XCTAssertEqual(repaired.count, 1)
        out += repaired
        XCTAssertEqual(try send(router, from: alice, rtx(osn: 102, rtxSeq: rtxSeq &+ 1, ts: 6000, payload: vp8Delta), now: 151_000).count, 0)
        out += try send(router, from: alice, rtpPacket(ssrc: 0x1A, seq: 104, ts: 12000, pt: 96, payload: vp8Delta), now: 160_000)

        XCTAssertEqual(out.count, 5)
        XCTAssertEqual(Set(out.map(\.seq)).count, out.count, "no sequence number reaches the subscriber twice")
        let first = try XCTUnwrap(out.first?.seq)
        XCTAssertEqual(out.map { $0.seq &- first }, [0, 1, 3, 2, 4])
    }
}
