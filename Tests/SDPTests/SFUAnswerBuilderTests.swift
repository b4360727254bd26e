import XCTest
@testable import SDP

final class SFUAnswerBuilderTests: XCTestCase {
    private let builder = SFUAnswerBuilder(transport: serverTransport, sessionID: "4611731400430051336", sessionVersion: 2)

    /// Answers a fixture, re-parses the answer text and checks the rules every answer obeys.
    private func answerAndReparse(_ fixture: Fixture, builder: SFUAnswerBuilder? = nil) throws -> (SFUAnswer, SessionDescription, SessionDescription) {
        let offer = try fixture.parsed()
        let answer = try (builder ?? self.builder).answer(toOfferText: fixture.text())
        let parsed = try SessionDescription(parsing: answer.sdp)
        XCTAssertEqual(parsed, answer.description)
        try parsed.validateWebRTCAttributes()
        XCTAssertTrue(parsed.iceLite)
        XCTAssertEqual(parsed.origin.sessionID, "4611731400430051336")
        XCTAssertEqual(parsed.media.map(\.mid), offer.media.map(\.mid), "same mids in the same order")
        XCTAssertEqual(parsed.media.map(\.media), offer.media.map(\.media))
        let bundle = try XCTUnwrap(parsed.bundleGroup())
        XCTAssertEqual(bundle.mids, parsed.media.filter { !$0.isRejected }.compactMap(\.mid))
        for (section, offered) in zip(parsed.media, offer.media) where !section.isRejected {
            XCTAssertEqual(section.port, 40000)
            XCTAssertEqual(section.connections, [Connection(address: "127.0.0.1")])
            XCTAssertTrue(section.rtcpMux)
            XCTAssertEqual(try section.setup(), .passive)
            XCTAssertEqual(try section.fingerprints(), [serverTransport.fingerprint])
            XCTAssertEqual(section.iceUfrag, "sfu1")
            XCTAssertEqual(section.icePwd, "0123456789abcdefghijkl")
            XCTAssertEqual(try section.candidates(), serverTransport.candidates)
            XCTAssertTrue(section.endOfCandidates)
            // Only offered payload types, with the offer's numbering and codec names.
            let offeredFormats = try offered.payloadFormats()
            for format in try section.payloadFormats() {
                let original = try XCTUnwrap(offeredFormats.first { $0.payloadType == format.payloadType })
                XCTAssertEqual(format.rtpMap?.normalizedName, original.rtpMap?.normalizedName)
                XCTAssertEqual(format.associatedPayloadType, original.associatedPayloadType)
                XCTAssertTrue(Set(format.feedback.map(\.kind)).isSubset(of: Set(original.feedback.map(\.kind))))
            }
            // Header extensions: only the supported URIs, with the offer's ids.
            let offeredExtensions = try offer.headerExtensions(for: offered)
            for header in try section.headerExtensions() {
                XCTAssertNotNil(header.knownURI, header.uri)
                XCTAssertEqual(offeredExtensions.first { $0.uri == header.uri }?.id, header.id)
            }
        }
        return (answer, offer, parsed)
    }

    func testChromiumSimulcastPublisher() throws {
        let (answer, _, parsed) = try answerAndReparse(.chromiumSimulcast)
        XCTAssertEqual(try parsed.bundleGroup()?.mids, ["0", "1"])
        XCTAssertTrue(parsed.extmapAllowMixed)
        let audio = parsed.media[0], video = parsed.media[1]
        XCTAssertEqual(audio.direction, .recvonly, "sendonly offer → recvonly")
        XCTAssertEqual(audio.formats, ["111"])
        XCTAssertEqual(try audio.payloadFormats().first?.formatParameters?.text, "minptime=10;useinbandfec=1")
        XCTAssertEqual(try audio.headerExtensions().map(\.id), [1, 2, 3, 4])
        XCTAssertTrue(audio.rtcpReducedSize)
        XCTAssertEqual(video.direction, .recvonly)
        XCTAssertEqual(video.formats, ["96", "97", "108", "109"], "VP8+rtx and H.264 42e01f pm=1 + rtx, offer numbers")
        let vp8 = try XCTUnwrap(video.payloadFormats().first)
        XCTAssertEqual(vp8.feedback.map(\.kind), ["goog-remb", "transport-cc", "ccm fir", "nack", "nack pli"])
        XCTAssertEqual(try video.payloadFormats()[2].formatParameters?["profile-level-id"], "42e01f")
        XCTAssertEqual(Set(try video.headerExtensions().map(\.id)), [2, 3, 4, 10, 11])
        XCTAssertEqual(try video.simulcast(), Simulcast(recv: [[.init(rid: "q")], [.init(rid: "h")], [.init(rid: "f")]]))
        XCTAssertTrue(video.attributes.contains(SDPAttribute("simulcast", "recv q;h;f")))
        XCTAssertEqual(try video.rids(), ["q", "h", "f"].map { RIDDescription(id: $0, direction: .recv) })
        XCTAssertEqual(try video.msids(), [], "recvonly answer announces no tracks")

        XCTAssertEqual(answer.sections[1].receivedRIDs, ["q", "h", "f"])
        XCTAssertEqual(answer.sections[1].headerExtensions[.rid], 10)
        XCTAssertEqual(answer.sections[0].remoteSSRCs, [3724431602])
        XCTAssertEqual(answer.codecMap.payload(for: 111), .media(.opus))
        XCTAssertEqual(answer.codecMap.payload(for: 97), .rtx(.vp8))
        XCTAssertEqual(answer.codecMap.payload(for: 108), .media(.h264))
        XCTAssertNil(answer.codecMap.payload(for: 102), "H.264 42001f is not accepted")
        XCTAssertNil(answer.codecMap.payload(for: 98), "VP9 is not accepted")
    }

