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
        var responder = NackResponder(rtx: RTXConfiguration(ssrc: 9, payloadTypes: [(apt: 120, rtx: 121)]), initialRTXSequenceNumber: 0)
        var out: [Retransmission] = []
        out.reserveCapacity(600)
        var output = [UInt8](repeating: 0, count: 1600)
        let resendCount = 600
        let resend = try output.withUnsafeMutableBytes { target in
            try clock.measure {
                let seqs = (0..<resendCount).map { UInt16(truncatingIfNeeded: iterations - 1 - $0) }
                responder.respond(to: seqs, cache: cache, now: now, rtt: nil, into: &out)
                for item in out { checksum &+= try NackResponder.write(item, from: cache, now: now, into: target) ?? 0 }
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
        print("NackResponder respond + RTX write: \(nanoseconds(resend, resendCount)) ns per packet")
        print("NackGenerator arrival (2% loss, tick every 20 packets): \(nanoseconds(arrivals, iterations)) ns; checksum \(checksum)")
        XCTAssertEqual(responder.stats.resent, UInt64(resendCount))
    }
}
