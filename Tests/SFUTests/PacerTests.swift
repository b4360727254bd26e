import XCTest
@testable import SFU

/// An RTP packet of `size` bytes with the transport-cc extension (RFC 8285 one-byte form, id
/// `tccID`) carrying `transport`, as `Forward.write` produces it.
func pacerPacket(ssrc: UInt32, seq: UInt16, ts: UInt32, size: Int, tccID: UInt8 = 3, transport: UInt16 = 0) -> [UInt8] {
    var bytes = [UInt8](repeating: 0xAB, count: max(size, 24))
    bytes[0] = 0x90  // V=2, X
    bytes[1] = 96
    bytes[2] = UInt8(seq >> 8); bytes[3] = UInt8(seq & 0xFF)
    for index in 0..<4 {
        bytes[4 + index] = UInt8(truncatingIfNeeded: ts >> (24 - 8 * UInt32(index)))
        bytes[8 + index] = UInt8(truncatingIfNeeded: ssrc >> (24 - 8 * UInt32(index)))
    }
    bytes[12] = 0xBE; bytes[13] = 0xDE; bytes[14] = 0; bytes[15] = 1
    bytes[16] = tccID << 4 | 1
    bytes[17] = UInt8(transport >> 8); bytes[18] = UInt8(transport & 0xFF)
    bytes[19] = 0
    return bytes
}

/// A packet leaving the pacer, as the media loop would see it.
struct Egress: Equatable {
    var time: Int64
    var packetClass: PacketClass
    var ssrc: UInt32
    var seq: UInt16
    var timestamp: UInt32
    var size: Int
    /// The transport-wide number in the packet's bytes.
    var transport: UInt16
}

/// Drives a `Pacer` the way `SFUServer` does: packets are written with the lane's next
/// transport-wide number, admitted, and either leave at once or through `release` on a
/// 5 ms timer; every egress is logged with the number found in its bytes.
final class PacerDriver {
    let pacer: Pacer
    let lane = ParticipantID(1)
    var egress: [Egress] = []
    var dropped: [(ssrc: UInt32, seq: UInt16)] = []

    init(config: PacerConfig = PacerConfig(), estimate: UInt64? = 300_000) {
        pacer = Pacer(config: config)
        pacer.setEstimate(lane, bps: estimate, now: 0)
    }

    @discardableResult
    func offer(_ packetClass: PacketClass, ssrc: UInt32, seq: UInt16, ts: UInt32, size: Int, now: Int64) -> PacerAdmission {
        let bytes = pacerPacket(ssrc: ssrc, seq: seq, ts: ts, size: size, transport: pacer.transportSequence(of: lane))
        let admission = bytes.withUnsafeBytes {
            pacer.admit(lane, packetClass, packet: $0, frameSSRC: ssrc, frameTimestamp: ts, transportCCID: 3, now: now)
        }
        switch admission {
        case .sendNow: bytes.withUnsafeBytes { log($0, packetClass, now: now) }
        case .queued: break
        case .dropped: dropped.append((ssrc, seq))
        }
        return admission
    }

    func release(at now: Int64) {
        pacer.release(now: now) { packet in
            let bytes = UnsafeRawBufferPointer(rebasing: packet.bytes[0..<packet.length])
            XCTAssertEqual(UInt16(bytes[17]) << 8 | UInt16(bytes[18]), packet.transportSequenceNumber)
            log(bytes, packet.packetClass, now: now)
        }
    }

    /// Releases every 5 ms from `from` until nothing is queued (or `until`).
    func run(from: Int64, until: Int64 = 60_000_000) {
        var now = from
        while now <= until, pacer.nextWakeup(now: now) != nil {
            release(at: now)
            now += pacer.config.processInterval
        }
    }

    private func log(_ bytes: UnsafeRawBufferPointer, _ packetClass: PacketClass, now: Int64) {
        func be32(_ offset: Int) -> UInt32 { (0..<4).reduce(UInt32(0)) { $0 << 8 | UInt32(bytes[offset + $1]) } }
        egress.append(Egress(time: now, packetClass: packetClass, ssrc: be32(8), seq: UInt16(bytes[2]) << 8 | UInt16(bytes[3]),
                             timestamp: be32(4), size: bytes.count, transport: UInt16(bytes[17]) << 8 | UInt16(bytes[18])))
    }
}

