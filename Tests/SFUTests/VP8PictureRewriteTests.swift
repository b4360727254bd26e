import RTP
import XCTest
@testable import SFU

/// PictureID / TL0PICIDX continuity across simulcast switches (RFC 7741 §4.2, `VP8PictureFields`).
final class VP8PictureRewriteTests: XCTestCase {
    /// A VP8 payload: descriptor with X, I (15-bit PictureID), L (TL0PICIDX), T (TID), then
    /// the payload header octet (keyframe: P bit clear, with the RFC 6386 start code).
    static func payload(pictureID: UInt16, tl0: UInt8, keyframe: Bool, start: Bool = true) -> [UInt8] {
        let descriptor: [UInt8] = [0x80 | (start ? 0x10 : 0), 0xE0, 0x80 | UInt8(pictureID >> 8), UInt8(pictureID & 0xFF), tl0, 0x00]
        guard start else { return descriptor + [0x55, 0x66] }
        return descriptor + (keyframe ? [0x00, 0x00, 0x00, 0x9D, 0x01, 0x2A, 0x40, 0x01, 0xF0, 0x00] : [0x01, 0xBB, 0xCC])
    }

    func testParsesFifteenAndSevenBitPictureIDsAndTL0() {
        let wide = Self.payload(pictureID: 0x1234, tl0: 0xAB, keyframe: true)
        let fields = wide.withUnsafeBytes { VP8PictureFields(payload: $0) }
        XCTAssertEqual(fields, VP8PictureFields(pictureID: 0x1234, wide: true, tl0PicIdx: 0xAB))
        // X, I only, 7-bit PictureID 0x55.
        let narrow: [UInt8] = [0x90, 0x80, 0x55, 0x00]
        XCTAssertEqual(narrow.withUnsafeBytes { VP8PictureFields(payload: $0) }, VP8PictureFields(pictureID: 0x55, wide: false, tl0PicIdx: nil))
        // No X, no I, or cut short: nothing to rewrite.
        for bytes: [UInt8] in [[0x10, 0x00, 0x9D], [0x90, 0x40, 0x12], [0x90, 0x80], [0x90, 0x80, 0x81], [0x90, 0xC0, 0x81, 0x00]] {
            XCTAssertNil(bytes.withUnsafeBytes { VP8PictureFields(payload: $0) }, "\(bytes)")
        }
    }

    func testRewriteAddsDeltasModuloTheFieldWidths() {
        var wide = Self.payload(pictureID: 0x7FFE, tl0: 0xFF, keyframe: false)
        wide.withUnsafeMutableBytes { VP8PictureFields.rewrite($0, pictureIDDelta: 3, tl0Delta: 2) }
        XCTAssertEqual(wide.withUnsafeBytes { VP8PictureFields(payload: $0) }, VP8PictureFields(pictureID: 0x0001, wide: true, tl0PicIdx: 0x01))
        XCTAssertEqual(Array(wide[6...]), [0x01, 0xBB, 0xCC], "the VP8 payload is untouched")
        var narrow: [UInt8] = [0x90, 0x80, 0x7F, 0x42]
        narrow.withUnsafeMutableBytes { VP8PictureFields.rewrite($0, pictureIDDelta: 2, tl0Delta: 9) }
        XCTAssertEqual(narrow, [0x90, 0x80, 0x01, 0x42], "7-bit: wraps at 128, M stays clear, no TL0 to touch")
    }

