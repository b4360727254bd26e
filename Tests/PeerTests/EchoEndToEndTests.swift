import DTLS
import Foundation
import ICE
import IO
import Peer
import RTP
import SDP
import XCTest

/// End to end on 127.0.0.1 with real sockets: a SyntheticPeer (libnice full agent, DTLS
/// client, SRTP, libopus) against the echo harness built from the server's own MediaLoop,
/// ICE-lite agent, DTLS server endpoint, SRTP and SFU answer builder. The peer must get its own
/// audio back, decode it with libopus and hear its own tone.
final class EchoEndToEndTests: XCTestCase {
    /// ~2 s of media: 100 Opus frames, enough for a stable tone estimate and loss counts.
    static let mediaSeconds = 2.0

    func testAudioEchoDecodesOwnToneWithGCM() throws {
        let report = try runEcho(configuration: SyntheticPeer.Configuration(name: "alice/laptop", audioFrequency: 523))
        let audio = try XCTUnwrap(report.streams.first { $0.codec == .opus }, "\(report)")
        XCTAssertEqual(audio.payloadType, 111)
        XCTAssertEqual(audio.mid, "0", "label from the answer's a=ssrc lines")
        XCTAssertEqual(audio.streamID, "echo")
        XCTAssertEqual(audio.decodeErrors, 0)
        XCTAssertEqual(audio.decodedSamplesPerChannel, audio.packets * 960, "20 ms per packet at 48 kHz")
        let tone = try XCTUnwrap(audio.tone)
        XCTAssertTrue(tone.matches(frequency: 523, tolerance: 0.03), "decoded tone \(tone)")
        XCTAssertGreaterThan(tone.purity, 0.5, "a clean sine after the Opus round trip: \(tone)")
    }

    /// The peer's RTCP (SR + SDES every second, RFC 3550 §6) is valid SRTCP that the server's
    /// RTCP parser reads, its report blocks describe the echoed stream, and the RR the harness
    /// returns gives the peer an RTT from LSR/DLSR.
    func testRTCPSenderReportsAndRoundTrip() throws {
        var server: EchoServer?
        let report = try runEcho(configuration: SyntheticPeer.Configuration(name: "rtcp/peer", audioFrequency: 440)) { server = $0 }
        let stats = try XCTUnwrap(server).stats
        XCTAssertEqual(stats.rtcpFailures, 0)
        let track = report.streams.first { $0.codec == .opus }
        let echoedSSRC = try XCTUnwrap(track?.ssrc)
        let ownSSRC = echoedSSRC ^ EchoServer.ssrcMask
        let senderReports = stats.rtcp.compactMap { packet -> RTCPSenderReport? in
            if case .senderReport(let sr) = packet { return sr } else { return nil }
        }
        XCTAssertGreaterThanOrEqual(senderReports.count, 1, "≥ 1 SR in 2 s at 1 s intervals")
        XCTAssertTrue(senderReports.allSatisfy { $0.ssrc == ownSSRC })
        let last = try XCTUnwrap(senderReports.last)
        XCTAssertGreaterThan(last.packetCount, 20)
        XCTAssertLessThanOrEqual(UInt64(last.packetCount), report.sentAudioPackets)
        let block = try XCTUnwrap(last.reportBlocks.first { $0.ssrc == echoedSSRC }, "\(last)")
        XCTAssertLessThanOrEqual(block.cumulativeLost, 1)
        XCTAssertGreaterThan(block.extendedHighestSequenceNumber, 0)
        let cnames = stats.rtcp.flatMap { packet -> [String] in
            if case .sourceDescription(let sdes) = packet { return sdes.chunks.compactMap(\.cname) } else { return [] }
        }
        XCTAssertTrue(cnames.contains { $0.hasPrefix("rtcp/peer-") }, "\(cnames)")
        XCTAssertGreaterThanOrEqual(report.rtcpSent, 1)
        XCTAssertGreaterThanOrEqual(report.reportBlocksReceived, 1)
        let rtt = try XCTUnwrap(report.roundTripMilliseconds)
        XCTAssertGreaterThanOrEqual(rtt, 0)
        print("rtcp: \(senderReports.count) SR, peer got \(report.reportBlocksReceived) blocks, RTT \(String(format: "%.2f", rtt)) ms")
    }

