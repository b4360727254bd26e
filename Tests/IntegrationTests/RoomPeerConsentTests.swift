import Foundation
import Peer
import XCTest

/// A peer that vanishes (no room.leave, no DTLS close_notify, its WebSocket gone) is removed
/// when its ICE consent expires (RFC 7675 §5.1; issue 3: "a peer that vanishes is cleaned
/// up (consent timeout) and its subscribers see it leave").
final class RoomPeerConsentTests: RoomPeerCase {
    /// 10 s consent timeout instead of 30 s, so the test stays short. Not less: live peers
    /// check consent every 5 s ± 20 % (RFC 7675 §5.1, libnice and browsers alike), so a
    /// shorter timeout would expire them too. The WebSocket grace (limits.idle_timeout) is
    /// 40 s, far longer, so consent expiry is what removes the vanished peer.
    static let consentTimeout: TimeInterval = 10
    static let settings = ["media.consent_timeout": "10s", "limits.idle_timeout": "40s"]

    func testVanishedPeerIsRemovedWhenItsConsentExpires() throws {
        let started = Date()
        let server = try startServer(settings: Self.settings)
        let alice = try join(server, "alice", "laptop", frequency: 440, room: "r1")
        let bob = try join(server, "bob", "phone", frequency: 660, room: "r1")
        let carol = try join(server, "carol", "desk", frequency: 880, room: "r1")
        try assertEveryoneHearsEveryone([alice, bob, carol])

        // Carol's device dies: its agent stops answering and checking, its WebSocket closes.
        carol.peer.close(notifyRemote: false)
        carol.signaling.close()
        let vanished = Date()
        for member in [alice, bob] {
            let reason = try awaitDeparture(of: carol.key, at: member, among: [alice, bob], timeout: Self.consentTimeout + 10)
            XCTAssertEqual(reason, "consentExpired")
        }
        let cleanup = Date().timeIntervalSince(vanished)
        // The last check was up to 6 s before the vanishing; the server looks once a second.
        print("vanished peer removed and renegotiated away after \(String(format: "%.1f", cleanup)) s")
        XCTAssertGreaterThanOrEqual(cleanup, Self.consentTimeout - 6.5, "removed before its consent could expire")
        XCTAssertTrue(server.logLines.contains { $0.contains("\"msg\":\"room left\"") && $0.contains("consentExpired") },
                      "the server logs the removal with its reason")

        // The two who stayed still hear each other.
        XCTAssertGreaterThan(packetGrowth(alice, from: bob.key, over: 0.5), 10)
        XCTAssertGreaterThan(packetGrowth(bob, from: alice.key, over: 0.5), 10)
        print("consent test took \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
    }

    /// The other way round: a device whose WebSocket drops while its media is fine leaves
    /// when the disconnect grace (limits.idle_timeout) ends, reason `disconnected`, and the
    /// server ends its media session too (DTLS close_notify to it, its track renegotiated
    /// away, its audio no longer forwarded).
    func testPeerWhoseWebSocketDropsLeavesAfterTheGraceWithItsMedia() throws {
        // 5 s grace (`pump` pings every second; 5 s leaves room for a slow join on a loaded
        // machine, when nobody pings); consent stays 30 s.
        let server = try startServer(settings: ["limits.heartbeat_interval": "2s", "limits.idle_timeout": "5s"])
        let alice = try join(server, "alice", "laptop", frequency: 440, room: "r1")
        let bob = try join(server, "bob", "phone", frequency: 660, room: "r1")
        try assertEveryoneHearsEveryone([alice, bob])

        bob.signaling.close()
        let dropped = Date()
        let reason = try awaitDeparture(of: bob.key, at: alice, among: [alice], timeout: 10)
        XCTAssertEqual(reason, "disconnected")
        let after = Date().timeIntervalSince(dropped)
        print("dropped WebSocket: removed and renegotiated away after \(String(format: "%.1f", after)) s")
        XCTAssertGreaterThanOrEqual(after, 4.5, "removed before the grace ended")
        // The server ended bob's media session with a DTLS close_notify (RFC 5246 §7.2.1).
        let bobReport = bob.peer.report(analyzingTones: false)
        XCTAssertEqual(bobReport.failure, "DTLS closed by the remote side", "bob: \(bobReport.state)")
        XCTAssertEqual(packetGrowth(alice, from: bob.key, over: 0.5), 0, "the server stopped forwarding bob's audio")
    }
}