    /// Two layers numbered far apart (high layer ids 20,000…, low layer 300…, TL0 200… and
    /// 7…): after each switch the subscriber's ids continue one past the last, in both
    /// directions and across the 15-bit and 8-bit wraps; a NACKed packet comes back with the
    /// ids it was first sent with.
    func testSwitchesContinueThePictureSequenceAndResendsKeepIt() throws {
        let router = makeRouter()
        try router.join(alice, room: room, description: receiver("a"), now: 0)
        try router.join(bob, room: room, description: receiver("b"), now: 0)
        try router.publish(alice, track: videoTrack("cam", layers: [StreamDescription(ssrc: 0x10), StreamDescription(ssrc: 0x30)]), now: 0)
        var now: Int64 = 0
        var seq: [UInt32: UInt16] = [0x10: 1000, 0x30: 5000]
        var out: [(Received, Bool)] = []   // forwarded packet, is the first of a picture
        // Frame `index` of a layer: two packets (start + continuation) of one picture.
        func frame(_ ssrc: UInt32, pictureID: UInt16, tl0: UInt8, keyframe: Bool) throws {
            now += 16_500
            for start in [true, false] {
                let s = seq[ssrc]!
                seq[ssrc] = s &+ 1
                let packet = rtpPacket(ssrc: ssrc, seq: s, ts: UInt32(now / 1000 * 90), pt: 96,
                                       payload: Self.payload(pictureID: pictureID, tl0: tl0, keyframe: keyframe, start: start))
                out += try send(router, from: alice, packet, now: now).map { ($0, start) }
            }
        }
        func both(_ index: Int, keyLow: Bool = false, keyHigh: Bool = false) throws {
            try frame(0x30, pictureID: (32_760 &+ UInt16(index)) & 0x7FFF, tl0: UInt8(truncatingIfNeeded: 250 + index), keyframe: keyHigh)
            try frame(0x10, pictureID: 300 + UInt16(index), tl0: UInt8(truncatingIfNeeded: 7 + index), keyframe: keyLow)
        }
        try both(0, keyHigh: true)
        for index in 1..<12 { try both(index) }               // high layer across both wraps
        try router.setTargetLayer(subscriber: bob, publisher: alice, track: TrackID("cam"), layer: 0)
        try both(12)                                         // still high: no low keyframe yet
        try both(13, keyLow: true)
        for index in 14..<16 { try both(index) }
        try router.setTargetLayer(subscriber: bob, publisher: alice, track: TrackID("cam"), layer: 1)
        try both(16, keyHigh: true)
        try both(17)
        let pictures = try out.filter(\.1).map { received in
            try XCTUnwrap(received.0.payload.withUnsafeBytes { VP8PictureFields(payload: $0) })
        }
        // One picture per frame index, and at index 13 two: the high frame (sent before the
        // low keyframe) and the low keyframe the switch happens on.
        print(pictures.map { "\($0.pictureID)/\($0.tl0PicIdx ?? 0)" })
        XCTAssertEqual(pictures.count, 19)
        for (earlier, later) in zip(pictures, pictures.dropFirst()) {
            XCTAssertEqual((later.pictureID &- earlier.pictureID) & 0x7FFF, 1, "\(earlier) → \(later)")
            XCTAssertEqual(later.tl0PicIdx.map { $0 &- (earlier.tl0PicIdx ?? 0) }, 1, "\(earlier) → \(later)")
        }
        XCTAssertEqual(pictures.first?.pictureID, 32_760, "the first source keeps its own numbering")
        // Both packets of a picture carry the same ids.
        for pair in stride(from: 0, to: out.count - 1, by: 2) {
            let ids = try [out[pair].0, out[pair + 1].0].map { try XCTUnwrap($0.payload.withUnsafeBytes { VP8PictureFields(payload: $0) }) }
            XCTAssertEqual(ids[0], ids[1])
        }
        // A resend of the high layer's latest packet (after two switches: its ids rewritten)
        // carries the ids it was first sent with.
        let latest = try XCTUnwrap(out.last?.0)
        let info = try XCTUnwrap(router.subscriptions(of: bob).first)
        _ = try rtcp(router, from: bob, [.nack(RTCPGenericNACK(senderSSRC: 1, mediaSSRC: info.ssrc, sequenceNumbers: [latest.seq]))], now: now + 1_000)
        var pending: [PendingRetransmission] = []
        router.takeRetransmissions(into: &pending)
        XCTAssertEqual(pending.count, 1)
        var buffer = [UInt8](repeating: 0, count: 1600)
        let length = try XCTUnwrap(try buffer.withUnsafeMutableBytes { try router.writeRetransmission(pending[0], now: now + 1_000, into: $0) })
        let resent = try parseReceived(Array(buffer[..<length]), subscriber: bob)
        XCTAssertEqual(resent.payload, latest.payload, "no RTX negotiated: the original again, ids as first sent")
    }
}
