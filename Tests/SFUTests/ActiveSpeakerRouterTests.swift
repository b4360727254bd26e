import RTP
@testable import SFU
import XCTest

/// The router feeds each audio packet's RFC 6464 level to its room's detector and reports
/// dominant-speaker changes on tick.
final class ActiveSpeakerRouterTests: XCTestCase {
    /// One 20 ms Opus packet with the audio-level extension (id from `publisherExtensions`).
    func audio(_ ssrc: UInt32, _ index: Int, level: UInt8) -> [UInt8] {
        rtpPacket(ssrc: ssrc, seq: UInt16(index), ts: UInt32(960 * index), pt: 111,
                  extensions: [RTPHeaderExtension(id: publisherExtensions.audioLevel, value: [0x80 | level])])
    }

    func testLoudestMemberBecomesDominantAndLeavingGivesUpTheFloor() throws {
        let router = makeRouter()
        for (member, name) in [(alice, "a"), (bob, "b"), (carol, "c")] {
            try router.join(member, room: room, description: receiver(name), now: 0)
        }
        try router.publish(alice, track: audioTrack("a-audio", ssrc: 0xA), now: 0)
        try router.publish(bob, track: audioTrack("b-audio", ssrc: 0xB), now: 0)
        var changes: [ActiveSpeakerChange] = []
        // 2 s: alice talks at −20 dBov, bob is near silence (−110 dBov).
        for index in 0..<100 {
            let now = Int64(index) * 20_000
            _ = try send(router, from: alice, audio(0xA, index, level: 20), now: now)
            _ = try send(router, from: bob, audio(0xB, index, level: 110), now: now)
            _ = router.tick(now: now, ntp: NTPTime(raw: 0))
            changes += router.takeSpeakerChanges()
        }
        XCTAssertEqual(changes.map(\.speaker), [alice])
        XCTAssertEqual(router.dominantSpeaker(in: room), alice)
        try router.leave(alice)
        let afterLeave = router.takeSpeakerChanges()
        XCTAssertEqual(afterLeave.map(\.speaker), [nil])
        XCTAssertEqual(afterLeave.first?.previous, alice)
    }

    func testPacketsWithoutTheExtensionNeverMakeASpeaker() throws {
        let router = makeRouter()
        try router.join(alice, room: room, description: receiver("a"), now: 0)
        try router.join(bob, room: room, description: receiver("b"), now: 0)
        try router.publish(alice, track: audioTrack("a-audio", ssrc: 0xA), now: 0)
        for index in 0..<100 {
            let now = Int64(index) * 20_000
            _ = try send(router, from: alice, rtpPacket(ssrc: 0xA, seq: UInt16(index), ts: UInt32(960 * index), pt: 111), now: now)
            _ = router.tick(now: now, ntp: NTPTime(raw: 0))
        }
        XCTAssertTrue(router.takeSpeakerChanges().isEmpty)
        XCTAssertNil(router.dominantSpeaker(in: room))
    }
}
