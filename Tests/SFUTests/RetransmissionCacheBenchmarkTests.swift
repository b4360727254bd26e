#if canImport(Glibc)
import Glibc
#endif
import RTP
import XCTest
@testable import SFU

/// Prints ns per cache insert / lookup, per NACK generator arrival and per RTX write. Figures
/// only, no timing assertions. Skipped unless SWITCHBOARD_BENCH=1; run in release:
/// `SWITCHBOARD_BENCH=1 swift test -c release --filter SFUTests.RetransmissionCacheBenchmarkTests`
final class RetransmissionCacheBenchmarkTests: XCTestCase {
    func nanoseconds(_ duration: Duration, _ count: Int) -> Double {
        let (seconds, attoseconds) = duration.components
        return (Double(seconds) * 1e9 + Double(attoseconds) / 1e9) / Double(count)
    }

    func testPrintCacheAndNACKCosts() throws {
        guard let flag = getenv("SWITCHBOARD_BENCH"), String(cString: flag) == "1" else {
            throw XCTSkip("set SWITCHBOARD_BENCH=1 (and use -c release) to run")
        }
        let cache = RetransmissionCache(config: .video)
        var packet = cachedPacket(seq: 0, payloadCount: 1100)
        let iterations = 1_000_000
        let clock = ContinuousClock()
        let insert = packet.withUnsafeMutableBytes { buffer in
            clock.measure {
                for index in 0..<iterations {
                    buffer.storeBytes(of: UInt16(truncatingIfNeeded: index).bigEndian, toByteOffset: 2, as: UInt16.self)
                    cache.insert(UnsafeRawBufferPointer(buffer), now: Int64(index) * 1_000)
                }
            }
        }
        var checksum = 0
        let now = Int64(iterations) * 1_000
        let lookup = clock.measure {
            for index in 0..<iterations {
                let seq = UInt16(truncatingIfNeeded: iterations - 1 - index % 600)
                checksum &+= (try? cache.withPacket(seq, now: now) { Int($0[3]) }) ?? 0
            }
        }
        // Resends through the real lookup: the publisher store + one subscription's log.
        let fixture = RepairFixture()
        let resendCount = 300  // 300 × 1,112 B fit the 384 KB video ring (500 would not: evicted by bytes)
        for index in 0..<resendCount {
            fixture.send(cachedPacket(seq: UInt16(index), payloadCount: 1100), outgoing: UInt16(index), now: now)
        }
        var responder = NackResponder(rtx: RTXConfiguration(ssrc: 9, payloadTypes: [(apt: 120, rtx: 121)]), initialRTXSequenceNumber: 0)
        var out: [Retransmission] = []
        out.reserveCapacity(resendCount)
        var output = [UInt8](repeating: 0, count: 1600)
        var scratch = [UInt8](repeating: 0, count: 2048)
        let rewrite = fixture.rewrite
        let seqs = (0..<resendCount).map { UInt16($0) }
        let resend = try output.withUnsafeMutableBytes { target in
            try scratch.withUnsafeMutableBytes { scratch in
                try clock.measure {
                    responder.respond(to: seqs, lookup: fixture.lookup, now: now, rtt: nil, into: &out)
                    for item in out {
                        checksum &+= try fixture.lookup.write(item, subscriber: bob, ssrc: 1, extensions: { _ in rewrite }, now: now,
                                                              transportSequenceNumber: 5, scratch: scratch, into: target) ?? 0
                    }
                }
            }
        }
        var generator = NackGenerator(config: .video)
        let arrivals = clock.measure {
            for index in 0..<iterations where index % 50 != 7 {  // 2% loss
                generator.received(UInt16(truncatingIfNeeded: index), now: Int64(index) * 1_000)
                if index % 20 == 0 {
                    var nacked: [UInt16] = []
                    generator.tick(now: Int64(index) * 1_000, rtt: 50_000, jitter: 5_000, into: &nacked)
                    checksum &+= nacked.count
                }
            }
        }
        print("RetransmissionCache insert (1100 B): \(nanoseconds(insert, iterations)) ns; lookup: \(nanoseconds(lookup, iterations)) ns")
        print("NackResponder respond + rewrite + RTX write: \(nanoseconds(resend, resendCount)) ns per packet")
        print("NackGenerator arrival (2% loss, tick every 20 packets): \(nanoseconds(arrivals, iterations)) ns; checksum \(checksum)")
        XCTAssertEqual(responder.stats.resent, UInt64(resendCount))
    }
}
