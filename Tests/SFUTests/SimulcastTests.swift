import RTP
import XCTest
@testable import SFU

final class SimulcastTests: XCTestCase {
    let layers = [StreamDescription(ssrc: 0x10), StreamDescription(ssrc: 0x20), StreamDescription(ssrc: 0x30)]

    func testForwardsOnlySelectedLayerAndSwitchesOnlyOnKeyframe() throws {
        let router = makeRouter()
        try router.join(alice, room: room, description: receiver("a"), now: 0)
        try router.join(bob, room: room, description: receiver("b"), now: 0)
        try router.publish(alice, track: videoTrack("cam", layers: layers), now: 0)
        var seq: [UInt32: UInt16] = [0x10: 100, 0x20: 2000, 0x30: 65530]
        var now: Int64 = 0
        func frame(_ ssrc: UInt32, _ payload: [UInt8]) throws -> [Received] {
            now += 10_000
            let s = seq[ssrc]!
            seq[ssrc] = s &+ 1
            return try send(router, from: alice, rtpPacket(ssrc: ssrc, seq: s, ts: UInt32(now / 1000 * 90), pt: 96, payload: payload), now: now)
        }
        // New subscriber waits for a keyframe of its target (default: highest) layer.
        XCTAssertEqual(try frame(0x30, vp8Delta).count, 0)
        XCTAssertEqual(try frame(0x10, vp8Keyframe).count, 0, "keyframe of a layer that is not the target")
        let first = try frame(0x30, vp8Keyframe)
        XCTAssertEqual(first.count, 1)
        XCTAssertEqual(first.first?.pt, 120)
        XCTAssertEqual(try frame(0x30, vp8Continuation).count, 1)
        XCTAssertEqual(try frame(0x20, vp8Delta).count, 0)

        try router.setTargetLayer(subscriber: bob, publisher: alice, track: TrackID("cam"), layer: 0)
        XCTAssertEqual(try frame(0x30, vp8Delta).count, 1, "keeps the current layer until the target's keyframe")
        XCTAssertEqual(try frame(0x10, vp8Delta).count, 0, "target layer delta frame: cannot switch")
        let last = try frame(0x30, vp8Delta)
        let switched = try frame(0x10, vp8Keyframe)
        XCTAssertEqual(switched.count, 1)
        XCTAssertEqual(switched.first?.seq, last.first.map { $0.seq &+ 1 }, "continuous across the layer switch")
        XCTAssertEqual(switched.first?.ssrc, last.first?.ssrc)
        XCTAssertEqual(try frame(0x30, vp8Keyframe).count, 0, "old layer no longer forwarded")
        XCTAssertEqual(try frame(0x10, vp8Delta).count, 1)
        let stats = try XCTUnwrap(router.subscriptionStats(subscriber: bob, publisher: alice, track: TrackID("cam")))
        XCTAssertEqual(stats.currentLayer, 0)
        XCTAssertEqual(stats.targetLayer, 0)
        XCTAssertEqual(stats.layerSwitches, 1)
        XCTAssertThrowsError(try router.setTargetLayer(subscriber: bob, publisher: alice, track: TrackID("cam"), layer: 3)) {
            XCTAssertEqual($0 as? SFUError, .badLayer)
        }
    }

    func testLayerSwitchIsContinuousFromManyStartingPoints() throws {
        for high in ContinuityTests.startingPoints {
            for low in ContinuityTests.startingPoints {
                let router = makeRouter()
                try router.join(alice, room: room, description: receiver("a"), now: 0)
                try router.join(bob, room: room, description: receiver("b"), now: 0)
                try router.publish(alice, track: videoTrack("cam", layers: [StreamDescription(ssrc: 0x10), StreamDescription(ssrc: 0x30)]), now: 0)
                var out: [Received] = []
                // Both layers run side by side; the high layer is forwarded across its own wrap.
                for index in 0..<5 {
                    let now = Int64(index) * 33_000
                    let ts = UInt32(index) * 2970
                    out += try send(router, from: alice, rtpPacket(ssrc: 0x30, seq: high &+ UInt16(index), ts: 1_000 &+ ts, pt: 96, payload: index == 0 ? vp8Keyframe : vp8Delta), now: now)
                    _ = try send(router, from: alice, rtpPacket(ssrc: 0x10, seq: low &+ UInt16(index), ts: 900_000 &+ ts, pt: 96, payload: vp8Delta), now: now)
                }
                try router.setTargetLayer(subscriber: bob, publisher: alice, track: TrackID("cam"), layer: 0)
                for index in 5..<10 {
                    let now = Int64(index) * 33_000
                    out += try send(router, from: alice, rtpPacket(ssrc: 0x10, seq: low &+ UInt16(index), ts: 900_000 &+ UInt32(index) * 2970, pt: 96, payload: index == 5 ? vp8Keyframe : vp8Delta), now: now)
                }
                XCTAssertEqual(out.count, 10, "high \(high) low \(low)")
                for index in 1..<out.count {
                    XCTAssertEqual(out[index].seq, out[index - 1].seq &+ 1, "high \(high) low \(low) at \(index)")
                    XCTAssertEqual(out[index].ts &- out[index - 1].ts, 2970, "one 33 ms frame at 90 kHz, also across the switch")
                }
            }
        }
    }