    func testAudioAndVideoEchoWithAggressiveNomination() throws {
        var configuration = SyntheticPeer.Configuration(name: "bob/phone", audioFrequency: 700, sendVideo: true,
                                                        videoKeyframeInterval: 10)
        configuration.regularNomination = false
        let report = try runEcho(configuration: configuration)
        let audio = try XCTUnwrap(report.streams.first { $0.codec == .opus }, "\(report)")
        XCTAssertTrue(try XCTUnwrap(audio.tone).matches(frequency: 700), "\(audio)")
        let video = try XCTUnwrap(report.streams.first { $0.codec == .vp8 }, "\(report)")
        XCTAssertEqual(video.payloadType, 96)
        XCTAssertEqual(video.mid, "1")
        XCTAssertEqual(video.malformedDescriptors, 0)
        XCTAssertGreaterThan(video.frames, 0)
        XCTAssertGreaterThanOrEqual(video.frames + 2, report.sentVideoFrames, "frames echoed ≈ frames sent")
        // A keyframe every 10 frames at 25 fps: ≥ 1 per 0.4 s of echoed video.
        XCTAssertGreaterThanOrEqual(video.keyframes, max(1, video.frames / 10 - 1))
        XCTAssertLessThanOrEqual(Int64(video.lost), Int64(report.sentVideoPackets / 50 + 2))
    }

    /// Offer → echo answer → connect → send ~2 s → stop → report, with the common assertions.
    private func runEcho(configuration: SyntheticPeer.Configuration,
                         inspect: (EchoServer) -> Void = { _ in }) throws -> PeerReport {
        let loop = EventLoop(name: "peer-\(configuration.name)")
        loop.start()
        defer { loop.stop() }
        let server = try EchoServer()
        defer { server.stop() }
        defer { inspect(server) }
        let peer = try SyntheticPeer(configuration: configuration, loop: loop)
        defer { peer.close() }

        let offer = try peer.createOffer()
        let answer = try server.answer(offer: offer)
        XCTAssertTrue(answer.contains("a=ice-lite"))
        XCTAssertTrue(answer.contains("a=setup:passive"))
        try peer.setRemoteAnswer(answer)
        let connectStart = Date()
        try peer.waitUntilConnected(timeout: 10)
        let connectSeconds = Date().timeIntervalSince(connectStart)
        XCTAssertEqual(peer.report().srtpProfile, .aeadAES128GCM, "GCM preferred by both sides")
        XCTAssertEqual(server.stats.profiles, [.aeadAES128GCM])

        try peer.startSending()
        Thread.sleep(forTimeInterval: Self.mediaSeconds)
        peer.stopSending()
        // Let the last echoes come back (loopback RTT is well under 50 ms).
        Thread.sleep(forTimeInterval: 0.2)
        let report = peer.report()
        let serverStats = server.stats
        print("echo \(configuration.name): connected in \(String(format: "%.3f", connectSeconds)) s; sent audio \(report.sentAudioPackets) video \(report.sentVideoPackets) (\(report.sentVideoFrames) frames), \(report.sentBytes) B; server echoed \(serverStats.echoed); streams: "
              + report.streams.map { "ssrc \($0.ssrc) \($0.codec?.rawValue ?? "?") pkts \($0.packets) lost \($0.lost) jitter \($0.jitter) decoded \($0.decodedSamplesPerChannel) tone \($0.tone.map { String(format: "%.0f Hz rms %.0f purity %.2f", $0.dominantFrequency, $0.rms, $0.purity) } ?? "-") frames \($0.frames) key \($0.keyframes)" }.joined(separator: "; "))

        XCTAssertEqual(report.state, .connected)
        XCTAssertEqual(report.srtpUnprotectFailures, 0)
        XCTAssertEqual(serverStats.unprotectFailures, 0)
        XCTAssertEqual(serverStats.dtlsFailures, [])
        XCTAssertEqual(report.sendFailures, 0)
        // 2 s at 50 packets/s, minus scheduling slack on a shared machine.
        XCTAssertGreaterThanOrEqual(report.sentAudioPackets, 80)
        let audio = try XCTUnwrap(report.streams.first { $0.codec == .opus }, "no audio echoed: \(report)")
        let track = try XCTUnwrap(peer.tracks.first { $0.codec == .opus })
        XCTAssertEqual(audio.ssrc, track.ssrc ^ EchoServer.ssrcMask)
        // Loopback: everything sent comes back, give or take a packet in flight at the cut.
        XCTAssertLessThanOrEqual(report.sentAudioPackets - audio.packets, 2, "sent \(report.sentAudioPackets), echoed back \(audio.packets)")
        XCTAssertLessThanOrEqual(audio.lost, 1)
        return report
    }
}