    func testAiortcPublisher() throws {
        let (answer, _, parsed) = try answerAndReparse(.aiortc)
        XCTAssertEqual(parsed.media[0].direction, .recvonly, "sendrecv offer → recvonly for a publisher")
        XCTAssertEqual(parsed.media[0].formats, ["96"], "aiortc numbers opus 96")
        XCTAssertEqual(parsed.media[1].formats, ["97", "98", "101", "102"])
        XCTAssertEqual(try parsed.media[1].payloadFormats().map(\.feedback.count), [3, 0, 3, 0],
                       "aiortc offers nack, nack pli, goog-remb only")
        XCTAssertEqual(try parsed.media[1].headerExtensions().map(\.knownURI), [.mid, .absSendTime])
        XCTAssertNil(try parsed.media[1].simulcast())
        XCTAssertEqual(answer.sections[1].remoteSSRCGroups, [SSRCGroup(semantics: "FID", ssrcs: [1625818373, 1888078402])])
        XCTAssertEqual(answer.codecMap.payloadType(for: .opus), 96)
        XCTAssertEqual(answer.codecMap.rtxPayloadType(for: .h264), 102)
    }

    func testFirefoxDataChannelIsRejected() throws {
        let (answer, _, parsed) = try answerAndReparse(.firefox)
        XCTAssertEqual(try parsed.bundleGroup()?.mids, ["0", "1"])
        let data = parsed.media[2]
        XCTAssertEqual(data.port, 0)
        XCTAssertEqual(data.mid, "2")
        XCTAssertEqual(data.proto, "UDP/DTLS/SCTP")
        XCTAssertEqual(answer.sections[2].rejection, .unsupportedMedia)
        XCTAssertEqual(parsed.media[1].formats, ["120", "124", "126", "127"], "H.264 97 lacks packetization-mode=1")
        XCTAssertEqual(try parsed.media[0].headerExtensions().map(\.id), [1, 3], "csrc-audio-level dropped")
        XCTAssertEqual(answer.codecMap.payloadType(for: .opus), 109)
    }

    func testDirectionDecisionsPerMid() throws {
        var sending = builder
        sending.directions = ["0": .sendrecv, "1": .inactive]
        sending.sendingTracks["0"] = ForwardedTrack(streamID: "alice", trackID: "alice-audio", ssrc: 1111, cname: "alice")
        let (answer, _, parsed) = try answerAndReparse(.aiortc, builder: sending)
        XCTAssertEqual(parsed.media[0].direction, .sendrecv)
        XCTAssertEqual(try parsed.media[0].msids(), [MediaStreamID(streamID: "alice", trackID: "alice-audio")])
        XCTAssertEqual(try parsed.media[0].ssrcs(), [1111])
        XCTAssertEqual(parsed.media[1].direction, .inactive)
        XCTAssertEqual(answer.sections.map(\.direction), [.sendrecv, .inactive])

        // A sendonly offer can never be answered with send: the answer is limited by the offer.
        var greedy = builder
        greedy.defaultDirection = .sendrecv
        let (_, _, limited) = try answerAndReparse(.chromiumSimulcast, builder: greedy)
        XCTAssertEqual(limited.media.map(\.direction), [.recvonly, .recvonly])
    }

