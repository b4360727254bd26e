import XCTest
@testable import SDP

final class SessionDescriptionParsingTests: XCTestCase {
    func testEveryFixtureRoundTripsByteForByte() throws {
        for fixture in Fixture.allCases {
            let text = try fixture.text()
            let parsed = try SessionDescription(parsing: text)
            XCTAssertEqual(parsed.serialized, text, fixture.rawValue)
            XCTAssertEqual(try SessionDescription(parsing: parsed.serialized), parsed, fixture.rawValue)
        }
    }

    func testChromiumSimulcastOffer() throws {
        let offer = try Fixture.chromiumSimulcast.parsed()
        XCTAssertEqual(offer.origin.sessionID, "8033953019111811624")
        XCTAssertEqual(offer.origin.sessionVersion, "2")
        XCTAssertEqual(try offer.bundleGroup()?.mids, ["0", "1"])
        XCTAssertTrue(offer.extmapAllowMixed)
        XCTAssertFalse(offer.iceLite)
        XCTAssertEqual(offer.media.map(\.media), ["audio", "video"])

        let audio = offer.media[0]
        XCTAssertEqual(audio.mid, "0")
        XCTAssertEqual(audio.port, 9)
        XCTAssertEqual(audio.connections, [Connection(address: "0.0.0.0")])
        XCTAssertEqual(audio.direction, .sendonly)
        XCTAssertTrue(audio.rtcpMux)
        XCTAssertTrue(audio.rtcpReducedSize)
        XCTAssertEqual(audio.iceUfrag, "3dH0")
        XCTAssertEqual(audio.icePwd, "qBK+iVF+yMWFYZymPh1pm7Wb")
        XCTAssertEqual(audio.iceOptions, ["trickle"])
        XCTAssertEqual(try audio.setup(), .actpass)
        XCTAssertEqual(try audio.fingerprints().first?.hashFunction, "sha-256")
        XCTAssertEqual(try audio.fingerprints().first?.bytes.count, 32)
        XCTAssertEqual(try audio.candidates(), [])
        XCTAssertEqual(try audio.msids(), [MediaStreamID(streamID: "3f95a578-f1b0-4422-b92c-a99fc526d481",
                                                         trackID: "0cd0b38a-d489-4f40-9c23-468dbb5c4ec1")])
        let opus = try XCTUnwrap(audio.payloadFormats().first)
        XCTAssertEqual(opus.payloadType, 111)
        XCTAssertEqual(opus.rtpMap, RTPMap(payloadType: 111, encodingName: "opus", clockRate: 48000, channels: 2))
        XCTAssertEqual(opus.formatParameters?["useinbandfec"], "1")
        XCTAssertEqual(opus.formatParameters?["minptime"], "10")
        XCTAssertEqual(opus.feedback.map(\.kind), ["transport-cc"])
        XCTAssertEqual(try audio.ssrcs(), [3724431602])
        let extensions = try audio.headerExtensions()
        XCTAssertEqual(extensions.first { $0.knownURI == .audioLevel }?.id, 1)
        XCTAssertEqual(extensions.first { $0.knownURI == .mid }?.id, 4)

        let video = offer.media[1]
        XCTAssertEqual(video.mid, "1")
        XCTAssertEqual(video.formats.count, 23)
        let formats = try video.payloadFormats()
        let vp8 = try XCTUnwrap(formats.first)
        XCTAssertEqual(vp8.rtpMap?.encodingName, "VP8")
        XCTAssertEqual(Set(vp8.feedback.map(\.kind)), ["goog-remb", "transport-cc", "ccm fir", "nack", "nack pli"])
        XCTAssertEqual(formats.first { $0.payloadType == 97 }?.associatedPayloadType, 96)
        XCTAssertEqual(formats.first { $0.payloadType == 108 }?.formatParameters?["profile-level-id"], "42e01f")
        XCTAssertEqual(try video.rids().map(\.id), ["q", "h", "f"])
        XCTAssertEqual(try video.rids().map(\.direction), [.send, .send, .send])
        let simulcast = try XCTUnwrap(video.simulcast())
        XCTAssertEqual(simulcast.sendRIDs, ["q", "h", "f"])
        XCTAssertEqual(simulcast.recv, [])
        XCTAssertEqual(try video.ssrcs(), [], "Chromium announces no SSRCs for rid-based simulcast")
        let videoExtensions = try video.headerExtensions()
        XCTAssertEqual(videoExtensions.first { $0.knownURI == .rid }?.id, 10)
        XCTAssertEqual(videoExtensions.first { $0.knownURI == .repairedRID }?.id, 11)
        XCTAssertEqual(videoExtensions.first { $0.knownURI == .transportWideCC }?.id, 3)
        XCTAssertEqual(videoExtensions.first { $0.knownURI == .absSendTime }?.id, 2)
        XCTAssertEqual(videoExtensions.count, 13, "unknown extensions are kept")
    }

