import Foundation
import NetEmu
import Peer
import XCTest

/// Loss repair through the real server under emulated networks (issue 4): synthetic peers,
/// some behind NetEmu's `ImpairmentRelay`, with the relay's log as ground truth for what the
/// path did. Reference: Janus 1.1.2 on this machine under the same impairment, residual
/// video loss 0.16–0.5 %.
///
/// Residual loss is asserted for the steady state (`SteadyStateLoss`: from the moment the
/// subscriber has the stream to the end). Start-up loss is printed, not asserted: two SFU
/// behaviours lose packets there that no NACK can bring back (docs/rtcp.md, "Start-up
/// loss"): the lazily allocated subscriber cache and the keyframe gate dropping keyframe
/// packets that overtake the keyframe's first packet.
final class ImpairedRoomTests: ImpairedRoomCase {
    /// 0.5 %: the issue's bound, the top of Janus 1.1.2's measured 0.16–0.5 %.
    static let maximumResidualVideoLoss = 0.005
    /// 12 s of media after the streams are up: ~650 video packets (25 fps, 2 packets per delta
    /// frame, 6 per keyframe), so 0.5 % is ~3 packets and a 10 % loss draws ~65 repairs.
    static let measuredSeconds: TimeInterval = 12

    /// Lets media flow for `measuredSeconds`, answering server offers.
    func run(_ members: [RoomPeerMember]) throws {
        let overflowsBefore = Self.udpReceiveBufferErrors()
        try pump(members, timeout: Self.measuredSeconds) { false }
        if let before = overflowsBefore, let after = Self.udpReceiveBufferErrors() {
            print("host UDP receive-buffer overflows during the run: \(after - before)")
        }
        for member in members {
            let report = member.peer.report(analyzingTones: false)
            print("\(member.key): skipped ticks \(report.skippedFrames), send failures \(report.sendFailures)")
        }
    }

    /// Scenario 1: 10 % random loss on the publisher's uplink. The SFU NACKs it, the publisher
    /// answers from its packet cache with RTX; the subscriber's residual video loss stays
    /// ≤ 0.5 %. Audio is not NACKed (neither is it by Chromium): the subscriber conceals the
    /// ~10 % with libopus PLC and still hears the tone.
    func testTenPercentUplinkLossOfAPublisherIsRepairedWithRTX() throws {
        try assertUplinkLossRepaired(rtx: true, seed: 41)
    }

    /// Scenario 1 without RTX in the publisher's offer: it resends the original packets (the
    /// relay sees the same sequence numbers cross again) and the SFU takes them as repairs.
    func testTenPercentUplinkLossOfAPublisherWithoutRTXIsRepairedWithOriginals() throws {
        try assertUplinkLossRepaired(rtx: false, seed: 42)
    }

