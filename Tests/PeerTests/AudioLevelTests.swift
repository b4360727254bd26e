import Foundation
import Peer
import SDP
import SignalingClient
import XCTest

/// The peer's RFC 6464 audio level: measured from its PCM, offered in its SDP, accepted by the
/// server's answer builder, and the `room.activeSpeaker` event it listens for.
final class AudioLevelTests: XCTestCase {
    func testLevelIsTheRMSInMinusDBovWithTheVoiceBitAboveTheThreshold() throws {
        // A full-scale sine has RMS 32767/√2: −3 dBov.
        var fullScale = try ToneGenerator(frequency: 1000, amplitude: 32767)
        XCTAssertEqual(AudioLevel(pcm: fullScale.nextFrame(samplesPerChannel: 960)), AudioLevel(level: 3, voiceActivity: true))
        // The default tone: 8000 peak, RMS 5657: 20·log10(5657/32768) = −15.3 dBov.
        var tone = try ToneGenerator(frequency: 440)
        XCTAssertEqual(AudioLevel(pcm: tone.nextFrame(samplesPerChannel: 960)).level, 15)
        // −60 dBov: quieter than the voice threshold.
        var quiet = try ToneGenerator(frequency: 440, amplitude: 32768 * 1.41421356 / 1000)
        let low = AudioLevel(pcm: quiet.nextFrame(samplesPerChannel: 960))
        XCTAssertEqual(low.level, 60)
        XCTAssertFalse(low.voiceActivity)
        // Digital silence: 127 with V clear (RFC 6464 §3).
        let silence = AudioLevel(pcm: [Int16](repeating: 0, count: 1920))
        XCTAssertEqual(silence, AudioLevel(level: 127, voiceActivity: false))
        XCTAssertEqual(silence.byte, 0x7F)
        XCTAssertEqual(AudioLevel(level: 15, voiceActivity: true).byte, 0x8F)
        XCTAssertEqual(AudioLevel(byte: 0x8F), AudioLevel(level: 15, voiceActivity: true))
        XCTAssertEqual(AudioLevel(pcm: []).level, 127)
    }

    func testOfferAnnouncesTheExtensionOnAudioOnlyAndTheServerAcceptsIt() throws {
        let transport = PeerTransport(iceUfrag: "pEeR", icePwd: "peerPasswordOf22Chars++",
                                      fingerprint: "sha-256 " + Array(repeating: "AB", count: 32).joined(separator: ":"),
                                      candidates: ["1 1 UDP 2015363327 127.0.0.1 40001 typ host"])
        let tracks = [PeerTrack(mid: "0", codec: .opus, ssrc: 1, streamID: "a/b", trackID: "audio", cname: "c"),
                      PeerTrack(mid: "1", codec: .vp8, ssrc: 2, streamID: "a/b", trackID: "video", cname: "c")]
        let text = PeerSDP.offer(transport: transport, tracks: tracks, sessionID: "1", sessionVersion: 1)
        let offer = try SessionDescription(parsing: text)
        XCTAssertEqual(try offer.headerExtensions(for: offer.media[0]).first { $0.knownURI == .audioLevel }?.id, 1)
        XCTAssertNil(try offer.headerExtensions(for: offer.media[1]).first { $0.knownURI == .audioLevel }, "video carries no audio level")

        let server = SFUTransportParameters(iceUfrag: "srv1", icePwd: "serverPasswordOf22Chars",
                                            fingerprint: Fingerprint(hashFunction: "sha-256", bytes: Array(repeating: 0xCD, count: 32)),
                                            address: "127.0.0.1", port: 50000)
        let answer = try SessionDescription(parsing: SFUAnswerBuilder(transport: server, sessionID: "9").answer(toOfferText: text).sdp)
        XCTAssertEqual(try answer.headerExtensions(for: answer.media[0]).first { $0.knownURI == .audioLevel }?.id, 1,
                       "the SFU takes the level (it feeds its active-speaker detector)")

        // Answering a server offer echoes the offered id (RFC 8285 §7).
        var reoffer = answer
        for index in reoffer.media.indices {
            reoffer.media[index].attributes = reoffer.media[index].attributes.map {
                $0.name == "extmap" && $0.value?.hasSuffix("ssrc-audio-level") == true ? SDPAttribute("extmap", "7 " + HeaderExtension.KnownURI.audioLevel.rawValue) : $0
            }
        }
        let reply = try SessionDescription(parsing: PeerSDP.answer(to: reoffer, transport: transport, tracks: tracks, setup: .active,
                                                                   sessionID: "1", sessionVersion: 2))
        XCTAssertEqual(try reply.headerExtensions(for: reply.media[0]).first { $0.knownURI == .audioLevel }?.id, 7)
    }

    func testActiveSpeakerEventsParse() throws {
        func event(_ text: String) throws -> RoomMessages.Event? { RoomMessages.event(try XCTUnwrap(ServerFrame(text: text)).object) }
        XCTAssertEqual(try event(#"{"v":1,"type":"room.activeSpeaker","room":"r1","member":{"account":"bob","device":"phone"}}"#),
                       .activeSpeaker(room: "r1", member: "bob/phone"))
        XCTAssertEqual(try event(#"{"v":1,"type":"room.activeSpeaker","room":"r1","member":null}"#),
                       .activeSpeaker(room: "r1", member: nil))
        XCTAssertNil(try event(#"{"v":1,"type":"room.activeSpeaker","room":"r1"}"#), "member is required (null when nobody speaks)")
    }
}
