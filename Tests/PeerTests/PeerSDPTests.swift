import DTLS
import Peer
import SDP
import XCTest

/// The peer's descriptions against the server's real SDP code (parser, SFUAnswerBuilder,
/// SFUOfferBuilder), without sockets.
final class PeerSDPTests: XCTestCase {
    let transport = PeerTransport(iceUfrag: "pEeR", icePwd: "peerPasswordOf22Chars++",
                                  fingerprint: "sha-256 " + Array(repeating: "AB", count: 32).joined(separator: ":"),
                                  candidates: ["1 1 UDP 2015363327 127.0.0.1 40001 typ host"])
    let tracks = [
        PeerTrack(mid: "0", codec: .opus, ssrc: 1111, streamID: "alice/laptop", trackID: "audio", cname: "c1"),
        PeerTrack(mid: "1", codec: .vp8, ssrc: 2222, streamID: "alice/laptop", trackID: "video", cname: "c1"),
    ]
    let serverFingerprint = Fingerprint(hashFunction: "sha-256", bytes: Array(repeating: 0xCD, count: 32))

    func testOfferCarriesEveryWebRTCAttribute() throws {
        let text = PeerSDP.offer(transport: transport, tracks: tracks, sessionID: "123", sessionVersion: 2)
        let offer = try SessionDescription(parsing: text)
        try offer.validateWebRTCAttributes()
        XCTAssertEqual(try offer.bundleGroup()?.mids, ["0", "1"])
        XCTAssertEqual(offer.media.map(\.mid), ["0", "1"])
        let audio = offer.media[0], video = offer.media[1]
        XCTAssertEqual(audio.formats, ["111"])
        XCTAssertEqual(video.formats, ["96"])
        for section in offer.media {
            XCTAssertTrue(section.rtcpMux)
            XCTAssertEqual(try offer.setup(for: section), .actpass)
            XCTAssertEqual(offer.iceUfrag(for: section), "pEeR")
            XCTAssertEqual(try offer.fingerprints(for: section).first?.bytes, Array(repeating: 0xAB, count: 32))
            XCTAssertEqual(try section.candidates().first?.port, 40001)
            XCTAssertEqual(try offer.headerExtensions(for: section).first { $0.knownURI == .mid }?.id, 4)
            XCTAssertEqual(section.direction, .sendrecv)
        }
        XCTAssertEqual(try audio.ssrcs(), [1111])
        XCTAssertEqual(try audio.msids().first?.streamID, "alice%2Flaptop", "escaped into an RFC 8830 msid-id token")
        let opus = try XCTUnwrap(try audio.payloadFormats().first)
        XCTAssertEqual(opus.rtpMap?.attributeValue, "111 opus/48000/2")
        XCTAssertTrue(text.contains("a=fmtp:111 minptime=10;useinbandfec=1"), text)
        XCTAssertTrue(text.contains("a=rtcp-fb:96 nack pli"))
        XCTAssertEqual(try video.ssrcs(), [2222])
    }

    /// The lead's SFUAnswerBuilder accepts the offer; the peer reads the answer back.
    func testServerAnswerBuilderAcceptsOfferAndPeerReadsAnswer() throws {
        let text = PeerSDP.offer(transport: transport, tracks: tracks, sessionID: "123", sessionVersion: 2)
        let server = SFUTransportParameters(iceUfrag: "srv1", icePwd: "serverPasswordOf22Chars", fingerprint: serverFingerprint,
                                            address: "127.0.0.1", port: 50000)
        let answer = try SFUAnswerBuilder(transport: server, sessionID: "9").answer(toOfferText: text)
        XCTAssertEqual(answer.codecMap.payloadType(for: .opus), 111)
        XCTAssertEqual(answer.codecMap.payloadType(for: .vp8), 96)
        let remote = try RemoteDescription(parsing: answer.sdp)
        XCTAssertTrue(remote.iceLite)
        XCTAssertEqual(remote.iceUfrag, "srv1")
        XCTAssertEqual(remote.icePwd, "serverPasswordOf22Chars")
        XCTAssertEqual(remote.setup, .passive)
        XCTAssertEqual(remote.fingerprint, DTLSFingerprint(algorithm: .sha256, bytes: serverFingerprint.bytes))
        XCTAssertEqual(remote.candidates, ["1 1 udp 2130706431 127.0.0.1 50000 typ host"])
        XCTAssertEqual(remote.sections.map(\.mid), ["0", "1"])
        XCTAssertEqual(remote.sections.map(\.direction), [.recvonly, .recvonly], "§9: recvonly for every offered send track")
        XCTAssertEqual(remote.sections[0].payloadTypes, [111: .opus])
        XCTAssertEqual(remote.sections[1].payloadTypes[96], .vp8)
    }

