import XCTest
import Foundation
#if canImport(Glibc)
import Glibc
#endif
@testable import DTLS

/// Handshake CPU cost and heap held per connected server endpoint. Skipped unless
/// SWITCHBOARD_BENCH=1; prints figures, asserts only correctness.
final class DTLSBenchmarkTests: XCTestCase {
    private static func threadCPUNanos() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    /// Resident set size in bytes from /proc/self/statm (second field, pages).
    private static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    func testBenchmarkHandshakeAndMemoryPerEndpoint() throws {
        guard ProcessInfo.processInfo.environment["SWITCHBOARD_BENCH"] == "1" else {
            throw XCTSkip("set SWITCHBOARD_BENCH=1 to run")
        }
        let context = try DTLSContext(certificate: TestCertificates.server)
        let clientContext = try DTLSContext(certificate: TestCertificates.client)
        let count = 1000
        var servers: [DTLSEndpoint] = []
        servers.reserveCapacity(count)
        let heapBefore = Self.residentBytes()
        let cpu0 = Self.threadCPUNanos()
        for _ in 0..<count {
            let server = try DTLSEndpoint(role: .server, context: context,
                                          expectedRemoteFingerprint: TestCertificates.client.sha256Fingerprint)
            let client = try DTLSEndpoint(role: .client, context: clientContext,
                                          expectedRemoteFingerprint: TestCertificates.server.sha256Fingerprint)
            let h = DTLSTestHarness(client: client, server: server)
            h.start()
            XCTAssertNotNil(h.serverMaterial)
            servers.append(server)
        }
        let cpu = Double(Self.threadCPUNanos() - cpu0) / Double(count) / 1000
        let heapAfter = Self.residentBytes()
        let perServer = (Double(heapAfter) - Double(heapBefore)) / Double(count) / 1024
        print(String(format: "DTLS bench: %.0f µs CPU per full handshake (both sides, ECDSA P-256, in memory); %.1f KB RSS growth per connected server endpoint (%d endpoints, shared DTLSContext)",
                     cpu, perServer, count))
        XCTAssertEqual(servers.filter { $0.state == .connected }.count, count)
    }
}