    func testChromiumGatheredCandidates() throws {
        let offer = try Fixture.chromiumGathered.parsed()
        let candidates = try offer.media[0].candidates()
        XCTAssertEqual(candidates.count, 8)
        let loopback = candidates[0]
        XCTAssertEqual(loopback.foundation, "3732470191")
        XCTAssertEqual(loopback.component, 1)
        XCTAssertEqual(loopback.transport, "udp")
        XCTAssertEqual(loopback.priority, 2122194687)
        XCTAssertEqual(loopback.address, "127.0.0.1")
        XCTAssertEqual(loopback.type, .host)
        XCTAssertEqual(loopback.extensions.map(\.name), ["generation", "network-id", "network-cost"])
        let tcp = try XCTUnwrap(candidates.first { $0.transport == "tcp" })
        XCTAssertEqual(tcp.port, 9)
        XCTAssertEqual(tcp.extensions.first { $0.name == "tcptype" }?.value, "active")
        XCTAssertTrue(candidates.contains { $0.address == "::1" })
    }

    func testAiortcOffer() throws {
        let offer = try Fixture.aiortc.parsed()
        XCTAssertEqual(try offer.bundleGroup()?.mids, ["0", "1"])
        XCTAssertEqual(offer.iceOptions, [], "aiortc does not trickle")
        let audio = offer.media[0], video = offer.media[1]
        XCTAssertEqual(audio.direction, .sendrecv)
        XCTAssertTrue(audio.hasAttribute("sendrecv"))
        XCTAssertEqual(audio.port, 35739)
        XCTAssertTrue(audio.endOfCandidates)
        let candidates = try audio.candidates()
        XCTAssertEqual(candidates.map(\.address), ["192.0.2.2", "fd00::2"])
        XCTAssertEqual(candidates[0].port, 35739)
        XCTAssertEqual(candidates[0].foundation, "f957a2332b1715da3b0ef8ba684454eb")
        XCTAssertEqual(try audio.fingerprints().map(\.hashFunction), ["sha-256", "sha-384", "sha-512"])
        XCTAssertEqual(try audio.fingerprints().map(\.bytes.count), [32, 48, 64])
        XCTAssertEqual(try audio.setup(), .actpass)
        XCTAssertEqual(try audio.payloadFormats().compactMap(\.rtpMap?.encodingName), ["opus", "G722", "PCMU", "PCMA"])
        XCTAssertEqual(try video.ssrcGroups(), [SSRCGroup(semantics: "FID", ssrcs: [1625818373, 1888078402])])
        XCTAssertEqual(try video.ssrcAttributes().first?.attribute, "cname")
        let h264 = try video.payloadFormats().filter { $0.rtpMap?.encodingName == "H264" }
        XCTAssertEqual(h264.map(\.payloadType), [99, 101])
        XCTAssertEqual(h264.map { $0.formatParameters?["profile-level-id"] }, ["42001f", "42e01f"])
    }

    func testFirefoxOfferUsesSessionLevelFingerprint() throws {
        let offer = try Fixture.firefox.parsed()
        let video = offer.media[1]
        XCTAssertEqual(try video.fingerprints(), [])
        XCTAssertEqual(try offer.fingerprints(for: video).first?.hashFunction, "sha-256")
        XCTAssertEqual(offer.iceOptions(for: video), ["trickle"])
        XCTAssertEqual(offer.media[2].kind, .application)
        XCTAssertEqual(offer.media[2].formats, ["webrtc-datachannel"])
        XCTAssertEqual(try offer.media[2].payloadFormats(), [])
        let extensions = try offer.media[0].headerExtensions()
        XCTAssertEqual(extensions[1].direction, .recvonly)
        XCTAssertEqual(extensions[1].id, 2)
    }

    func testSessionLevelLinesKeepTheirPlace() throws {
        let text = "v=0\r\no=jdoe 3724394400 3724394405 IN IP4 198.51.100.1\r\ns=Call to John Smith\r\n"
            + "i=SDP Offer #1\r\nu=http://www.jdoe.example.com/home.html\r\ne=Jane Doe <jane@jdoe.example.com>\r\n"
            + "p=+1 617 555-6011\r\nc=IN IP4 198.51.100.1\r\nb=AS:2000\r\nt=0 0\r\nr=7d 1h 0 25h\r\nz=2882844526 -1h\r\n"
            + "a=recvonly\r\nm=audio 49170/2 RTP/AVP 0\r\ni=voice\r\nc=IN IP6 2001:db8::2\r\nb=TIAS:64000\r\n"
            + "m=video 51372 RTP/AVP 99\r\nc=IN IP6 2001:db8::2\r\na=rtpmap:99 h263-1998/90000\r\n"
        let parsed = try SessionDescription(parsing: text)
        XCTAssertEqual(parsed.serialized, text)
        XCTAssertEqual(parsed.media[0].numberOfPorts, 2)
        XCTAssertEqual(parsed.media[0].bandwidths, [Bandwidth(type: "TIAS", value: 64000)])
        XCTAssertEqual(parsed.timings.first?.repeats, ["7d 1h 0 25h"])
        XCTAssertEqual(parsed.explicitDirection, .recvonly)
        XCTAssertEqual(parsed.media[1].direction, .sendrecv, "absent direction means sendrecv")
    }

    func testLineFeedOnlyInputIsAccepted() throws {
        let text = try Fixture.aiortc.text().replacingOccurrences(of: "\r\n", with: "\n")
        let parsed = try SessionDescription(parsing: text)
        XCTAssertEqual(parsed.serialized, try Fixture.aiortc.text())
    }
}