    func assertUplinkLossRepaired(rtx: Bool, seed: UInt64, file: StaticString = #filePath, line: UInt = #line) throws {
        let server = try startServer()
        let relay = try startRelay(server, seed: seed, uplink: Impairment(loss: 0.10, mediaOnly: true))
        let alice = try join(server, "alice", "laptop", frequency: 440, room: "r1") {
            $0.sendVideo = true
            $0.offerRTX = rtx
            $0.relayPort = relay.port
        }
        let bob = try join(server, "bob", "phone", frequency: 660, room: "r1") { _ in }
        try awaitMedia([alice, bob], subscriber: bob, publisher: alice, videoPackets: 25)
        let start = try XCTUnwrap(bob.videoStream(from: alice.key))
        try run([alice, bob])

        let sender = alice.peer.report(analyzingTones: false)
        let video = try XCTUnwrap(bob.videoStream(from: alice.key))
        let steady = SteadyStateLoss(start: start, end: video)
        let audio = try XCTUnwrap(bob.stream(from: alice.key, analyzingTone: true))
        let videoTrack = try XCTUnwrap(alice.peer.tracks.first { $0.codec == .vp8 })
        let audioTrack = try XCTUnwrap(alice.peer.tracks.first { $0.codec == .opus })
        let log = relay.log
        let uplinkVideo = RelayLedger(log, direction: .uplink, ssrc: videoTrack.ssrc)
        let uplinkRTX = videoTrack.rtxSSRC.map { RelayLedger(log, direction: .uplink, ssrc: $0) }
        let uplinkAudio = RelayLedger(log, direction: .uplink, ssrc: audioTrack.ssrc)
        print("relay uplink video: \(uplinkVideo); RTX: \(uplinkRTX.map(\.description) ?? "not negotiated"); audio: \(uplinkAudio)")
        print("alice repair: \(sender.repair)")
        print("bob ← alice video: \(describe(video)); residual \(steady)")
        print("bob ← alice audio: \(describe(audio)), concealed \(audio.concealedSamplesPerChannel) samples (\(Self.percent(audio.concealmentRatio))), tone \(audio.tone.map { "\($0.dominantFrequency) Hz rms \(Int($0.rms))" } ?? "-")")

        // The path really lost ~10 % (ground truth), and the repairs really crossed it.
        XCTAssertGreaterThan(Double(uplinkVideo.dropped), 0.05 * Double(uplinkVideo.arrived), "uplink video: \(uplinkVideo)", file: file, line: line)
        // The repairs really crossed the relay: as RTX on the FID SSRC, or as originals again.
        let resent = (uplinkRTX?.arrived ?? 0) + uplinkVideo.repeats
        XCTAssertGreaterThan(resent, uplinkVideo.droppedSequences.count / 2, "repairs crossing the uplink", file: file, line: line)
        XCTAssertGreaterThan(sender.repair.nackedSequenceNumbersReceived, 0, "the SFU NACKed alice", file: file, line: line)
        XCTAssertGreaterThan(sender.repair.retransmissionsSent, 0, file: file, line: line)
        XCTAssertEqual(sender.repair.rtxSent, rtx ? sender.repair.retransmissionsSent : 0, "RTX exactly when negotiated", file: file, line: line)
        XCTAssertGreaterThan(steady.expected, 400, file: file, line: line)
        XCTAssertGreaterThan(video.repaired, 0, file: file, line: line)
        XCTAssertLessThanOrEqual(steady.ratio, Self.maximumResidualVideoLoss, "\(steady); \(describe(video))", file: file, line: line)
        XCTAssertEqual(video.malformedDescriptors, 0, file: file, line: line)
        // Audio: intelligible through concealment.
        XCTAssertGreaterThan(uplinkAudio.dropped, 0, file: file, line: line)
        XCTAssertGreaterThan(audio.concealedSamplesPerChannel, 0, file: file, line: line)
        XCTAssertLessThan(audio.concealmentRatio, 0.2, "≈ the 10 % uplink loss, not more", file: file, line: line)
        XCTAssertEqual(audio.decodeErrors, 0, file: file, line: line)
        let tone = try XCTUnwrap(audio.tone, file: file, line: line)
        XCTAssertTrue(tone.matches(frequency: alice.frequency), "dominant \(tone.dominantFrequency) Hz, rms \(tone.rms)", file: file, line: line)
    }

    /// Scenario 2: 5 % loss on a subscriber's downlink. The subscriber NACKs its gaps, the SFU
    /// answers from its retransmission cache: the relay sees the server resend (RTX on the
    /// subscription's FID SSRC, or originals again), and the residual stays ≤ 0.5 %.
    func testFivePercentDownlinkLossOfASubscriberIsRepairedFromTheSFUCache() throws {
        let server = try startServer()
        let relay = try startRelay(server, seed: 52, downlink: Impairment(loss: 0.05, mediaOnly: true))
        let alice = try join(server, "alice", "laptop", frequency: 440, room: "r1") { $0.sendVideo = true }
        let bob = try join(server, "bob", "phone", frequency: 660, room: "r1") { $0.relayPort = relay.port }
        try awaitMedia([alice, bob], subscriber: bob, publisher: alice, videoPackets: 25)
        let start = try XCTUnwrap(bob.videoStream(from: alice.key))
        try run([alice, bob])
        try assertDownlinkRepaired(bob, from: alice, relay: relay, since: start)
    }

