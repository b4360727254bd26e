import RTP
import XCTest
@testable import SFU

final class ForwardingTests: XCTestCase {
    func testTwoParticipantsForwardWithSSRCPayloadTypeAndExtensionRewriting() throws {
        let router = makeRouter()
        try router.join(alice, room: room, description: receiver("alice-cname"), now: 0)
        try router.join(bob, room: room, description: receiver("bob-cname"), now: 0)
        try router.publish(alice, track: audioTrack("a-audio", ssrc: 0x1111), now: 0)
        try router.publish(bob, track: audioTrack("b-audio", ssrc: 0x2222), now: 0)
        try router.setMid("7", subscriber: bob, publisher: alice, track: TrackID("a-audio"))
        let bobGets = try XCTUnwrap(router.subscriptions(of: bob).first)
        let aliceGets = try XCTUnwrap(router.subscriptions(of: alice).first)
        XCTAssertEqual(bobGets.publisher, alice)
        XCTAssertEqual(bobGets.payloadTypes, [109])
        XCTAssertEqual(bobGets.cname, "alice-cname")
        XCTAssertNotEqual(bobGets.ssrc, 0x1111)
        XCTAssertNotEqual(bobGets.ssrc, aliceGets.ssrc)

        let packet = rtpPacket(ssrc: 0x1111, seq: 500, ts: 9600, pt: 111, extensions: [
            RTPHeaderExtension(id: 1, value: [0x85]),  // audio level
            RTPHeaderExtension(id: 2, value: [0x01, 0x02, 0x03]),  // abs-send-time
            RTPHeaderExtension(id: 3, value: [0x00, 0x09]),  // publisher's transport-cc: per leg, dropped
            RTPHeaderExtension(id: 4, value: Array("0".utf8)),  // publisher's mid: replaced
        ], payload: [0xDE, 0xAD, 0xBE, 0xEF], csrcs: [0xABCD])
        let out = try send(router, from: alice, packet, now: 1_000, transportSequenceNumber: 0x0102)
        XCTAssertEqual(out.count, 1)
        let got = try XCTUnwrap(out.first)
        XCTAssertEqual(got.subscriber, bob)
        XCTAssertEqual(got.ssrc, bobGets.ssrc)
        XCTAssertEqual(got.pt, 109)
        XCTAssertEqual(got.seq, 500)
        XCTAssertEqual(got.ts, 9600)
        XCTAssertEqual(got.csrcs, [0xABCD])
        XCTAssertEqual(got.payload, [0xDE, 0xAD, 0xBE, 0xEF])
        XCTAssertEqual(got.extensionProfile, 0xBEDE)
        XCTAssertEqual(got.extensions, [5: [0x85], 6: [0x01, 0x02, 0x03], 9: Array("7".utf8), 7: [0x01, 0x02]])

        let back = try send(router, from: bob, rtpPacket(ssrc: 0x2222, seq: 1, ts: 1, pt: 111), now: 1_000)
        XCTAssertEqual(back.map(\.subscriber), [alice])
        XCTAssertEqual(back.first?.ssrc, aliceGets.ssrc)
        XCTAssertNil(back.first?.extensionProfile, "no extensions in, no transport-cc number passed: no extension block")
    }

    func testThreeParticipantsEachReceiveTheOtherTwo() throws {
        let router = makeRouter()
        let people = [alice, bob, carol]
        for (index, person) in people.enumerated() {
            try router.join(person, room: room, description: receiver("c\(index)"), now: 0)
            try router.publish(person, track: audioTrack("audio", ssrc: 0x100 + UInt32(index)), now: 0)
        }
        var seen: [ParticipantID: Set<UInt32>] = [:]
        for (index, person) in people.enumerated() {
            let out = try send(router, from: person, rtpPacket(ssrc: 0x100 + UInt32(index), seq: 10, ts: 10, pt: 111), now: 0)
            XCTAssertEqual(Set(out.map(\.subscriber)), Set(people.filter { $0 != person }))
            for packet in out { seen[packet.subscriber, default: []].insert(packet.ssrc) }
        }
        for person in people {
            XCTAssertEqual(seen[person], Set(router.subscriptions(of: person).map(\.ssrc)), "each subscriber sees its own two outgoing SSRCs")
            XCTAssertEqual(seen[person]?.count, 2)
        }
    }

