import Foundation
import Glibc
import XCTest
@testable import Media

/// The pool's one UDP port is its own: its workers bind with SO_REUSEPORT, which on its own
/// lets them join another process's group on that port (same user) and split its
/// datagrams, and which makes Linux's UDP autobind (port 0) willing to pick a port such a
/// group holds. Seen in a full test run: two servers started with media port 0 both got
/// 45423, and each lost the other's media.
final class SFUWorkerPoolPortTests: XCTestCase {
    func testAConfiguredPortThatAnotherReusePortGroupHoldsIsRefused() throws {
        let holder = try UDPSocket(host: "127.0.0.1", port: 0, reusePort: true)
        let port = holder.localAddress.port
        XCTAssertThrowsError(try SFUWorkerPool(configuration: MediaConfiguration(host: "127.0.0.1", port: port), workers: 2)) {
            XCTAssertEqual($0 as? UDPSocketError, .bindFailed(errno: EADDRINUSE))
            XCTAssertEqual("\($0)", "udp_bind_failed: Address already in use")
        }
        XCTAssertThrowsError(try SFUWorkerPool(configuration: MediaConfiguration(host: "127.0.0.1", port: port), workers: 1)) {
            XCTAssertEqual($0 as? UDPSocketError, .bindFailed(errno: EADDRINUSE), "one worker binds without SO_REUSEPORT")
        }
    }

    func testAFreeConfiguredPortIsBoundByEveryWorker() throws {
        let port = try UDPSocket.exclusivePort(host: "127.0.0.1", port: 0)
        let pool = try SFUWorkerPool(configuration: MediaConfiguration(host: "127.0.0.1", port: port), workers: 2)
        XCTAssertEqual(pool.workers.map(\.port), [port, port])
    }

    /// Another socket takes the claimed ephemeral port before the first worker binds it: the
    /// pool claims another instead of failing. A configured port is not claimed twice.
    func testAPortTakenBetweenTheClaimAndTheBindIsClaimedAgainOnlyWhenEphemeral() throws {
        var claims: [UInt16] = []
        var thieves: [UDPSocket] = []
        let pool = try SFUWorkerPool(configuration: MediaConfiguration(host: "127.0.0.1", port: 0), workers: 2) { port in
            claims.append(port)
            if thieves.isEmpty, let thief = try? UDPSocket(host: "127.0.0.1", port: port) { thieves.append(thief) }
        }
        XCTAssertEqual(claims.count, 2)
        XCTAssertEqual(thieves.map(\.localAddress.port), [claims[0]])
        XCTAssertNotEqual(claims.last, claims.first)
        XCTAssertEqual(pool.workers.map(\.port), [claims[1], claims[1]])

        let configured = try UDPSocket.exclusivePort(host: "127.0.0.1", port: 0)
        claims = []
        thieves = []
        XCTAssertThrowsError(try SFUWorkerPool(configuration: MediaConfiguration(host: "127.0.0.1", port: configured), workers: 2) { port in
            claims.append(port)
            if let thief = try? UDPSocket(host: "127.0.0.1", port: port) { thieves.append(thief) }
        }) {
            XCTAssertEqual($0 as? UDPSocketError, .bindFailed(errno: EADDRINUSE))
        }
        XCTAssertEqual(claims, [configured])
    }

    /// In a network namespace of its own whose ephemeral range is ONE port: once a
    /// SO_REUSEPORT group holds it, autobind with SO_REUSEPORT would hand the same port out
    /// again (checked below with a bare socket); the pool must fail instead, and get the port
    /// once it is free.
    func testAnEphemeralPortIsNeverOneThatAnotherGroupHolds() throws {
        try inPrivateNetworkNamespace(ephemeralPort: 40_000) {
            let holder = try UDPSocket(host: "127.0.0.1", port: 0, reusePort: true)
            XCTAssertEqual(holder.localAddress.port, 40_000)
            let joiner = try UDPSocket(host: "127.0.0.1", port: 0, reusePort: true)
            XCTAssertEqual(joiner.localAddress.port, 40_000, "the kernel behaviour the pool guards against")
            XCTAssertThrowsError(try SFUWorkerPool(configuration: MediaConfiguration(host: "127.0.0.1", port: 0), workers: 2)) {
                XCTAssertEqual($0 as? UDPSocketError, .bindFailed(errno: EADDRINUSE))
            }
            withExtendedLifetime((holder, joiner)) {}
        }
        try inPrivateNetworkNamespace(ephemeralPort: 40_000) {
            let pool = try SFUWorkerPool(configuration: MediaConfiguration(host: "127.0.0.1", port: 0), workers: 2)
            XCTAssertEqual(pool.workers.map(\.port), [40_000, 40_000])
        }
    }

    /// Runs `body` on a thread of its own in a new network namespace (unshare(2)
    /// CLONE_NEWNET moves only the calling thread), whose ephemeral port range
    /// (/proc/sys/net resolves to the thread's namespace) is `ephemeralPort` alone.
    /// Needs CAP_SYS_ADMIN (tests run as root).
    func inPrivateNetworkNamespace(ephemeralPort: UInt16, _ body: @escaping @Sendable () throws -> Void) throws {
        typealias Unshare = @convention(c) (Int32) -> Int32
        let symbol = try XCTUnwrap(dlsym(nil, "unshare"), "unshare(2) in libc")
        let unshare = unsafeBitCast(symbol, to: Unshare.self)
        let cloneNewNet: Int32 = 0x4000_0000   // CLONE_NEWNET (sched.h, _GNU_SOURCE only)
        nonisolated(unsafe) var outcome: Result<Void, Error> = .success(())
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            defer { done.signal() }
            outcome = Result {
                guard unshare(cloneNewNet) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EPERM) }
                try "\(ephemeralPort) \(ephemeralPort)".write(toFile: "/proc/sys/net/ipv4/ip_local_port_range", atomically: false, encoding: .utf8)
                try body()
            }
        }
        thread.start()
        XCTAssertEqual(done.wait(timeout: .now() + 30), .success)
        try outcome.get()
    }
}