    /// Scenario 3: 50 ± 30 ms uniform jitter with reordering on the publisher's uplink and no
    /// loss. The SFU's NackGenerator waits max(3 × jitter, 1.25 × observed reordering) before
    /// a first NACK (≈ 60 ms here, the whole ±30 ms reorder span), so only the first second,
    /// before the RFC 3550 jitter estimate and the reorder samples have converged, can NACK
    /// packets that were merely late.
    func testReorderingJitterOnAPublisherUplinkCausesNoNACKStorm() throws {
        let server = try startServer()
        let relay = try startRelay(server, seed: 63, uplink: Impairment(delayMs: 50, jitterMs: 30, allowReordering: true, mediaOnly: true))
        let alice = try join(server, "alice", "laptop", frequency: 440, room: "r1") {
            $0.sendVideo = true
            $0.offerRTX = true
            $0.relayPort = relay.port
        }
        let bob = try join(server, "bob", "phone", frequency: 660, room: "r1") { _ in }
        try awaitMedia([alice, bob], subscriber: bob, publisher: alice, videoPackets: 25)
        let start = try XCTUnwrap(bob.videoStream(from: alice.key))
        try run([alice, bob])

        let sender = alice.peer.report(analyzingTones: false)
        let video = try XCTUnwrap(bob.videoStream(from: alice.key))
        let steady = SteadyStateLoss(start: start, end: video)
        let videoTrack = try XCTUnwrap(alice.peer.tracks.first { $0.codec == .vp8 })
        let counters = relay.counters
        let uplinkVideo = RelayLedger(relay.log, direction: .uplink, ssrc: videoTrack.ssrc)
        let nackRatio = Double(sender.repair.nackedSequenceNumbersReceived) / Double(max(sender.sentVideoPackets, 1))
        print("relay uplink video: \(uplinkVideo); counters dropped up \(counters.uplink.dropped) down \(counters.downlink.dropped), reordered \(counters.uplink.reordered)")
        print("alice sent \(sender.sentVideoPackets) video packets; SFU NACKed \(sender.repair.nackedSequenceNumbersReceived) sequence numbers (\(Self.percent(nackRatio))) in \(sender.repair.nacksReceived) NACKs; resent \(sender.repair.retransmissionsSent)")
        print("bob ← alice video: \(describe(video)); residual \(steady); bob NACKed \(bob.peer.report(analyzingTones: false).repair.nackedSequenceNumbersSent)")

        XCTAssertEqual(counters.uplink.dropped + counters.downlink.dropped, 0, "the relay lost nothing")
        XCTAssertGreaterThan(uplinkVideo.reordered, 0, "the path did reorder")
        XCTAssertLessThan(nackRatio, Self.maximumNeedlessNACKRatio, "needless NACKs")
        XCTAssertLessThanOrEqual(sender.repair.retransmissionsSent, sender.repair.nackedSequenceNumbersReceived)
        XCTAssertEqual(steady.residualLost, 0, "\(steady); \(describe(video))")
    }

    /// 5 %: the needless NACKs of scenario 3 come from the NackGenerator's learning phase
    /// (its 10 ms minimum wait until jitter and reorder samples widen it to ~60 ms): about one
    /// second of ~55 video packets, against ~700 sent in the run, is < 8 % even if every
    /// packet of that second were NACKed; in practice only the reordered ones are (about half
    /// of them at ±30 ms), hence 5 %. A storm (no reorder wait) would NACK every overtaken
    /// packet for the whole run: ~30–50 %.
    static let maximumNeedlessNACKRatio = 0.05

