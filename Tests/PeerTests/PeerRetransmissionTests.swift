@testable import Peer
import SDP
import XCTest

/// The pure parts of the peer's loss repair: RTX in its descriptions (against the server's
/// real SDP builders), the send-side packet cache and the residual-loss tracker.
final class PeerRetransmissionTests: XCTestCase {
    let transport = PeerTransport(iceUfrag: "pEeR", icePwd: "peerPasswordOf22Chars++",
                                  fingerprint: "sha-256 " + Array(repeating: "AB", count: 32).joined(separator: ":"),
                                  candidates: ["1 1 UDP 2015363327 127.0.0.1 40001 typ host"])
    let serverFingerprint = Fingerprint(hashFunction: "sha-256", bytes: Array(repeating: 0xCD, count: 32))
    var server: SFUTransportParameters {
        SFUTransportParameters(iceUfrag: "srv1", icePwd: "serverPasswordOf22Chars", fingerprint: serverFingerprint,
                               address: "127.0.0.1", port: 50000)
    }

    /// RFC 4588 §8: an RTX format with apt and an FID group pairing the SSRCs; the server's
    /// answer builder keeps RTX and the peer reads the answered RTX payload type back.
    func testRTXOfferIsAnsweredByTheServerAndReadBack() throws {
        let video = PeerTrack(mid: "0", codec: .vp8, ssrc: 2222, streamID: "alice/laptop", trackID: "video", cname: "c1", rtxSSRC: 3333)
        let text = PeerSDP.offer(transport: transport, tracks: [video], sessionID: "1", sessionVersion: 2)
        let offer = try SessionDescription(parsing: text)
        XCTAssertEqual(offer.media[0].formats, ["96", "97"])
        XCTAssertEqual(try offer.media[0].ssrcGroups(), [SSRCGroup(semantics: "FID", ssrcs: [2222, 3333])])
        XCTAssertEqual(Set(try offer.media[0].ssrcs()), [2222, 3333])
        let answer = try SFUAnswerBuilder(transport: server, sessionID: "9").answer(toOfferText: text)
        let remote = try RemoteDescription(parsing: answer.sdp)
        XCTAssertEqual(remote.sections[0].rtxPayloadTypes, [97: 96])
        XCTAssertEqual(remote.sections[0].payloadTypes, [96: .vp8], "rtx is not a codec the peer decodes")

        // An audio track never gets RTX, and a video track without an RTX SSRC offers none.
        XCTAssertNil(PeerTrack(mid: "0", codec: .opus, ssrc: 1, streamID: "a", trackID: "a", cname: "c", rtxSSRC: 5).rtxSSRC)
        let plain = PeerSDP.offer(transport: transport, tracks: [PeerTrack(mid: "0", codec: .vp8, ssrc: 2222, streamID: "a", trackID: "v", cname: "c")],
                                  sessionID: "1", sessionVersion: 2)
        XCTAssertEqual(try SessionDescription(parsing: plain).media[0].formats, ["96"])
    }

    /// A server offer forwarding video with RTX: the peer maps the RTX SSRC to the media SSRC,
    /// and its answer keeps the RTX format only when it accepts RTX.
    func testServerOfferRTXIsMappedAndAcceptedOnRequest() throws {
        let forwarded = ForwardedTrack(streamID: "bob/phone", trackID: "v", ssrc: 0xB0C, rtxSSRC: 0xB0D, cname: "bob")
        let description = SFUOfferBuilder(transport: server, sessionID: "77", sessionVersion: 3)
            .offer(sections: [.init(mid: "0", kind: .video, track: forwarded)])
        let remote = try RemoteDescription(parsing: description.serialized)
        XCTAssertEqual(remote.sections[0].rtxSSRCs, [0xB0D: 0xB0C])
        let vp8 = try XCTUnwrap(remote.sections[0].payloadTypes.first { $0.value == .vp8 }?.key)
        let rtx = try XCTUnwrap(remote.sections[0].rtxPayloadTypes.first { $0.value == vp8 }?.key)
        for accept in [true, false] {
            let text = try PeerSDP.answer(to: remote.sdp, transport: transport, tracks: [], setup: .active, sessionID: "1",
                                          sessionVersion: 2, acceptRTX: accept)
            let answer = try SessionDescription(parsing: text)
            try answer.validateWebRTCAttributes()
            XCTAssertEqual(answer.media[0].formats, accept ? [String(vp8), String(rtx)] : [String(vp8)])
            XCTAssertEqual(try answer.media[0].ssrcs(), [], "receive-only: no SSRC lines")
        }
    }

    func testSendPacketCacheAnswersWithinItsAgeAndCountBounds() {
        var cache = SendPacketCache(capacity: 3, maxAgeMicroseconds: 1_000)
        cache.store(ssrc: 7, sequenceNumber: 65_535, packet: [1], now: 0)
        cache.store(ssrc: 7, sequenceNumber: 0, packet: [2], now: 100)
        cache.store(ssrc: 9, sequenceNumber: 0, packet: [3], now: 200)
        XCTAssertEqual(cache.packet(ssrc: 7, sequenceNumber: 65_535, now: 1_000), [1])
        XCTAssertEqual(cache.packet(ssrc: 7, sequenceNumber: 0, now: 1_000), [2], "same sequence, other SSRC kept apart")
        XCTAssertEqual(cache.packet(ssrc: 9, sequenceNumber: 0, now: 1_000), [3])
        XCTAssertNil(cache.packet(ssrc: 7, sequenceNumber: 65_535, now: 1_001), "older than maxAge")
        XCTAssertNil(cache.packet(ssrc: 7, sequenceNumber: 1, now: 0), "never sent")
        cache.store(ssrc: 7, sequenceNumber: 1, packet: [4], now: 300)
        XCTAssertNil(cache.packet(ssrc: 7, sequenceNumber: 65_535, now: 300), "the oldest made room")
        XCTAssertEqual(cache.packet(ssrc: 7, sequenceNumber: 1, now: 300), [4])
        XCTAssertEqual(cache.count, 3)
    }

    func testResidualLossCountsWhatIsStillMissingAfterTheWindow() {
        var tracker = ResidualLossTracker(windowMicroseconds: 1_000)
        XCTAssertEqual(tracker.record(65_533, now: 0), .first)
        XCTAssertEqual(tracker.record(1, now: 10), .new(gap: 3), "65534, 65535 and 0 missing across the wrap")
        XCTAssertEqual(tracker.record(65_535, now: 500), .repaired)
        XCTAssertEqual(tracker.record(65_535, now: 600), .duplicateOrLate)
        XCTAssertEqual(tracker.pending, 2)
        tracker.settle(now: 1_010)
        XCTAssertEqual(tracker.pending, 2, "exactly the window: still repairable")
        tracker.settle(now: 1_011)
        XCTAssertEqual(tracker.residualLost, 2)
        XCTAssertEqual(tracker.record(0, now: 1_100), .duplicateOrLate, "after the window a repair is too late")
        XCTAssertEqual(tracker.repaired, 1)
        XCTAssertEqual(tracker.duplicates, 2)
        XCTAssertEqual(tracker.record(5_000, now: 1_200), .restarted, "an outage, not 4998 losses")
        XCTAssertEqual(tracker.record(5_001, now: 1_300), .new(gap: 0))
        XCTAssertEqual(tracker.residualLost, 2)
    }
}