    /// A server offer (the lead's SFUOfferBuilder) with our two sections and two forwarded
    /// tracks: the answer is sendonly on ours, recvonly on the forwarded ones, setup:active.
    func testAnswerToServerOfferReceivesForwardedTracks() throws {
        let server = SFUTransportParameters(iceUfrag: "srv1", icePwd: "serverPasswordOf22Chars", fingerprint: serverFingerprint,
                                            address: "127.0.0.1", port: 50000)
        let builder = SFUOfferBuilder(transport: server, sessionID: "77", sessionVersion: 3)
        let forwardedAudio = ForwardedTrack(streamID: "bob%2Fphone", trackID: "a", ssrc: 0xB0B, cname: "bob")
        let forwardedVideo = ForwardedTrack(streamID: "bob%2Fphone", trackID: "v", ssrc: 0xB0C, rtxSSRC: 0xB0D, cname: "bob")
        var description = builder.offer(sections: [
            .init(mid: "0", kind: .audio, track: nil), .init(mid: "1", kind: .video, track: nil),
            .init(mid: "2", kind: .audio, track: forwardedAudio), .init(mid: "3", kind: .video, track: forwardedVideo),
        ])
        // Our own sections come back as the server's receive side.
        description.media[0].direction = .recvonly
        description.media[1].direction = .recvonly
        let offerText = description.serialized
        let remote = try RemoteDescription(parsing: offerText)
        XCTAssertEqual(remote.sections[2].ssrcs, [0xB0B])
        XCTAssertEqual(remote.sections[2].streamID, "bob/phone", "the member's stream id is decoded")

        let answerText = try PeerSDP.answer(to: remote.sdp, transport: transport, tracks: tracks, setup: .active,
                                            sessionID: "123", sessionVersion: 3)
        let answer = try SessionDescription(parsing: answerText)
        try answer.validateWebRTCAttributes()
        XCTAssertEqual(answer.media.map(\.mid), ["0", "1", "2", "3"])
        XCTAssertEqual(answer.media.map(\.direction), [.sendonly, .sendonly, .recvonly, .recvonly])
        XCTAssertEqual(try answer.bundleGroup()?.mids, ["0", "1", "2", "3"])
        XCTAssertEqual(try answer.media.map { try answer.setup(for: $0) }, Array(repeating: DTLSSetup.active, count: 4))
        let opusPT = try XCTUnwrap(try description.media[2].payloadFormats().first { $0.rtpMap?.normalizedName == "opus" }?.payloadType)
        XCTAssertEqual(answer.media[2].formats, [String(opusPT)], "the offer's payload type")
        XCTAssertEqual(try answer.media[0].ssrcs(), [1111], "our track keeps its SSRC")
        XCTAssertEqual(try answer.media[2].ssrcs(), [], "no SSRC on a receive-only section")
        XCTAssertEqual(try answer.media[3].headerExtensions().first { $0.knownURI == .mid }?.id, 4)
    }

    func testAnswerRejectsUnsupportedAndStoppedSections() throws {
        let offer = """
        v=0\r
        o=- 1 1 IN IP4 127.0.0.1\r
        s=-\r
        t=0 0\r
        a=group:BUNDLE 0\r
        m=audio 9 UDP/TLS/RTP/SAVPF 0\r
        c=IN IP4 0.0.0.0\r
        a=mid:0\r
        a=ice-ufrag:srv1\r
        a=ice-pwd:serverPasswordOf22Chars\r
        a=fingerprint:sha-256 \(serverFingerprint.hex)\r
        a=setup:actpass\r
        a=sendonly\r
        a=rtpmap:0 PCMU/8000\r
        m=video 0 UDP/TLS/RTP/SAVPF 96\r
        c=IN IP4 0.0.0.0\r
        a=mid:1\r
        a=rtpmap:96 VP8/90000\r

        """
        let remote = try RemoteDescription(parsing: offer)
        let text = try PeerSDP.answer(to: remote.sdp, transport: transport, tracks: [], setup: .active, sessionID: "1",
                                      sessionVersion: 1)
        let answer = try SessionDescription(parsing: text)
        XCTAssertEqual(answer.media.map(\.port), [0, 0])
        XCTAssertNil(try answer.bundleGroup())
    }

    func testBadRemoteDescriptionsAreTypedErrors() {
        for bad in ["", "garbage", "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n"] {
            XCTAssertThrowsError(try RemoteDescription(parsing: bad)) {
                XCTAssertEqual(($0 as? PeerError)?.code, "invalidRemoteDescription", "\(bad)")
            }
        }
        let noFingerprint = PeerSDP.offer(transport: transport, tracks: tracks, sessionID: "1", sessionVersion: 1)
            .replacingOccurrences(of: "a=fingerprint:", with: "a=x-fingerprint:")
        XCTAssertThrowsError(try RemoteDescription(parsing: noFingerprint)) {
            XCTAssertEqual($0 as? PeerError, .invalidRemoteDescription("no sha-256 fingerprint"))
        }
    }
}
