import Foundation
import NetEmu
import Peer
import XCTest

/// A peer's address changes mid-call (issue 3): a NAT in front of it rebinds (new source port
/// towards the server, as after a NAT timeout or a switch of network behind the same NAT).
/// The server must follow the new 5-tuple once an authenticated check arrives from it
/// (RFC 8445 §7.3.1.5: a nominated check from a new address moves the selected pair; libnice
/// sends RFC 7675 consent checks every 5 s ± 20 %, with USE-CANDIDATE as the controlling
/// agent), and media must flow again both ways, through the real server binary.
final class RoomPeerPathChangeTests: RoomPeerCase {
    /// 5 s ± 20 % consent interval (RFC 7675 §5.1) + 4 s for a loaded 2-core machine.
    static let followTimeout: TimeInterval = 10

    func testServerFollowsAPeerWhoseNATRebindsAndMediaFlowsAgainBothWays() throws {
        let started = Date()
        let server = try startServer()
        let alice = try join(server, "alice", "laptop", frequency: 440, room: "r1")
        let (bob, relay) = try joinThroughRelay(server, "bob", "phone", frequency: 660, room: "r1")
        try assertEveryoneHearsEveryone([alice, bob])
        let before = try XCTUnwrap(relay.mappings.first, "bob's NAT binding")
        XCTAssertEqual(relay.mappings.count, 1)
        XCTAssertGreaterThan(relay.counters.downlink.sent, 50, "bob's media comes through the relay")

        let aliceHeardBob = try XCTUnwrap(alice.stream(from: bob.key)).packets
        let bobHeardAlice = try XCTUnwrap(bob.stream(from: alice.key)).packets
        let downlinkAtRebind = relay.counters.downlink.received
        let after = try relay.rebind(clientPort: before.clientPort)
        let rebound = Date()
        XCTAssertNotEqual(after.upstreamPort, before.upstreamPort)
        print("bob's NAT rebound: server sees 127.0.0.1:\(after.upstreamPort) instead of :\(before.upstreamPort)")

        // Followed: the server sends to the new port (the old one is closed, so nothing it sent
        // there reaches the relay), and both sides receive again.
        var followedAfter: TimeInterval?
        let followed = try pump([alice, bob], timeout: Self.followTimeout) {
            let flowing = relay.counters.downlink.received > downlinkAtRebind + 25
                && (alice.stream(from: bob.key)?.packets ?? 0) > aliceHeardBob + 25
                && (bob.stream(from: alice.key)?.packets ?? 0) > bobHeardAlice + 25
            if flowing, followedAfter == nil { followedAfter = Date().timeIntervalSince(rebound) }
            return flowing
        }
        XCTAssertTrue(followed, "media did not resume within \(Self.followTimeout) s of the rebind; relay \(relay.counters)")
        print("server followed the new 5-tuple after \(followedAfter.map { String(format: "%.1f", $0) } ?? "-") s")

        // After the move, audio flows on steadily both ways and decodes to the right tones.
        for (member, publisher) in [(alice, bob), (bob, alice)] {
            XCTAssertGreaterThan(packetGrowth(member, from: publisher.key, over: 1), 40, "\(member.key) ← \(publisher.key) after the rebind")
        }
        for (member, publisher) in [(alice, bob), (bob, alice)] {
            let stream = try XCTUnwrap(member.peer.report().streams.first { $0.streamID == publisher.key && $0.codec == .opus })
            let tone = try XCTUnwrap(stream.tone, "\(member.key) ← \(publisher.key): no decoded audio")
            XCTAssertTrue(tone.matches(frequency: publisher.frequency),
                          "\(member.key) ← \(publisher.key) after the rebind: \(tone.dominantFrequency) Hz, rms \(tone.rms)")
            XCTAssertEqual(stream.decodeErrors, 0)
            print("\(member.key) ← \(publisher.key) after the rebind: \(stream.packets) packets, lost \(stream.lost)/\(stream.expectedPackets), max gap \(stream.maxArrivalGapMicroseconds / 1000) ms, \(Int(tone.dominantFrequency)) Hz")
        }
        XCTAssertEqual(relay.mappings, [after], "one binding, the new one")
        XCTAssertGreaterThanOrEqual(try metricTotal(server, "switchboard_sfu_path_changes_total"), 1,
                                    "the server counts the path it followed (/metrics)")
        let exposition = String(decoding: try http(server, "GET", "/metrics").body, as: UTF8.self)
        let families = exposition.split(separator: "\n").filter { $0.hasPrefix("# TYPE ") }.map { $0.split(separator: " ")[2] }
        XCTAssertEqual(families.count, Set(families).count, "each /metrics family is declared once (Prometheus text format 0.0.4)")
        // The move is not a departure: no room.memberLeft, and the server offered nothing new.
        for member in [alice, bob] {
            XCTAssertFalse(member.room.events.contains { if case .memberLeft = $0 { true } else { false } },
                           "\(member.key): \(member.room.events)")
        }
        XCTAssertFalse(server.logLines.contains { $0.contains("\"msg\":\"room left\"") }, "nobody left the room")
        for member in [alice, bob] {
            XCTAssertEqual(member.peer.report(analyzingTones: false).state, .connected, "\(member.key) stays connected (no ICE restart)")
        }
        print("path-change test took \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
    }

    /// Like `join`, but the server's candidate in its answer is replaced by an
    /// `ImpairmentRelay` in front of the server's media port, so all of this peer's media
    /// goes through the relay (its NAT).
    func joinThroughRelay(_ server: ServerProcess, _ account: String, _ device: String, frequency: Double,
                          room: String) throws -> (RoomPeerMember, ImpairmentRelay) {
        let signaling = try self.device(server, account, device)
        let peer = try SyntheticPeer(configuration: .init(name: "\(account)/\(device)", audioFrequency: frequency), loop: Self.peerLoop)
        let client = try RoomClient(signaling: signaling, peer: peer, room: room)
        let member = RoomPeerMember(account: account, device: device, frequency: frequency, signaling: signaling, peer: peer, room: client)
        var relay: ImpairmentRelay?
        addTeardownBlock {
            peer.close()
            signaling.close()
            relay?.stop()
        }
        try client.join()
        let command = try RoomMessages.offer(room: room, sdp: peer.createOffer())
        let result = try signaling.request(command.type, command.fields, timeout: 10)
        guard case .answered(_, let answer) = try RoomMessages.outcome(ofResult: result.object) else {
            throw RelayJoinError(reason: "sfu.offer result without an answer: \(result.object)")
        }
        // The server's only candidate (protocol §9): "<foundation> 1 udp <priority> <address> <port> typ host".
        let candidate = try XCTUnwrap(RemoteDescription(parsing: answer).candidates.first, "server candidate")
        let fields = candidate.split(separator: " ")
        let mediaPort = try XCTUnwrap(fields.count > 5 ? UInt16(fields[5]) : nil, "port in \(candidate)")
        let nat = try ImpairmentRelay(targetPort: mediaPort)
        relay = nat
        try nat.start()
        let rewritten = answer.replacingOccurrences(of: "127.0.0.1 \(mediaPort) typ host", with: "127.0.0.1 \(nat.port) typ host")
        XCTAssertNotEqual(rewritten, answer, "the candidate was rewritten")
        try peer.setRemoteAnswer(rewritten)
        try peer.startSending()
        return (member, nat)
    }
}

struct RelayJoinError: Error, CustomStringConvertible {
    let reason: String
    var description: String { reason }
}