/// Pure tests of the send-side pacer (docs/rtcp.md, "Pacing"), `now` passed in.
final class PacerTests: XCTestCase {
    /// A 50 kB keyframe (42 × 1,200 B) at 300 kbit/s × 2.5 = 750 kbit/s: the burst budget
    /// (40 ms = 3,750 B) leaves at once, the rest at the pacing rate — never ahead of
    /// budget + rate × t, all gone within (50,400 − 3,750) B / 750 kbit/s ≈ 498 ms plus one
    /// release interval.
    func testKeyframeBurstLeavesAtThePacingRateAndNeverFaster() {
        let driver = PacerDriver()
        XCTAssertEqual(driver.pacer.rate(of: driver.lane), 750_000)
        for seq in 0..<42 { driver.offer(.video, ssrc: 0xA, seq: UInt16(seq), ts: 9_000, size: 1_200, now: 0) }
        let atOnce = driver.egress.count
        XCTAssertEqual(atOnce, 4, "debt 0, 1,200, 2,400, 3,600 < 3,750: four leave at once")
        driver.run(from: 5_000)
        XCTAssertEqual(driver.egress.count, 42)
        XCTAssertEqual(driver.egress.map(\.seq), (0..<42).map { UInt16($0) }, "FIFO")
        let rate = 750_000.0
        var total = 0
        for packet in driver.egress {
            total += packet.size
            let allowed = 3_750 + 1_200 + rate * Double(packet.time) / 8_000_000
            XCTAssertLessThanOrEqual(Double(total), allowed, "ahead of the budget at \(packet.time) µs")
        }
        let expected = Int64((50_400.0 - 3_750) * 8_000_000 / rate)
        let last = driver.egress.last?.time ?? 0
        XCTAssertLessThanOrEqual(last, expected + driver.pacer.config.processInterval)
        XCTAssertGreaterThanOrEqual(last, expected - 2 * Int64(1_200 * 8_000_000 / rate), "not faster than the rate")
        XCTAssertEqual(driver.pacer.stats.queued, 38)
        XCTAssertEqual(driver.pacer.freeSlotCount, driver.pacer.config.slotCount, "every slot returned")
        print("pacer: 50.4 kB keyframe at 750 kbit/s: \(atOnce) packets at once, last after \(last / 1_000) ms (expected \(expected / 1_000) ms)")
    }

    /// Audio arriving while a keyframe is queued leaves at once, every time.
    func testAudioIsNeverDelayedBehindVideo() {
        let driver = PacerDriver()
        for seq in 0..<40 { driver.offer(.video, ssrc: 0xA, seq: UInt16(seq), ts: 9_000, size: 1_200, now: 0) }
        var now: Int64 = 0
        for seq in 0..<20 {
            now += 20_000
            driver.release(at: now - 10_000)
            XCTAssertEqual(driver.offer(.audio, ssrc: 0xB, seq: UInt16(seq), ts: UInt32(seq * 960), size: 120, now: now), .sendNow)
            XCTAssertGreaterThan(driver.pacer.queued(driver.lane).packets, 0, "video still queued at \(now)")
        }
        XCTAssertEqual(driver.egress.filter { $0.ssrc == 0xB }.map(\.time), (1...20).map { Int64($0) * 20_000 }, "each at its arrival")
    }

    /// NACK answers queue ahead of the new video already waiting.
    func testRetransmissionsLeaveBeforeQueuedVideo() {
        let driver = PacerDriver()
        for seq in 0..<20 { driver.offer(.video, ssrc: 0xA, seq: UInt16(seq), ts: 9_000, size: 1_200, now: 0) }
        XCTAssertEqual(driver.offer(.retransmission, ssrc: 0xC, seq: 700, ts: 0, size: 1_200, now: 1_000), .queued)
        XCTAssertEqual(driver.offer(.retransmission, ssrc: 0xC, seq: 701, ts: 0, size: 1_200, now: 1_000), .queued)
        driver.run(from: 5_000)
        let queuedPart = driver.egress.dropFirst(4)
        XCTAssertEqual(queuedPart.prefix(2).map(\.seq), [700, 701], "resends first")
        XCTAssertEqual(queuedPart.dropFirst(2).map(\.seq), (4..<20).map { UInt16($0) })
    }