/// The server offers first (protocol §9: the server's `sfu.offer` with forwarded tracks); the
/// peer answers with setup:active, becomes the DTLS client, publishes on its own section and
/// receives the "forwarded" track (its own audio on the SSRC the offer announced).
final class ServerOfferEndToEndTests: XCTestCase {
    func testPeerAnswersServerOfferAndReceivesForwardedTrack() throws {
        let loop = EventLoop(name: "peer-answerer")
        loop.start()
        defer { loop.stop() }
        let server = try EchoServer()
        defer { server.stop() }
        let peer = try SyntheticPeer(configuration: SyntheticPeer.Configuration(name: "carol/tablet", audioFrequency: 880),
                                     loop: loop)
        defer { peer.close() }

        let forwardedSSRC: UInt32 = 0xF0F0_0001
        let forwarded = ForwardedTrack(streamID: "dave/desk", trackID: "dave-audio", ssrc: forwardedSSRC, cname: "dave")
        let offer = try server.offer(sections: [.init(mid: "0", kind: .audio, track: nil),
                                                .init(mid: "1", kind: .audio, track: forwarded)],
                                     echoSSRC: forwardedSSRC) { description in
            description.media[0].direction = .recvonly  // the server receives the device's audio on mid 0
        }
        let answer = try peer.answer(remoteOffer: offer)
        let parsed = try SessionDescription(parsing: answer)
        XCTAssertEqual(parsed.media.map(\.direction), [.sendonly, .recvonly])
        try server.accept(answer: answer)
        try peer.waitUntilConnected(timeout: 10)
        try peer.startSending()
        Thread.sleep(forTimeInterval: 2)
        peer.stopSending()
        Thread.sleep(forTimeInterval: 0.2)
        let report = peer.report()
        print("server offer: sent \(report.sentAudioPackets), streams \(report.streams.map { "\($0.ssrc) mid \($0.mid ?? "-") \($0.streamID ?? "-") pkts \($0.packets) tone \($0.tone?.dominantFrequency ?? 0)" })")
        XCTAssertEqual(report.srtpProfile, .aeadAES128GCM)
        let stream = try XCTUnwrap(report.stream(ssrc: forwardedSSRC), "\(report)")
        XCTAssertEqual(stream.mid, "1")
        XCTAssertEqual(stream.streamID, "dave/desk")
        XCTAssertLessThanOrEqual(report.sentAudioPackets - stream.packets, 2)
        XCTAssertTrue(try XCTUnwrap(stream.tone).matches(frequency: 880), "\(stream)")
        XCTAssertEqual(report.srtpUnprotectFailures, 0)

        // Renegotiation (a member publishes video): same transport, one more forwarded track.
        let video = ForwardedTrack(streamID: "erin/pc", trackID: "erin-video", ssrc: 0xE0E0_0001, rtxSSRC: 0xE0E0_0002, cname: "erin")
        let second = try server.offer(sections: [.init(mid: "0", kind: .audio, track: nil),
                                                 .init(mid: "1", kind: .audio, track: forwarded),
                                                 .init(mid: "2", kind: .video, track: video)],
                                      echoSSRC: forwardedSSRC) { $0.media[0].direction = .recvonly }
        let secondAnswer = try SessionDescription(parsing: try peer.answer(remoteOffer: second))
        XCTAssertEqual(secondAnswer.media.map(\.direction), [.sendonly, .recvonly, .recvonly])
        XCTAssertEqual(try secondAnswer.bundleGroup()?.mids, ["0", "1", "2"])
        XCTAssertEqual(peer.report().state, .connected)
        // A device re-offer (e.g. after glare) keeps every m-line in order (RFC 8829 §5.2.2).
        let reoffer = try SessionDescription(parsing: try peer.createOffer())
        XCTAssertEqual(reoffer.media.map(\.mid), ["0", "1", "2"])
        XCTAssertEqual(reoffer.media.map(\.direction), [.sendrecv, .recvonly, .recvonly])
        XCTAssertEqual(reoffer.media.map(\.media), ["audio", "audio", "video"])
        XCTAssertEqual(try reoffer.bundleGroup()?.mids, ["0", "1", "2"])
        // An ICE restart (new ufrag) is refused with a typed error, and the session stays up.
        let restart = second.replacingOccurrences(of: "a=ice-ufrag:echo", with: "a=ice-ufrag:new")
        XCTAssertThrowsError(try peer.answer(remoteOffer: restart)) {
            XCTAssertEqual(($0 as? PeerError)?.code, "invalidRemoteDescription")
        }
        XCTAssertEqual(peer.report().state, .connected)
    }
}

