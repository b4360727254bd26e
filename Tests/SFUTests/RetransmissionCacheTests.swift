import RTP
import XCTest
@testable import SFU
import SplitMix

/// Outgoing packet whose payload encodes its sequence number (so a wrong slot shows up).
func cachedPacket(seq: UInt16, ssrc: UInt32 = 0xABCD_0001, pt: UInt8 = 120, payloadCount: Int = 8) -> [UInt8] {
    let payload = (0..<payloadCount).map { UInt8(truncatingIfNeeded: Int(seq) &* 31 &+ $0) }
    return rtpPacket(ssrc: ssrc, seq: seq, ts: UInt32(seq) &* 3000, pt: pt, payload: payload)
}

extension RetransmissionCache {
    @discardableResult
    func insert(_ bytes: [UInt8], now: Int64) -> Bool {
        bytes.withUnsafeBytes { insert($0, now: now) }
    }

    func bytes(_ seq: UInt16, now: Int64) -> [UInt8]? {
        (try? withPacket(seq, now: now) { Array($0) }) ?? nil
    }
}

final class RetransmissionCacheTests: XCTestCase {
    func testPresetsAndMemoryFigure() {
        XCTAssertEqual(RetransmissionCacheConfig.video, RetransmissionCacheConfig(capacity: 600, byteCapacity: 192 * 1024, maxAge: 1_000_000))
        XCTAssertEqual(RetransmissionCacheConfig.audio, RetransmissionCacheConfig(capacity: 100, byteCapacity: 16 * 1024, maxAge: 1_000_000))
        let video = RetransmissionCache(config: .video)
        let audio = RetransmissionCache(config: .forKind(.audio))
        XCTAssertEqual(video.memoryFootprint, 192 * 1024 + 600 * 32)
        XCTAssertEqual(audio.memoryFootprint, 16 * 1024 + 100 * 32)
        // Simulcast: a quarter of the bytes and packets per layer below the top, at least
        // 16 KB and 64 packets.
        let layers = (0...2).map { RetransmissionCacheConfig.forLayer($0, highestLayer: 2, kind: .video) }
        XCTAssertEqual(layers.map(\.byteCapacity), [16 * 1024, 48 * 1024, 192 * 1024])
        XCTAssertEqual(layers.map(\.capacity), [64, 150, 600])
        XCTAssertEqual(RetransmissionCacheConfig.forLayer(0, highestLayer: 1, kind: .audio).capacity, 64)
        XCTAssertEqual(RetransmissionCacheConfig.forLayer(0, highestLayer: 0, kind: .video), .video)
        XCTAssertEqual(RetransmissionCacheConfig.forLayer(0, highestLayer: 0, kind: .audio), .audio)
        let simulcast = (0...2).reduce(0) { $0 + RetransmissionCache(config: .forLayer($1, highestLayer: 2, kind: .video)).memoryFootprint }
        let videoLog = SentPacketStorage.forKind(.video).memoryFootprint
        let audioLog = SentPacketStorage.forKind(.audio).memoryFootprint
        XCTAssertEqual(videoLog, 256 * 24)
        XCTAssertEqual(audioLog, 64 * 24)
        print("""
            Retransmission memory: per publisher stream video \(video.memoryFootprint) B (3-layer simulcast \(simulcast) B), \
            audio \(audio.memoryFootprint) B; per subscription video \(videoLog) B, audio \(audioLog) B
            """)
    }

    func testByteBoundEvictsOldestPacketsFirst() {
        // 4,000 bytes of ring: 1,100-byte packets, 3 fit (the 4th would straddle the end and
        // starts over at 0, overwriting the first).
        let cache = RetransmissionCache(config: RetransmissionCacheConfig(capacity: 100, byteCapacity: 4000, maxAge: 1_000_000))
        for seq: UInt16 in 65534...65535 { XCTAssertTrue(cache.insert(cachedPacket(seq: seq, payloadCount: 1088), now: 0)) }
        XCTAssertTrue(cache.insert(cachedPacket(seq: 0, payloadCount: 1088), now: 0))
        XCTAssertEqual(cache.bytes(65534, now: 0), cachedPacket(seq: 65534, payloadCount: 1088))
        XCTAssertTrue(cache.insert(cachedPacket(seq: 1, payloadCount: 1088), now: 0))
        XCTAssertEqual(cache.presence(of: 65534, now: 0), .missing, "its bytes were overwritten")
        for seq: UInt16 in [65535, 0, 1] { XCTAssertEqual(cache.bytes(seq, now: 0), cachedPacket(seq: seq, payloadCount: 1088), "seq \(seq)") }
        // Small packets keep going around the ring; only the last 4,000 bytes' worth answer.
        for seq: UInt16 in 2..<200 { cache.insert(cachedPacket(seq: seq, payloadCount: 88), now: 0) }
        let answering = (100..<200).filter { cache.presence(of: UInt16($0), now: 0) == .stored }
        XCTAssertEqual(answering.count, 40, "4,000 / 100-byte packets")
        XCTAssertEqual(answering.first, 160)
        for seq in answering { XCTAssertEqual(cache.bytes(UInt16(seq), now: 0), cachedPacket(seq: UInt16(seq), payloadCount: 88)) }
    }

    func testStoredBytesComeBackExactly() {
        let cache = RetransmissionCache(config: .video)
        let packet = cachedPacket(seq: 42, payloadCount: 1100)
        XCTAssertTrue(cache.insert(packet, now: 0))
        XCTAssertEqual(cache.bytes(42, now: 10), packet)
        XCTAssertEqual(cache.presence(of: 42, now: 10), .stored)
        XCTAssertEqual(cache.presence(of: 43, now: 10), .missing)
        XCTAssertNil(cache.bytes(41, now: 10))
    }