    /// An estimate far below what is queued (120 kB at the 75 kbit/s floor: 12.8 s) drains
    /// within the 2 s queue-time limit; without the limit it would still be queued at 2 s.
    func testQueueTimeLimitRaisesTheRate() {
        let limited = PacerDriver(estimate: 30_000)
        for seq in 0..<100 { limited.offer(.video, ssrc: 0xA, seq: UInt16(seq), ts: UInt32(seq / 10), size: 1_200, now: 0) }
        limited.run(from: 5_000)
        XCTAssertEqual(limited.egress.count, 100)
        let last = limited.egress.last?.time ?? .max
        XCTAssertLessThanOrEqual(last, limited.pacer.config.maxQueueTime + limited.pacer.config.processInterval)
        XCTAssertGreaterThan(limited.pacer.stats.queueTimeRaises, 0)

        var config = PacerConfig()
        config.maxQueueTime = 60_000_000
        let unlimited = PacerDriver(config: config, estimate: 30_000)
        for seq in 0..<100 { unlimited.offer(.video, ssrc: 0xA, seq: UInt16(seq), ts: UInt32(seq / 10), size: 1_200, now: 0) }
        unlimited.run(from: 5_000, until: 2_000_000)
        XCTAssertGreaterThan(unlimited.pacer.queued(unlimited.lane).packets, 50, "at 75 kbit/s most of it would still wait")
        print("pacer: 120 kB at the 75 kbit/s floor drained in \(last / 1_000) ms with the 2 s limit")
    }

    /// A 16-slot pool: frame 1 (10 × 1,200 B) fits, frame 2 runs out of slots mid-frame and is
    /// dropped whole (its queued packets too), a keyframe is requested once, and the next
    /// frame is admitted again.
    func testPoolExhaustionDropsWholeFramesAndRequestsAKeyframe() {
        var config = PacerConfig()
        config.slotCount = 16
        config.maxPacketsPerLane = 16
        let driver = PacerDriver(config: config)
        var seq: UInt16 = 0
        for _ in 0..<10 { driver.offer(.video, ssrc: 0xA, seq: seq, ts: 1_000, size: 1_200, now: 0); seq += 1 }
        var frame2: [PacerAdmission] = []
        for _ in 0..<12 { frame2.append(driver.offer(.video, ssrc: 0xA, seq: seq, ts: 2_000, size: 1_200, now: 0)); seq += 1 }
        XCTAssertEqual(frame2.filter { $0 == .queued }.count, 10, "queued until the pool ran out")
        XCTAssertEqual(frame2.last, .dropped, "later packets of the dropped frame are dropped too")
        XCTAssertEqual(driver.pacer.takeKeyframeRequest(), PacerKeyframeRequest(lane: driver.lane, ssrc: 0xA))
        XCTAssertNil(driver.pacer.takeKeyframeRequest(), "one request per dropped frame")
        XCTAssertEqual(driver.pacer.stats.droppedFrames, 1)
        XCTAssertEqual(driver.pacer.stats.droppedVideoPackets, 12, "the whole frame: 10 queued + the 2 that found no room")
        XCTAssertEqual(driver.pacer.queued(driver.lane).packets, 6, "frame 1's queued packets stay")
        XCTAssertEqual(driver.offer(.video, ssrc: 0xA, seq: seq, ts: 3_000, size: 1_200, now: 0), .queued, "next frame admitted")
        driver.run(from: 5_000)
        XCTAssertEqual(Set(driver.egress.map(\.timestamp)), [1_000, 3_000], "nothing of frame 2 left")
        XCTAssertEqual(driver.egress.filter { $0.timestamp == 1_000 }.count, 10, "frame 1 whole")
        XCTAssertEqual(driver.pacer.freeSlotCount, 16)
    }