    /// Scenario 4: a subscriber sends all its feedback from its audio SSRC. The SFU routes by
    /// the media SSRC each packet names (unit-tested at the Router level in SFUTests'
    /// KeyframeRequestTests and NackResponderRouterTests): its video NACKs are answered and
    /// its PLI for the video reaches the publisher.
    func testFeedbackFromTheAudioSSRCIsRoutedByTheMediaSSRCItNames() throws {
        let server = try startServer()
        let relay = try startRelay(server, seed: 74, downlink: Impairment(loss: 0.05, mediaOnly: true))
        let alice = try join(server, "alice", "laptop", frequency: 440, room: "r1") { $0.sendVideo = true }
        let bob = try join(server, "bob", "phone", frequency: 660, room: "r1") {
            $0.relayPort = relay.port
            $0.feedbackFromAudioSSRC = true
        }
        try awaitMedia([alice, bob], subscriber: bob, publisher: alice, videoPackets: 25)
        let start = try XCTUnwrap(bob.videoStream(from: alice.key))
        let ssrcs = try videoSSRCs(at: bob, from: alice)
        func keyframeRequests() -> UInt64 { alice.peer.report(analyzingTones: false).repair.keyframeRequestsReceived }
        // Quiet first: the SFU's own request for bob's subscription start has been answered
        // (no new request for 1 s), so what follows is bob's doing.
        var before = keyframeRequests()
        let quiet = try pump([alice, bob], timeout: 8) {
            Thread.sleep(forTimeInterval: 1)
            let now = keyframeRequests()
            defer { before = now }
            return now == before
        }
        XCTAssertTrue(quiet, "alice kept getting keyframe requests")
        // Control: the same sender SSRC naming a stream bob does not receive reaches no one.
        let audioSSRC = try XCTUnwrap(bob.peer.tracks.first { $0.codec == .opus }?.ssrc)
        XCTAssertTrue(bob.peer.sendPictureLossIndication(mediaSSRC: audioSSRC))
        try pump([alice, bob], timeout: 1) { false }
        XCTAssertEqual(keyframeRequests(), before, "a PLI naming no subscription must not reach the publisher")
        // The PLI naming the video reaches alice (the SFU's 500 ms throttle has long passed).
        XCTAssertTrue(bob.peer.sendPictureLossIndication(mediaSSRC: ssrcs.media))
        let reached = try pump([alice, bob], timeout: 5) { keyframeRequests() > before }
        XCTAssertTrue(reached, "bob's PLI (from his audio SSRC, naming the video) reached alice")
        try run([alice, bob])
        try assertDownlinkRepaired(bob, from: alice, relay: relay, since: start)
    }

    /// Bob's video from alice came through bob's lossy downlink and was repaired by the SFU.
    func assertDownlinkRepaired(_ bob: RoomPeerMember, from alice: RoomPeerMember, relay: ImpairmentRelay, since start: ReceivedStreamReport,
                                file: StaticString = #filePath, line: UInt = #line) throws {
        let video = try XCTUnwrap(bob.videoStream(from: alice.key), file: file, line: line)
        let steady = SteadyStateLoss(start: start, end: video)
        let receiver = bob.peer.report(analyzingTones: false)
        let ssrcs = try videoSSRCs(at: bob, from: alice)
        XCTAssertEqual(video.ssrc, ssrcs.media, file: file, line: line)
        let log = relay.log
        let downlinkVideo = RelayLedger(log, direction: .downlink, ssrc: ssrcs.media)
        let downlinkRTX = ssrcs.rtx.map { RelayLedger(log, direction: .downlink, ssrc: $0) }
        // What the server resent, as the relay saw it: RTX on the FID SSRC, or originals again.
        let serverResent = (downlinkRTX?.arrived ?? 0) + downlinkVideo.repeats
        print("relay downlink video: \(downlinkVideo); RTX: \(downlinkRTX.map(\.description) ?? "none negotiated")")
        print("bob repair: \(receiver.repair)")
        print("bob ← alice video: \(describe(video)); server resent \(serverResent); residual \(steady)")

        XCTAssertGreaterThan(Double(downlinkVideo.dropped), 0.02 * Double(downlinkVideo.arrived), "downlink video: \(downlinkVideo)", file: file, line: line)
        XCTAssertGreaterThan(receiver.repair.nackedSequenceNumbersSent, 0, "bob NACKed", file: file, line: line)
        XCTAssertGreaterThan(serverResent, downlinkVideo.droppedSequences.count / 2, "the server's retransmissions crossed the relay", file: file, line: line)
        XCTAssertGreaterThan(video.repaired, 0, file: file, line: line)
        XCTAssertGreaterThan(steady.expected, 400, file: file, line: line)
        XCTAssertLessThanOrEqual(steady.ratio, Self.maximumResidualVideoLoss, "\(steady); \(describe(video))", file: file, line: line)
    }
}
