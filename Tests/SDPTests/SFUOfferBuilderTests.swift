import Foundation
import XCTest
@testable import SDP

final class SFUOfferBuilderTests: XCTestCase {
    private let alice = ForwardedTrack(streamID: "alice", trackID: "alice-audio", ssrc: 0x1234_5678, cname: "alice-cname")
    private let aliceVideo = ForwardedTrack(streamID: "alice", trackID: "alice-video", ssrc: 0x0BAD_F00D,
                                            rtxSSRC: 0x0BAD_F00E, cname: "alice-cname")

    private func subscriberOffer() -> SessionDescription {
        SFUOfferBuilder(transport: serverTransport, sessionID: "77", sessionVersion: 3).offer(sections: [
            .init(mid: "0", kind: .audio, track: alice),
            .init(mid: "1", kind: .video, track: aliceVideo),
            .init(mid: "2", kind: .video, track: nil),
            .init(mid: "3", kind: .audio, track: nil, stopped: true),
        ])
    }

    func testSubscriberOfferParsesBackWithTracks() throws {
        let offer = try SessionDescription(parsing: subscriberOffer().serialized)
        try offer.validateWebRTCAttributes()
        XCTAssertTrue(offer.iceLite)
        XCTAssertEqual(offer.origin.sessionVersion, "3")
        XCTAssertEqual(try offer.bundleGroup()?.mids, ["0", "1", "2"])
        XCTAssertEqual(offer.media.map(\.mid), ["0", "1", "2", "3"])
        XCTAssertEqual(offer.media.map(\.direction), [.sendonly, .sendonly, .inactive, .inactive])
        XCTAssertEqual(offer.media.map(\.port), [40000, 40000, 40000, 0])

        let audio = offer.media[0]
        XCTAssertEqual(try audio.setup(), .actpass)
        XCTAssertEqual(try audio.fingerprints(), [serverTransport.fingerprint])
        XCTAssertTrue(audio.rtcpMux)
        XCTAssertEqual(audio.formats, ["111"])
        XCTAssertEqual(try audio.msids(), [MediaStreamID(streamID: "alice", trackID: "alice-audio")])
        XCTAssertEqual(try audio.ssrcAttributes(), [
            SSRCAttribute(ssrc: 0x1234_5678, attribute: "cname", value: "alice-cname"),
            SSRCAttribute(ssrc: 0x1234_5678, attribute: "msid", value: "alice alice-audio"),
        ])
        XCTAssertEqual(try audio.headerExtensions().map(\.knownURI), [.audioLevel, .absSendTime, .transportWideCC, .mid])

        let video = offer.media[1]
        XCTAssertEqual(video.formats, ["96", "97", "108", "109"])
        XCTAssertEqual(try video.ssrcGroups(), [SSRCGroup(semantics: "FID", ssrcs: [0x0BAD_F00D, 0x0BAD_F00E])])
        XCTAssertEqual(try video.ssrcs(), [0x0BAD_F00D, 0x0BAD_F00E])
        XCTAssertEqual(try video.payloadFormats()[1].associatedPayloadType, 96)
        XCTAssertEqual(try video.headerExtensions().first { $0.knownURI == .rid }?.id, 10)
        XCTAssertEqual(try offer.media[2].msids(), [])
    }