/// A forged certificate fingerprint in the answer must stop the session before any media.
final class FingerprintMismatchTests: XCTestCase {
    func testWrongServerFingerprintFailsDTLS() throws {
        let loop = EventLoop(name: "peer-mismatch")
        loop.start()
        defer { loop.stop() }
        let server = try EchoServer()
        defer { server.stop() }
        let peer = try SyntheticPeer(configuration: SyntheticPeer.Configuration(name: "mallory/x"), loop: loop)
        defer { peer.close() }
        let answer = try server.answer(offer: try peer.createOffer())
        let real = server.certificate.sha256Fingerprint.hex
        let forged = String(real.prefix(real.count - 2)) + (real.hasSuffix("00") ? "01" : "00")
        try peer.setRemoteAnswer(answer.replacingOccurrences(of: real, with: forged))
        XCTAssertThrowsError(try peer.waitUntilConnected(timeout: 10)) {
            XCTAssertEqual(($0 as? PeerError)?.code, "invalidState")
        }
        let report = peer.report()
        XCTAssertEqual(report.state, .failed)
        XCTAssertNil(report.srtpProfile)
        XCTAssertTrue(report.failure?.contains("DTLS") == true, "\(report.failure ?? "-")")
        print("forged fingerprint: \(report.failure ?? "-")")
    }
}

/// RFC 7675: an ICE-lite server counts only authenticated checks as consent and drops a peer
/// after 30 s without one. With consent freshness libnice sends them every few seconds; with
/// it off, libnice only sends 25 s binding indications and the server hears nothing.
final class ConsentFreshnessTests: XCTestCase {
    func testConsentChecksKeepArrivingAfterConnect() throws {
        let loop = EventLoop(name: "peer-consent")
        loop.start()
        defer { loop.stop() }
        let server = try EchoServer()
        defer { server.stop() }
        var peers: [SyntheticPeer] = []
        defer { for peer in peers { peer.close() } }
        var sessions: [ICESessionID] = []
        for consent in [true, false] {
            let peer = try SyntheticPeer(configuration: SyntheticPeer.Configuration(name: "consent-\(consent)", consentFreshness: consent),
                                         loop: loop)
            peers.append(peer)
            try peer.setRemoteAnswer(try server.answer(offer: try peer.createOffer()))
            sessions.append(try XCTUnwrap(server.lastSession))
        }
        for peer in peers { try peer.waitUntilConnected(timeout: 10) }
        let before = server.stats.validatedChecks
        // 7 s: longer than libnice's consent interval (RFC 7675 §5.1: 4–6 s randomised).
        Thread.sleep(forTimeInterval: 7)
        let after = server.stats.validatedChecks
        let withConsent = after[sessions[0], default: 0] - before[sessions[0], default: 0]
        let without = after[sessions[1], default: 0] - before[sessions[1], default: 0]
        print("authenticated checks in 7 s after connect: consent freshness \(withConsent), without \(without)")
        XCTAssertGreaterThanOrEqual(withConsent, 1)
        XCTAssertEqual(without, 0, "libnice's default keepalives are indications, not consent")
        for peer in peers { XCTAssertEqual(peer.report().state, .connected) }
    }
}