    func testTwoByteExtensionFormWhenSubscriberIDExceeds14() throws {
        let router = makeRouter()
        try router.join(alice, room: room, description: receiver("a"), now: 0)
        try router.join(bob, room: room, description: receiver("b", extensions: HeaderExtensionIDs(audioLevel: 20)), now: 0)
        try router.publish(alice, track: audioTrack("a", ssrc: 1), now: 0)
        let out = try send(router, from: alice, rtpPacket(ssrc: 1, seq: 1, ts: 1, pt: 111, extensions: [RTPHeaderExtension(id: 1, value: [0x7F])]), now: 0)
        XCTAssertEqual(out.first?.extensionProfile, 0x1000)
        XCTAssertEqual(out.first?.extensions, [20: [0x7F]])
    }

    func testTwoByteInputIsRewrittenLikeOneByteInput() throws {
        let router = makeRouter()
        try router.join(alice, room: room, description: receiver("a"), now: 0)
        try router.join(bob, room: room, description: receiver("b"), now: 0)
        try router.publish(alice, track: audioTrack("a", ssrc: 1), now: 0)
        let common = [RTPHeaderExtension(id: 1, value: [0x90]), RTPHeaderExtension(id: 2, value: [7, 8, 9])]
        // An unknown id 20 forces the publisher's packet into the two-byte form (general writer).
        let twoByte = try send(router, from: alice, rtpPacket(ssrc: 1, seq: 1, ts: 1, pt: 111, extensions: common + [RTPHeaderExtension(id: 20, value: [1])]), now: 0, transportSequenceNumber: 9)
        let oneByte = try send(router, from: alice, rtpPacket(ssrc: 1, seq: 2, ts: 1, pt: 111, extensions: common), now: 0, transportSequenceNumber: 9)
        XCTAssertEqual(twoByte.first?.extensionProfile, 0xBEDE)
        XCTAssertEqual(twoByte.first?.extensions, [5: [0x90], 6: [7, 8, 9], 7: [0, 9]])
        XCTAssertEqual(twoByte.first?.extensions, oneByte.first?.extensions)
        XCTAssertEqual(twoByte.first?.payload, oneByte.first?.payload)
    }

    func testNoCommonCodecDropsForThatSubscriberOnly() throws {
        let router = makeRouter()
        try router.join(alice, room: room, description: receiver("a"), now: 0)
        try router.join(bob, room: room, description: ParticipantDescription(cname: "b", receiveCodecs: [CodecDescription(name: "PCMU", payloadType: 0, clockRate: 8000)]), now: 0)
        try router.join(carol, room: room, description: receiver("c"), now: 0)
        try router.publish(alice, track: audioTrack("a", ssrc: 1), now: 0)
        let out = try send(router, from: alice, rtpPacket(ssrc: 1, seq: 1, ts: 1, pt: 111), now: 0)
        XCTAssertEqual(out.map(\.subscriber), [carol])
        XCTAssertEqual(router.subscriptionStats(subscriber: bob, publisher: alice, track: TrackID("a"))?.droppedNoCodec, 1)
    }

    func testWriteRefusesTooSmallOutput() throws {
        let router = makeRouter()
        try router.join(alice, room: room, description: receiver("a"), now: 0)
        try router.join(bob, room: room, description: receiver("b"), now: 0)
        try router.publish(alice, track: audioTrack("a", ssrc: 1), now: 0)
        let packet = rtpPacket(ssrc: 1, seq: 1, ts: 1, pt: 111, payload: Array(repeating: 7, count: 100))
        var batch = ForwardingBatch(capacity: 4)
        packet.withUnsafeBytes { _ = router.handleRTP(from: alice, packet: $0, now: 0, into: &batch) }
        var small = [UInt8](repeating: 0, count: 50)
        // The next packet (the same one again would be an audio duplicate, not forwarded).
        let next = rtpPacket(ssrc: 1, seq: 2, ts: 961, pt: 111, payload: Array(repeating: 7, count: 100))
        try next.withUnsafeBytes { input in
            XCTAssertEqual(router.handleRTP(from: alice, packet: input, now: 0, into: &batch), .forwarded)
            try small.withUnsafeMutableBytes { out in
                XCTAssertThrowsError(try batch.write(0, into: out)) { XCTAssertEqual($0 as? RTPError, .bufferTooSmall) }
                XCTAssertThrowsError(try batch.write(5, into: out)) { XCTAssertEqual($0 as? RTPError, .invalidField) }
            }
        }
    }

