import XCTest
import Foundation
#if canImport(Glibc)
import Glibc
#endif
@testable import SRTP

/// Prints µs per protect/unprotect of 1200-byte RTP packets, as thread CPU time (robust on a
/// shared machine) and wall time. Skipped unless SWITCHBOARD_BENCH=1; asserts nothing about time.
/// SWITCHBOARD_SRTP_NSS=1 measures libsrtp2's built-in (NSS) crypto instead of the OpenSSL types:
/// `SWITCHBOARD_BENCH=1 [SWITCHBOARD_SRTP_NSS=1] swift test --filter SRTPBenchmarkTests`.
final class SRTPBenchmarkTests: XCTestCase {
    private static func threadCPUNanos() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    func testBenchmarkProtectUnprotect1200Bytes() throws {
        guard ProcessInfo.processInfo.environment["SWITCHBOARD_BENCH"] == "1" else {
            throw XCTSkip("set SWITCHBOARD_BENCH=1 to run")
        }
        let batch = 1000, rounds = 100, plain = 1200
        for profile in SRTPProfile.allCases {
            let (a, b) = try SRTPSessionTests.pair(profile)
            let stride = 1500
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: stride * batch, alignment: 16)
            defer { buffer.deallocate() }
            var lengths = [Int](repeating: 0, count: batch)
            var protectCPU: UInt64 = 0, unprotectCPU: UInt64 = 0, protectWall: UInt64 = 0, unprotectWall: UInt64 = 0
            var sequence: UInt16 = 0
            for _ in 0..<rounds {
                for i in 0..<batch {
                    let packet = UnsafeMutableRawBufferPointer(rebasing: buffer[i * stride..<(i + 1) * stride])
                    packet.storeBytes(of: 0x80, toByteOffset: 0, as: UInt8.self)
                    packet.storeBytes(of: 111, toByteOffset: 1, as: UInt8.self)
                    packet.storeBytes(of: sequence.bigEndian, toByteOffset: 2, as: UInt16.self)
                    packet.storeBytes(of: UInt32(0x0102_0304).bigEndian, toByteOffset: 8, as: UInt32.self)
                    sequence &+= 1
                }
                var c0 = Self.threadCPUNanos(), w0 = DispatchTime.now().uptimeNanoseconds
                for i in 0..<batch {
                    lengths[i] = try a.protectRTP(UnsafeMutableRawBufferPointer(rebasing: buffer[i * stride..<(i + 1) * stride]), length: plain)
                }
                protectCPU += Self.threadCPUNanos() - c0
                protectWall += DispatchTime.now().uptimeNanoseconds - w0
                c0 = Self.threadCPUNanos(); w0 = DispatchTime.now().uptimeNanoseconds
                for i in 0..<batch {
                    lengths[i] = try b.unprotectRTP(UnsafeMutableRawBufferPointer(rebasing: buffer[i * stride..<(i + 1) * stride]), length: lengths[i])
                }
                unprotectCPU += Self.threadCPUNanos() - c0
                unprotectWall += DispatchTime.now().uptimeNanoseconds - w0
                XCTAssertEqual(lengths[batch - 1], plain)
            }
            let n = Double(batch * rounds)
            print(String(format: "SRTP bench %@: protect %.2f µs CPU (%.2f wall), unprotect %.2f µs CPU (%.2f wall) per 1200-byte RTP packet, %d packets, %@ on %@",
                         profile.rawValue, Double(protectCPU) / n / 1000, Double(protectWall) / n / 1000,
                         Double(unprotectCPU) / n / 1000, Double(unprotectWall) / n / 1000, batch * rounds, SRTPLibrary.version,
                         SRTPLibrary.usesOpenSSLCrypto ? "OpenSSL types" : "built-in (NSS) types"))
        }
    }
}
