import XCTest
import Foundation
@testable import SRTP

/// Prints µs per protect/unprotect of 1200-byte RTP packets. Skipped unless SWITCHBOARD_BENCH=1;
/// prints figures, asserts nothing about time.
final class SRTPBenchmarkTests: XCTestCase {
    func testBenchmarkProtectUnprotect1200Bytes() throws {
        guard ProcessInfo.processInfo.environment["SWITCHBOARD_BENCH"] == "1" else {
            throw XCTSkip("set SWITCHBOARD_BENCH=1 to run")
        }
        let iterations = 200_000
        for profile in SRTPProfile.allCases {
            let (a, b) = try SRTPSessionTests.pair(profile)
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1500, alignment: 16)
            defer { buffer.deallocate() }
            var protectNanos: UInt64 = 0, unprotectNanos: UInt64 = 0
            for i in 0..<iterations {
                let plain = 1200
                buffer.storeBytes(of: 0x80, toByteOffset: 0, as: UInt8.self)
                buffer.storeBytes(of: 111, toByteOffset: 1, as: UInt8.self)
                buffer.storeBytes(of: UInt16(truncatingIfNeeded: i).bigEndian, toByteOffset: 2, as: UInt16.self)
                buffer.storeBytes(of: UInt32(0x0102_0304).bigEndian, toByteOffset: 8, as: UInt32.self)
                let t0 = DispatchTime.now().uptimeNanoseconds
                let n = try a.protectRTP(buffer, length: plain)
                let t1 = DispatchTime.now().uptimeNanoseconds
                let m = try b.unprotectRTP(buffer, length: n)
                let t2 = DispatchTime.now().uptimeNanoseconds
                XCTAssertEqual(m, plain)
                protectNanos += t1 - t0
                unprotectNanos += t2 - t1
            }
            let p = Double(protectNanos) / Double(iterations) / 1000
            let u = Double(unprotectNanos) / Double(iterations) / 1000
            print(String(format: "SRTP bench %@: protect %.2f µs, unprotect %.2f µs per 1200-byte RTP packet (%d packets, %@)",
                         profile.rawValue, p, u, iterations, SRTPLibrary.version))
        }
    }
}