    /// Transport-wide numbers follow egress order across packets sent at once and released
    /// later, audio overtaking and resends jumping the queue: 0, 1, 2… as they leave.
    func testTransportSequenceIsAssignedInEgressOrder() {
        let driver = PacerDriver()
        for seq in 0..<12 { driver.offer(.video, ssrc: 0xA, seq: UInt16(seq), ts: 9_000, size: 1_200, now: 0) }
        driver.offer(.audio, ssrc: 0xB, seq: 1, ts: 960, size: 100, now: 2_000)
        driver.offer(.retransmission, ssrc: 0xC, seq: 50, ts: 0, size: 1_200, now: 3_000)
        driver.run(from: 5_000)
        driver.offer(.video, ssrc: 0xA, seq: 12, ts: 12_000, size: 1_200, now: 2_000_000)
        XCTAssertEqual(driver.egress.count, 15)
        XCTAssertEqual(driver.egress.map(\.transport), (0..<15).map { UInt16($0) })
        XCTAssertEqual(driver.egress[4].ssrc, 0xB, "audio went out at once, after the four of the burst")
        XCTAssertEqual(driver.egress[5].ssrc, 0xC, "then the resend")
        XCTAssertEqual(driver.egress.filter { $0.ssrc == 0xA }.map(\.seq), (0..<13).map { UInt16($0) }, "RTP order kept")
    }

    /// Without an estimate the lane is not paced: everything leaves at once, nothing copied.
    func testUnpacedLaneSendsEverythingAtOnce() {
        let driver = PacerDriver(estimate: nil)
        for seq in 0..<60 { XCTAssertEqual(driver.offer(.video, ssrc: 0xA, seq: UInt16(seq), ts: 1, size: 1_200, now: 0), .sendNow) }
        XCTAssertNil(driver.pacer.nextWakeup(now: 0))
        XCTAssertEqual(driver.pacer.stats.queued, 0)
    }

    /// A lane whose participant left: its slots return to the pool, its numbering restarts.
    func testRemovedLaneFreesItsSlots() {
        let driver = PacerDriver()
        for seq in 0..<30 { driver.offer(.video, ssrc: 0xA, seq: UInt16(seq), ts: 1, size: 1_200, now: 0) }
        XCTAssertLessThan(driver.pacer.freeSlotCount, driver.pacer.config.slotCount)
        driver.pacer.removeLane(driver.lane)
        XCTAssertEqual(driver.pacer.freeSlotCount, driver.pacer.config.slotCount)
        XCTAssertNil(driver.pacer.nextWakeup(now: 0))
        XCTAssertEqual(driver.pacer.transportSequence(of: driver.lane), 0)
    }

    /// The transport-cc value is found in both RFC 8285 forms, and only with the right length.
    func testExtensionValueOffset() {
        let oneByte = pacerPacket(ssrc: 1, seq: 1, ts: 1, size: 40, tccID: 3, transport: 7)
        oneByte.withUnsafeBytes {
            XCTAssertEqual(Pacer.extensionValueOffset($0, id: 3, length: 2), 17)
            XCTAssertNil(Pacer.extensionValueOffset($0, id: 4, length: 2))
            XCTAssertNil(Pacer.extensionValueOffset($0, id: 3, length: 3))
        }
        var twoByte = pacerPacket(ssrc: 1, seq: 1, ts: 1, size: 40)
        twoByte[12] = 0x10; twoByte[13] = 0x00; twoByte[14] = 0; twoByte[15] = 2
        twoByte[16] = 1; twoByte[17] = 1; twoByte[18] = 0x55  // id 1, 1 byte
        twoByte[19] = 20; twoByte[20] = 2; twoByte[21] = 0x12; twoByte[22] = 0x34; twoByte[23] = 0  // id 20, 2 bytes
        twoByte.withUnsafeBytes { XCTAssertEqual(Pacer.extensionValueOffset($0, id: 20, length: 2), 21) }
        let none = [UInt8](repeating: 0x80, count: 30)
        none.withUnsafeBytes { XCTAssertNil(Pacer.extensionValueOffset($0, id: 3, length: 2)) }
    }
}
