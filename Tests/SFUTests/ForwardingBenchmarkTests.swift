#if canImport(Glibc)
import Glibc
#endif
import RTP
import XCTest
@testable import SFU

/// Prints the cost of `handleRTP` for 1 publisher → 10 subscribers. Figures only, no timing
/// assertions. Skipped unless SWITCHBOARD_BENCH=1; run in release:
/// `SWITCHBOARD_BENCH=1 swift test -c release --filter SFUTests.ForwardingBenchmarkTests`
final class ForwardingBenchmarkTests: XCTestCase {
    func testPrintHandleRTPCostOnePublisherTenSubscribers() throws {
        guard let flag = getenv("SWITCHBOARD_BENCH"), String(cString: flag) == "1" else {
            throw XCTSkip("set SWITCHBOARD_BENCH=1 (and use -c release) to run")
        }
        let router = makeRouter()
        try router.join(alice, room: room, description: receiver("a"), now: 0)
        for index in 0..<10 { try router.join(ParticipantID(100 + UInt32(index)), room: room, description: receiver("s"), now: 0) }
        try router.publish(alice, track: audioTrack("mic", ssrc: 1), now: 0)
        var packet = rtpPacket(ssrc: 1, seq: 0, ts: 0, pt: 111, extensions: [
            RTPHeaderExtension(id: 1, value: [0x85]), RTPHeaderExtension(id: 2, value: [1, 2, 3]), RTPHeaderExtension(id: 3, value: [0, 1]),
        ], payload: Array(repeating: 0x5A, count: 80))
        var batch = ForwardingBatch(capacity: 16)
        var output = [UInt8](repeating: 0, count: 1500)
        let iterations = 200_000
        let clock = ContinuousClock()
        var checksum = 0
        let decide = packet.withUnsafeMutableBytes { buffer in
            clock.measure {
                for index in 0..<iterations {
                    buffer.storeBytes(of: UInt16(truncatingIfNeeded: index).bigEndian, toByteOffset: 2, as: UInt16.self)
                    _ = router.handleRTP(from: alice, packet: UnsafeRawBufferPointer(buffer), now: Int64(index) * 20_000, into: &batch)
                    checksum &+= batch.count
                }
            }
        }
        let full = try packet.withUnsafeMutableBytes { buffer in
            try output.withUnsafeMutableBytes { out in
                try clock.measure {
                    for index in iterations..<(2 * iterations) {
                        buffer.storeBytes(of: UInt16(truncatingIfNeeded: index).bigEndian, toByteOffset: 2, as: UInt16.self)
                        _ = router.handleRTP(from: alice, packet: UnsafeRawBufferPointer(buffer), now: Int64(index) * 20_000, into: &batch)
                        for forward in 0..<batch.count { checksum &+= try batch.write(forward, into: out, transportSequenceNumber: UInt16(truncatingIfNeeded: index)) }
                    }
                }
            }
        }
        func nanos(_ duration: Duration) -> Double {
            Double(duration.components.seconds) * 1e9 + Double(duration.components.attoseconds) / 1e9
        }
        let perDecide = nanos(decide) / Double(iterations)
        let perFull = nanos(full) / Double(iterations)
        // Same without any header extension in or out: the cost of the extension rewrite.
        var plain = rtpPacket(ssrc: 1, seq: 0, ts: 0, pt: 111, payload: Array(repeating: 0x5A, count: 80))
        let bare = try plain.withUnsafeMutableBytes { buffer in
            try output.withUnsafeMutableBytes { out in
                try clock.measure {
                    for index in (2 * iterations)..<(3 * iterations) {
                        buffer.storeBytes(of: UInt16(truncatingIfNeeded: index).bigEndian, toByteOffset: 2, as: UInt16.self)
                        _ = router.handleRTP(from: alice, packet: UnsafeRawBufferPointer(buffer), now: Int64(index) * 20_000, into: &batch)
                        for forward in 0..<batch.count { checksum &+= try batch.write(forward, into: out) }
                    }
                }
            }
        }
        print(String(format: "SFU handleRTP 1→10 + 10 writes, no extensions: %.0f ns per packet", nanos(bare) / Double(iterations)))
        print(String(format: "SFU handleRTP 1→10: %.0f ns per packet (%.1f ns per forward); with 10 writes: %.0f ns per packet (%.1f ns per forwarded packet); checksum %d",
                     perDecide, perDecide / 10, perFull, perFull / 10, checksum))
        XCTAssertEqual(batch.count, 10)
    }
}