    func testUnsupportedCodecsRejectTheSection() throws {
        var audioOnly = builder
        audioOnly.codecs = [.opus]
        let (answer, _, parsed) = try answerAndReparse(.chromiumSimulcast, builder: audioOnly)
        XCTAssertEqual(parsed.media[1].port, 0)
        XCTAssertEqual(answer.sections[1].rejection, .noCommonCodec)
        XCTAssertEqual(try parsed.bundleGroup()?.mids, ["0"])
        XCTAssertNil(answer.codecMap.payload(for: 96))
    }

    func testOfferErrors() throws {
        let text = try Fixture.aiortc.text()
        XCTAssertThrowsError(try builder.answer(toOfferText: text.replacingOccurrences(of: "a=mid:1\r\n", with: ""))) {
            XCTAssertEqual($0 as? SFUNegotiationError, .missingMid(sectionIndex: 1))
        }
        XCTAssertThrowsError(try builder.answer(toOfferText: text.replacingOccurrences(of: "a=mid:1\r\n", with: "a=mid:0\r\n"))) {
            XCTAssertEqual($0 as? SFUNegotiationError, .duplicateMid("0"))
        }
        XCTAssertThrowsError(try builder.answer(toOfferText: text.replacingOccurrences(of: "a=setup:actpass", with: "a=setup:passive"))) {
            XCTAssertEqual($0 as? SFUNegotiationError, .unsupportedSetup(mid: "0"))
        }
        let noFingerprint = text.split(separator: "\r\n").filter { !$0.hasPrefix("a=fingerprint") }.joined(separator: "\r\n")
        XCTAssertThrowsError(try builder.answer(toOfferText: noFingerprint)) {
            XCTAssertEqual($0 as? SFUNegotiationError, .missingFingerprint(mid: "0"))
        }
        let noPwd = text.split(separator: "\r\n").filter { !$0.hasPrefix("a=ice-pwd") }.joined(separator: "\r\n")
        XCTAssertThrowsError(try builder.answer(toOfferText: noPwd)) {
            XCTAssertEqual($0 as? SFUNegotiationError, .missingICECredentials(mid: "0"))
        }
        XCTAssertThrowsError(try builder.answer(toOfferText: text.replacingOccurrences(of: "a=rtpmap:96 opus/48000/2", with: "a=rtpmap:96 opus"))) {
            XCTAssertEqual($0 as? SFUNegotiationError, .invalidSDP(.invalidAttribute(line: 17, name: "rtpmap")))
        }
        XCTAssertThrowsError(try builder.answer(toOfferText: "hello")) {
            XCTAssertEqual(($0 as? SFUNegotiationError)?.code, "sdp_malformed_line")
        }
        let noMux = try builder.answer(toOfferText: text.replacingOccurrences(of: "a=rtcp-mux\r\n", with: ""))
        XCTAssertEqual(noMux.sections.map(\.rejection), [.noRTCPMux, .noRTCPMux])
    }

    /// RFC 8853 §5.3 needs the rid header extension; RFC 8851 §4: rids restricted to payload
    /// types the answer drops are removed, the others keep only accepted types.
    func testSimulcastNeedsRIDExtensionAndUsablePayloadTypes() throws {
        let text = try Fixture.chromiumSimulcast.text()
        let withoutRIDExtension = text.replacingOccurrences(of: "a=extmap:10 urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id\r\n", with: "")
        let plain = try builder.answer(toOfferText: withoutRIDExtension)
        XCTAssertNil(try plain.description.media[1].simulcast())
        XCTAssertEqual(plain.sections[1].receivedRIDs, [])

        let restricted = text
            .replacingOccurrences(of: "a=rid:q send\r\n", with: "a=rid:q send pt=98\r\n")
            .replacingOccurrences(of: "a=rid:h send\r\n", with: "a=rid:h send pt=98,96;max-width=640\r\n")
        let answer = try builder.answer(toOfferText: restricted)
        let video = answer.description.media[1]
        XCTAssertEqual(try video.simulcast()?.recvRIDs, ["h", "f"], "q only allowed VP9")
        XCTAssertEqual(try video.rids(), [RIDDescription(id: "h", direction: .recv, payloadTypes: [96]),
                                         RIDDescription(id: "f", direction: .recv)])
    }

    func testICEOptionsAndLiteAccessors() throws {
        let text = "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\na=ice-lite\r\na=ice-options:trickle ice2\r\n"
            + "m=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=mid:a\r\n"
        let parsed = try SessionDescription(parsing: text)
        XCTAssertTrue(parsed.iceLite)
        XCTAssertEqual(parsed.iceOptions(for: parsed.media[0]), ["trickle", "ice2"])
        XCTAssertEqual(parsed.section(mid: "a")?.formats, ["111"])
        XCTAssertFalse(try Fixture.aiortc.parsed().iceLite)
    }
}