    func testEvictionByCountFromManyStartingPoints() {
        var random = SplitMix64(state: 7)
        let starts: [UInt16] = [0, 1, 599, 65535, 65534, 65000, 64936, 32767, 32768] + (0..<20).map { _ in UInt16.random(in: 0...UInt16.max, using: &random) }
        for start in starts {
            let cache = RetransmissionCache(config: RetransmissionCacheConfig(capacity: 600, maxAge: 10_000_000))
            for offset in 0..<601 {
                XCTAssertTrue(cache.insert(cachedPacket(seq: start &+ UInt16(offset)), now: Int64(offset)), "start \(start) offset \(offset)")
            }
            // 601 packets into 600 slots: the first is gone, the other 600 are intact.
            XCTAssertEqual(cache.presence(of: start, now: 700), .missing, "start \(start)")
            for offset in 1..<601 {
                let seq = start &+ UInt16(offset)
                XCTAssertEqual(cache.bytes(seq, now: 700), cachedPacket(seq: seq), "start \(start) seq \(seq)")
            }
            // One lap later (seq + 600 on the same slot) the old one must not answer.
            XCTAssertEqual(cache.presence(of: start &+ 601, now: 700), .missing)
            XCTAssertEqual(cache.presence(of: start &- 1, now: 700), .missing)
        }
    }

    func testLookupAcrossWrapFromManyStartingPoints() {
        // Runs of 3 × capacity packets crossing 65535 → 0 at every position of the ring.
        for start in stride(from: 65536 - 1500, to: 65536, by: 37) {
            let cache = RetransmissionCache(config: RetransmissionCacheConfig(capacity: 100, maxAge: 1_000_000))
            var seq = UInt16(start)
            for step in 0..<300 {
                cache.insert(cachedPacket(seq: seq), now: Int64(step) * 1000)
                seq &+= 1
            }
            let newest = seq &- 1
            for back in 0..<100 {
                let wanted = newest &- UInt16(back)
                XCTAssertEqual(cache.bytes(wanted, now: 300_000), cachedPacket(seq: wanted), "start \(start) back \(back)")
            }
            XCTAssertEqual(cache.presence(of: newest &- 100, now: 300_000), .missing, "start \(start)")
            XCTAssertEqual(cache.presence(of: newest &+ 1, now: 300_000), .missing, "start \(start)")
        }
    }

    func testEvictionByAge() {
        let cache = RetransmissionCache(config: RetransmissionCacheConfig(capacity: 100, maxAge: 1_000_000))
        cache.insert(cachedPacket(seq: 65535), now: 0)
        cache.insert(cachedPacket(seq: 0), now: 500_000)
        XCTAssertEqual(cache.presence(of: 65535, now: 1_000_000), .stored)
        XCTAssertEqual(cache.presence(of: 65535, now: 1_000_001), .expired)
        XCTAssertNil(cache.bytes(65535, now: 1_000_001))
        XCTAssertEqual(cache.bytes(0, now: 1_000_001), cachedPacket(seq: 0))
        XCTAssertEqual(cache.presence(of: 0, now: 1_500_001), .expired)
    }

    func testReorderedInsertsWithinTheRingAreKeptOlderOnesRefused() {
        let cache = RetransmissionCache(config: RetransmissionCacheConfig(capacity: 10, maxAge: 1_000_000))
        for seq: UInt16 in [65530, 65531, 65533, 2] { cache.insert(cachedPacket(seq: seq), now: 0) }
        XCTAssertTrue(cache.insert(cachedPacket(seq: 65535), now: 1), "late packet inside the window")
        XCTAssertEqual(cache.bytes(65535, now: 1), cachedPacket(seq: 65535))
        XCTAssertEqual(cache.bytes(2, now: 1), cachedPacket(seq: 2), "the newer packet was not disturbed")
        XCTAssertFalse(cache.insert(cachedPacket(seq: 65528), now: 1), "older than the ring")
        XCTAssertEqual(cache.refused, 1)
    }

    func testBadInputIsRefusedNotStored() {
        let cache = RetransmissionCache(config: .audio)
        XCTAssertFalse(cache.insert([0x80, 0x00, 0x00], now: 0))
        XCTAssertFalse(cache.insert(cachedPacket(seq: 1, payloadCount: 1500), now: 0), "over 1500 bytes")
        XCTAssertEqual(cache.refused, 2)
        XCTAssertEqual(cache.presence(of: 1, now: 0), .missing)
    }

    func testLargeJumpRestartsTheRing() {
        let cache = RetransmissionCache(config: RetransmissionCacheConfig(capacity: 100, maxAge: 1_000_000))
        for seq: UInt16 in 100..<150 { cache.insert(cachedPacket(seq: seq), now: 0) }
        // A jump back by 40000 (a re-published source): restart instead of refusing forever.
        XCTAssertTrue(cache.insert(cachedPacket(seq: 25636), now: 1))
        XCTAssertTrue(cache.insert(cachedPacket(seq: 25637), now: 2))
        XCTAssertEqual(cache.restarts, 1)
        XCTAssertEqual(cache.presence(of: 149, now: 2), .missing)
        XCTAssertEqual(cache.bytes(25636, now: 2), cachedPacket(seq: 25636))
        // A jump forward by 5000: restart too.
        XCTAssertTrue(cache.insert(cachedPacket(seq: 30637), now: 3))
        XCTAssertEqual(cache.restarts, 2)
        XCTAssertEqual(cache.presence(of: 25637, now: 3), .missing)
    }
}
