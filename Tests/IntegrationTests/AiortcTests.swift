import Foundation
import Peer
import XCTest

/// An independent WebRTC stack (aiortc from PyPI) and a Swift synthetic peer in one SFU room
/// (issue 3: "an aiortc peer (PyPI) sends and receives audio through the SFU"): each decodes
/// the other's tone.
final class AiortcTests: RoomPeerCase {
    static let aiortcKey = "py/aiortc"
    /// C5: apart from the Swift peer's 440 Hz and from its harmonics.
    static let aiortcFrequency = 523.0

    func testAiortcPeerAndSyntheticPeerHearEachOtherThroughTheSFU() throws {
        if let reason = AiortcPeerProcess.unavailableReason() { return XCTFail(reason) }
        let started = Date()
        let server = try startServer()
        let aiortc = try AiortcPeerProcess(url: server.url, token: server.token("py", "aiortc"), room: "r2",
                                           frequency: Self.aiortcFrequency, expect: ["alice/laptop"], timeout: 45)
        defer { aiortc.stop() }
        guard let negotiated = aiortc.waitForEvent("negotiated", timeout: 15) else {
            return XCTFail("aiortc did not negotiate with the SFU; stderr:\n\(aiortc.stderr)")
        }
        // Loopback only: every candidate aiortc offered is a 127.0.0.1 host candidate (no
        // STUN server, no other interface).
        let candidates = aiortc.waitForEvent("offer", timeout: 0)?["candidates"] as? [String] ?? []
        XCTAssertFalse(candidates.isEmpty, "aiortc offered no candidate")
        for candidate in candidates {
            let fields = candidate.split(separator: " ")
            XCTAssertTrue(fields.count >= 8 && fields[4] == "127.0.0.1" && fields[7] == "host", "aiortc candidate \(candidate)")
        }
        print("aiortc negotiated after \(String(format: "%.1f", Date().timeIntervalSince(started))) s: \(negotiated)")

        let alice = try join(server, "alice", "laptop", frequency: 440, room: "r2")
        XCTAssertEqual(alice.room.members, [Self.aiortcKey])
        // The Swift peer decodes aiortc's tone; aiortc reports it decoded the Swift peer's.
        var summary: [String: Any]?
        let done = try pump([alice], timeout: 20) {
            if summary == nil { summary = aiortc.waitForEvent("summary", timeout: 0) }
            return summary != nil && hears(alice, [(Self.aiortcKey, Self.aiortcFrequency)])
        }
        let received = alice.stream(from: Self.aiortcKey, analyzingTone: true)
        XCTAssertTrue(done, "alice ← aiortc: \(String(describing: received)); aiortc summary: \(String(describing: summary)); aiortc stderr:\n\(aiortc.stderr)")
        if let received, let tone = received.tone {
            XCTAssertTrue(tone.matches(frequency: Self.aiortcFrequency), "alice ← aiortc: dominant \(tone.dominantFrequency) Hz, rms \(tone.rms)")
            XCTAssertEqual(received.decodeErrors, 0)
            print("alice ← aiortc: \(received.packets) packets, lost \(received.lost)/\(received.expectedPackets), dominant \(tone.dominantFrequency) Hz (sent \(Self.aiortcFrequency)), purity \(String(format: "%.2f", tone.purity))")
        } else {
            XCTFail("alice decoded nothing from aiortc; streams \(alice.peer.report().streams); aiortc stderr:\n\(aiortc.stderr)")
        }

        let tracks = (summary?["tracks"] as? [String: Any])?.values.compactMap { $0 as? [String: Any] } ?? []
        let fromAlice = tracks.first { $0["streamID"] as? String == alice.key }
        if let fromAlice {
            let frequency = (fromAlice["dominantFrequency"] as? NSNumber)?.doubleValue ?? 0
            let frames = (fromAlice["frames"] as? NSNumber)?.intValue ?? 0
            XCTAssertEqual(frequency, 440, accuracy: 440 * 0.03, "aiortc ← alice: \(fromAlice)")
            XCTAssertGreaterThan(frames, 50, "aiortc decoded at least a second of frames: \(fromAlice)")
            let packets = (fromAlice["packets"] as? NSNumber)?.intValue ?? 0
            let lost = (fromAlice["lost"] as? NSNumber)?.intValue ?? -1
            XCTAssertGreaterThanOrEqual(packets, frames, "aiortc counted the RTP packets behind its frames: \(fromAlice)")
            XCTAssertTrue((0...max(1, packets / 50)).contains(lost), "aiortc ← alice: lost \(lost) of \(packets) (at most 2 %)")
            XCTAssertGreaterThan((fromAlice["rms"] as? NSNumber)?.doubleValue ?? 0, 500, "aiortc ← alice is not silence: \(fromAlice)")
            print("aiortc ← alice: \(fromAlice)")
        } else {
            XCTFail("aiortc reported no track from alice: \(String(describing: summary)); stderr:\n\(aiortc.stderr)")
        }

        // aiortc leaves (stdin closed): alice sees it go and its track is renegotiated away.
        let status = aiortc.stop()
        XCTAssertEqual(status, 0, "aiortc exit status; stderr:\n\(aiortc.stderr)")
        let reason = try awaitDeparture(of: Self.aiortcKey, at: alice, among: [alice], timeout: 10)
        XCTAssertEqual(reason, "left")
        print("aiortc test took \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
    }
}