    /// The subscriber answers the server's offer with the server's payload types, so the codec
    /// map read from the answer translates a publisher's numbering to the subscriber's.
    func testCodecMapsTranslatePublisherToSubscriber() throws {
        let publisher = try SFUAnswerBuilder(transport: serverTransport, sessionID: "1")
            .answer(toOfferText: Fixture.aiortc.text()).codecMap
        let subscriber = try CodecMap(description: subscriberOffer())
        XCTAssertEqual(subscriber, SFUOfferBuilder.defaultCodecMap)
        XCTAssertEqual(publisher.translate(96, to: subscriber), 111, "aiortc opus 96 → 111")
        XCTAssertEqual(publisher.translate(97, to: subscriber), 96, "aiortc VP8 97 → 96")
        XCTAssertEqual(publisher.translate(98, to: subscriber), 97, "aiortc VP8 rtx 98 → 97")
        XCTAssertEqual(publisher.translate(101, to: subscriber), 108, "aiortc H.264 42e01f 101 → 108")
        XCTAssertNil(publisher.translate(99, to: subscriber), "H.264 42001f was never accepted")
        XCTAssertNil(publisher.translate(0, to: subscriber), "PCMU was never accepted")
        XCTAssertNil(publisher.translate(200, to: subscriber))

        let audioOnly = CodecMap(entries: [.init(codec: .opus, payloadType: 109)])
        XCTAssertNil(publisher.translate(97, to: audioOnly))
        XCTAssertNil(publisher.translate(98, to: audioOnly))
    }

    func testCodecMapKeepsFirstMeaningOfAPayloadType() {
        var map = CodecMap(entries: [.init(codec: .vp8, payloadType: 96, rtxPayloadType: 97)])
        map.add(.init(codec: .h264, payloadType: 97))
        XCTAssertEqual(map.payload(for: 97), .rtx(.vp8))
        XCTAssertNil(map.payloadType(for: .h264).flatMap { map.payload(for: $0) == .media(.h264) ? $0 : nil })
    }
}

extension SFUOfferBuilderTests {
    /// Real answers from Chromium 156 and aiortc 1.16.0 to the offer of ``subscriberOffer()``
    /// (captured with Fixtures/check-chromium.html and check-aiortc.py): they keep the server's
    /// payload types, take the DTLS client role and receive the forwarded tracks.
    func testRealSubscriberAnswersKeepTheServersPayloadTypes() throws {
        for fixture in [Fixture.chromiumSubscriberAnswer, .aiortcSubscriberAnswer] {
            let answer = try fixture.parsed()
            try answer.validateWebRTCAttributes()
            XCTAssertEqual(answer.media.map(\.mid), ["0", "1", "2", "3"], fixture.rawValue)
            XCTAssertEqual(answer.media.prefix(3).map(\.direction), [.recvonly, .recvonly, .inactive], fixture.rawValue)
            XCTAssertEqual(answer.media[3].direction, .inactive, fixture.rawValue)
            for section in answer.media {
                XCTAssertEqual(try answer.setup(for: section), .active, fixture.rawValue)
            }
            let map = try CodecMap(description: answer)
            XCTAssertEqual(map.payloadType(for: .opus), 111, fixture.rawValue)
            XCTAssertEqual(map.payloadType(for: .vp8), 96, fixture.rawValue)
            XCTAssertEqual(map.rtxPayloadType(for: .vp8), 97, fixture.rawValue)
            XCTAssertEqual(map.payloadType(for: .h264), 108, fixture.rawValue)
            XCTAssertEqual(map.rtxPayloadType(for: .h264), 109, fixture.rawValue)
        }
        // Chromium rejects the stopped section; aiortc 1.16 answers it inactive on a live port.
        XCTAssertEqual(try Fixture.chromiumSubscriberAnswer.parsed().media[3].port, 0)
        XCTAssertEqual(try Fixture.chromiumSubscriberAnswer.parsed().bundleGroup()?.mids, ["0", "1", "2"])
        XCTAssertEqual(try Fixture.aiortcSubscriberAnswer.parsed().bundleGroup()?.mids, ["0", "1", "2", "3"])
    }

    /// The captured answers were made for exactly this offer; if the builder's output changes,
    /// re-run the check scripts and replace them.
    func testCapturedAnswersMatchTheCurrentOffer() throws {
        let page = try String(contentsOf: XCTUnwrap(Bundle.module.url(
            forResource: "check-chromium", withExtension: "html", subdirectory: "Fixtures")), encoding: .utf8)
        let escaped = subscriberOffer().serialized.replacingOccurrences(of: "\r\n", with: "\\n")
        XCTAssertTrue(page.contains(escaped), "Fixtures/check-chromium.html embeds a different subscriber offer")
    }
}