    func testTwoSubscribersOnDifferentLayers() throws {
        let router = makeRouter()
        for person in [alice, bob, carol] { try router.join(person, room: room, description: receiver("x"), now: 0) }
        try router.publish(alice, track: videoTrack("cam", layers: layers), now: 0)
        try router.setTargetLayer(subscriber: carol, publisher: alice, track: TrackID("cam"), layer: 1)
        XCTAssertEqual(try send(router, from: alice, rtpPacket(ssrc: 0x30, seq: 1, ts: 1, pt: 96, payload: vp8Keyframe), now: 0).map(\.subscriber), [bob])
        XCTAssertEqual(try send(router, from: alice, rtpPacket(ssrc: 0x20, seq: 1, ts: 1, pt: 96, payload: vp8Keyframe), now: 0).map(\.subscriber), [carol])
    }

    func testRidBindsUnsignaledSimulcastSSRCs() throws {
        let router = makeRouter()
        try router.join(alice, room: room, description: receiver("a"), now: 0)
        try router.join(bob, room: room, description: receiver("b"), now: 0)
        let ridLayers = ["q", "h", "f"].map { StreamDescription(ssrc: nil, rid: $0) }
        try router.publish(alice, track: videoTrack("cam", layers: ridLayers), now: 0)
        func packet(_ ssrc: UInt32, rid: String?, _ payload: [UInt8]) -> [UInt8] {
            rtpPacket(ssrc: ssrc, seq: 1, ts: 1, pt: 96, extensions: rid.map { [RTPHeaderExtension(id: 10, value: Array($0.utf8))] } ?? [], payload: payload)
        }
        XCTAssertEqual(disposition(router, from: alice, packet(0x77, rid: nil, vp8Keyframe), now: 0), .unknownSSRC)
        XCTAssertEqual(try send(router, from: alice, packet(0x77, rid: "f", vp8Keyframe), now: 0).count, 1)
        XCTAssertEqual(try send(router, from: alice, packet(0x55, rid: "q", vp8Keyframe), now: 0).count, 0, "bound to layer 0, not selected")
        let stats = try XCTUnwrap(router.trackStats(alice, track: TrackID("cam")))
        XCTAssertEqual(stats.streams.map(\.ssrc), [0x55, nil, 0x77])
        XCTAssertEqual(disposition(router, from: alice, packet(0x66, rid: "f", vp8Keyframe), now: 0), .unknownSSRC, "layer already bound")
    }

    func testVP8KeyframeDetectionPerRFC7741() {
        func detect(_ bytes: [UInt8]) -> Bool { bytes.withUnsafeBytes { KeyframeDetector.isVP8KeyframeStart($0) } }
        XCTAssertTrue(detect(vp8Keyframe))
        XCTAssertFalse(detect(vp8Delta), "P = 1: interframe")
        XCTAssertFalse(detect(vp8Continuation), "S = 0")
        XCTAssertFalse(detect([0x11, 0x00]), "PID 1: not the first partition")
        // X with I (15-bit picture id, M set), L, T: descriptor is 1 + 1 + 2 + 1 + 1 bytes.
        XCTAssertTrue(detect([0x90, 0xE0, 0x80, 0x01, 0x05, 0x40, 0x00, 0x9D]))
        XCTAssertFalse(detect([0x90, 0xE0, 0x80, 0x01, 0x05, 0x40, 0x01, 0x9D]))
        // X with I (7-bit picture id) only.
        XCTAssertTrue(detect([0x90, 0x80, 0x05, 0x00]))
        XCTAssertFalse(detect([0x90, 0x80, 0x05]), "truncated before the payload header")
        XCTAssertFalse(detect([]))
    }

    func testH264KeyframeDetectionPerRFC6184() {
        func detect(_ bytes: [UInt8]) -> Bool { bytes.withUnsafeBytes { KeyframeDetector.isH264KeyframeStart($0) } }
        XCTAssertTrue(detect([0x65, 0x88]), "IDR")
        XCTAssertTrue(detect([0x67, 0x42]), "SPS")
        XCTAssertFalse(detect([0x41, 0x9A]), "non-IDR slice")
        XCTAssertTrue(detect([0x78, 0x00, 0x02, 0x67, 0x42, 0x00, 0x01, 0x68]), "STAP-A with SPS")
        XCTAssertTrue(detect([0x7C, 0x85, 0x00]), "FU-A start of IDR")
        XCTAssertFalse(detect([0x7C, 0x05, 0x00]), "FU-A continuation")
    }
}