    func testBatchOverflowIsCountedNotGrown() throws {
        let router = makeRouter()
        try router.join(alice, room: room, description: receiver("a"), now: 0)
        for index in 0..<5 { try router.join(ParticipantID(10 + UInt32(index)), room: room, description: receiver("s"), now: 0) }
        try router.publish(alice, track: audioTrack("a", ssrc: 1), now: 0)
        var batch = ForwardingBatch(capacity: 3)
        rtpPacket(ssrc: 1, seq: 1, ts: 1, pt: 111).withUnsafeBytes { _ = router.handleRTP(from: alice, packet: $0, now: 0, into: &batch) }
        XCTAssertEqual(batch.count, 3)
        XCTAssertEqual(batch.overflowed, 2)
    }

    func testUnknownSSRCMalformedAndUnknownPayloadTypeAreDroppedAndCounted() throws {
        let router = makeRouter()
        try router.join(alice, room: room, description: receiver("a"), now: 0)
        try router.join(bob, room: room, description: receiver("b"), now: 0)
        try router.publish(alice, track: audioTrack("a", ssrc: 1), now: 0)
        try router.publish(bob, track: audioTrack("b", ssrc: 2), now: 0)
        XCTAssertEqual(disposition(router, from: alice, rtpPacket(ssrc: 99, seq: 1, ts: 1, pt: 111), now: 0), .unknownSSRC)
        // Bob's SSRC arriving on Alice's transport is unknown there too.
        XCTAssertEqual(disposition(router, from: alice, rtpPacket(ssrc: 2, seq: 1, ts: 1, pt: 111), now: 0), .unknownSSRC)
        XCTAssertEqual(disposition(router, from: alice, [0x80, 0x6F, 0x00], now: 0), .malformed)
        XCTAssertEqual(disposition(router, from: alice, rtpPacket(ssrc: 1, seq: 1, ts: 1, pt: 100), now: 0), .unknownPayloadType)
        XCTAssertEqual(disposition(router, from: ParticipantID(77), rtpPacket(ssrc: 1, seq: 1, ts: 1, pt: 111), now: 0), .unknownParticipant)
        let stats = try XCTUnwrap(router.participantStats(alice))
        XCTAssertEqual(stats.droppedUnknownSSRC, 2)
        XCTAssertEqual(stats.droppedMalformedRTP, 1)
        XCTAssertEqual(router.trackStats(alice, track: TrackID("a"))?.droppedUnknownPayloadType, 1)
        XCTAssertEqual(router.subscriptionStats(subscriber: bob, publisher: alice, track: TrackID("a"))?.packetsSent, 0)
    }

    func testSSRCLearnedFromMidWhenUnsignaled() throws {
        let router = makeRouter()
        try router.join(alice, room: room, description: receiver("a"), now: 0)
        try router.join(bob, room: room, description: receiver("b"), now: 0)
        try router.publish(alice, track: audioTrack("a", ssrc: nil, mid: "0"), now: 0)
        XCTAssertEqual(disposition(router, from: alice, rtpPacket(ssrc: 5, seq: 1, ts: 1, pt: 111), now: 0), .unknownSSRC, "no mid: cannot bind")
        let out = try send(router, from: alice, rtpPacket(ssrc: 5, seq: 2, ts: 1, pt: 111, extensions: [RTPHeaderExtension(id: 4, value: Array("0".utf8))]), now: 0)
        XCTAssertEqual(out.map(\.subscriber), [bob])
        XCTAssertEqual(try send(router, from: alice, rtpPacket(ssrc: 5, seq: 3, ts: 1, pt: 111), now: 0).count, 1, "bound: no mid needed any more")
        XCTAssertEqual(router.trackStats(alice, track: TrackID("a"))?.streams.first?.ssrc, 5)
    }
}
