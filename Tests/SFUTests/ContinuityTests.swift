import RTP
import XCTest
@testable import SFU
import SplitMix

/// Sequence numbers and timestamps stay continuous for a subscriber when the source behind
/// its outgoing SSRC changes (re-publish with a new SSRC, simulcast layer switch).
final class ContinuityTests: XCTestCase {
    static var startingPoints: [UInt16] {
        var rng = SplitMix64(state: 7)
        return [0, 1, 32767, 32768, 65534, 65535] + (0..<4).map { _ in UInt16.random(in: 0...UInt16.max, using: &rng) }
    }

    func testRepublishContinuesSequenceAndTimestampFromManyStartingPoints() throws {
        var rng = SplitMix64(state: 99)
        for firstStart in Self.startingPoints {
            for secondStart in Self.startingPoints {
                let router = makeRouter()
                try router.join(alice, room: room, description: receiver("a"), now: 0)
                try router.join(bob, room: room, description: receiver("b"), now: 0)
                try router.publish(alice, track: audioTrack("mic", ssrc: 0xA), now: 0)
                let firstTS = UInt32.random(in: 0...UInt32.max, using: &rng)
                var outputs: [Received] = []
                var now: Int64 = 0
                for index in 0..<40 {
                    now = Int64(index) * 20_000
                    outputs += try send(router, from: alice, rtpPacket(ssrc: 0xA, seq: firstStart &+ UInt16(index), ts: firstTS &+ UInt32(index) * 960, pt: 111), now: now)
                }
                // Re-publish: same track id, new SSRC, unrelated numbering.
                try router.publish(alice, track: audioTrack("mic", ssrc: 0xB), now: now)
                let secondTS = UInt32.random(in: 0...UInt32.max, using: &rng)
                for index in 0..<40 {
                    let arrival = now + 100_000 + Int64(index) * 20_000  // 100 ms pause before the new source
                    outputs += try send(router, from: alice, rtpPacket(ssrc: 0xB, seq: secondStart &+ UInt16(index), ts: secondTS &+ UInt32(index) * 960, pt: 111), now: arrival)
                }
                XCTAssertEqual(outputs.count, 80)
                XCTAssertEqual(Set(outputs.map(\.ssrc)).count, 1, "one outgoing SSRC throughout")
                for index in 1..<outputs.count {
                    XCTAssertEqual(outputs[index].seq, outputs[index - 1].seq &+ 1, "start \(firstStart)→\(secondStart) at \(index)")
                    let step = outputs[index].ts &- outputs[index - 1].ts
                    // 960 per packet; across the switch the 100 ms wall-clock gap (4800 at 48 kHz).
                    XCTAssertEqual(step, index == 40 ? 4800 : 960, "start \(firstStart)→\(secondStart) at \(index)")
                }
            }
        }
    }

    func testLossInsideASourceStaysVisibleAndLatePacketsFromOldSourceAreDropped() throws {
        let router = makeRouter()
        try router.join(alice, room: room, description: receiver("a"), now: 0)
        try router.join(bob, room: room, description: receiver("b"), now: 0)
        try router.publish(alice, track: audioTrack("mic", ssrc: 0xA), now: 0)
        let a0 = try send(router, from: alice, rtpPacket(ssrc: 0xA, seq: 65534, ts: 0, pt: 111), now: 0)
        let a1 = try send(router, from: alice, rtpPacket(ssrc: 0xA, seq: 1, ts: 2880, pt: 111), now: 60_000)  // 65535, 0 lost
        XCTAssertEqual(a1.first?.seq, a0.first.map { $0.seq &+ 3 }, "a real gap is kept for the subscriber's NACK/loss logic")
        try router.publish(alice, track: audioTrack("mic", ssrc: 0xB), now: 60_000)
        let b0 = try send(router, from: alice, rtpPacket(ssrc: 0xB, seq: 7, ts: 5, pt: 111), now: 80_000)
        XCTAssertEqual(b0.first?.seq, a1.first.map { $0.seq &+ 1 })
        XCTAssertEqual(disposition(router, from: alice, rtpPacket(ssrc: 0xA, seq: 0, ts: 1920, pt: 111), now: 81_000), .unknownSSRC, "old SSRC unbound by re-publish")
        XCTAssertEqual(try send(router, from: alice, rtpPacket(ssrc: 0xB, seq: 6, ts: 0, pt: 111), now: 82_000).count, 0, "a packet from before the switch point is dropped")
        XCTAssertEqual(router.subscriptionStats(subscriber: bob, publisher: alice, track: TrackID("mic"))?.droppedLate, 1)
    }
}
