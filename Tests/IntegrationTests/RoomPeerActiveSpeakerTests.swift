import Foundation
import Peer
import XCTest

/// Active speaker (issue 4) through the real server binary: synthetic peers send the RFC 6464
/// audio level of their tone (or of silence, level 127), the server's detector picks the
/// dominant one and the room coordinator announces `room.activeSpeaker` to every member over
/// the IM channel (docs/protocol.md §9).
final class RoomPeerActiveSpeakerTests: RoomPeerCase {
    /// 300 ms dominance + 500 ms window + 100 ms evaluation, plus negotiation and a loaded
    /// 2-core machine: the announcement comes within a second or two of the media.
    static let announceTimeout: TimeInterval = 15

    func testLoudMemberIsAnnouncedAndTheAnnouncementFollowsWhenAnotherTakesOver() throws {
        let started = Date()
        let server = try startServer()
        let alice = try join(server, "alice", "laptop", frequency: 440, room: "r1")
        let bob = try join(server, "bob", "phone", frequency: 660, room: "r1")
        try bob.peer.setAudioGain(0)
        let carol = try join(server, "carol", "desk", frequency: 880, room: "r1")
        try carol.peer.setAudioGain(0)
        let everyone = [alice, bob, carol]
        let offer = try alice.peer.createOffer()
        XCTAssertTrue(offer.contains("a=extmap:1 urn:ietf:params:rtp-hdrext:ssrc-audio-level"), "the peer offers RFC 6464:\n\(offer)")

        let first = try awaitSpeaker(alice.key, at: everyone)
        print("alice announced as active speaker after \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
        // Everyone is connected and alice's tone reaches the others (the level rode on real media).
        for member in [bob, carol] {
            XCTAssertGreaterThan(packetGrowth(member, from: alice.key, over: 0.5), 10, "\(member.key) receives alice")
        }
        XCTAssertEqual(first, Set(everyone.map(\.key)))

        // Alice falls silent, carol speaks up: the floor moves to carol.
        try alice.peer.setAudioGain(0)
        try carol.peer.setAudioGain(1)
        let switched = Date()
        _ = try awaitSpeaker(carol.key, at: everyone)
        let after = Date().timeIntervalSince(switched)
        print("carol announced \(String(format: "%.2f", after)) s after she spoke up and alice fell silent")
        // The detector waits 300 ms of dominance; alice's stale 500 ms window holds voice too.
        XCTAssertGreaterThanOrEqual(after, 0.3, "the announcement respects the dominance time")

        for member in everyone {
            let named = speakerEvents(member).compactMap { $0 }
            XCTAssertFalse(named.contains(bob.key), "\(member.key): silent bob was never announced: \(speakerEvents(member))")
            XCTAssertEqual(named.first, alice.key, "\(member.key): \(speakerEvents(member))")
            print("\(member.key) saw room.activeSpeaker: \(speakerEvents(member).map { $0 ?? "null" })")
        }
    }

    /// The `room.activeSpeaker` announcements `member` received, in order (nil = nobody).
    func speakerEvents(_ member: RoomPeerMember) -> [String?] {
        member.room.events.compactMap { event in
            if case .activeSpeaker(let room, let who) = event, room == member.room.room { return .some(who) }
            return nil
        }
    }

    /// Pumps until the last announcement every member received names `speaker`; returns who
    /// got it. Fails (with what each member saw) on timeout.
    @discardableResult
    func awaitSpeaker(_ speaker: String, at members: [RoomPeerMember], file: StaticString = #filePath, line: UInt = #line) throws -> Set<String> {
        let done = try pump(members, timeout: Self.announceTimeout) {
            members.allSatisfy { self.speakerEvents($0).last == .some(speaker) }
        }
        let reached = Set(members.filter { speakerEvents($0).last == .some(speaker) }.map(\.key))
        XCTAssertTrue(done, "room.activeSpeaker \(speaker) not announced to everyone within \(Self.announceTimeout) s: "
                      + members.map { "\($0.key): \(speakerEvents($0).map { $0 ?? "null" })" }.joined(separator: "; "), file: file, line: line)
        return reached
    }
}
