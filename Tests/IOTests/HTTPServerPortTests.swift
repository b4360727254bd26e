import Foundation
import Glibc
import IO
import XCTest

/// A sharded server's listeners bind with SO_REUSEPORT, which on its own lets them join
/// another process's listeners on the port (same user) and split its connections. The
/// port must be refused instead, as it is with one shard.
final class HTTPServerPortTests: XCTestCase {
    var loop: EventLoop!

    override func setUp() {
        loop = EventLoop(name: "port-test")
        loop.start()
    }

    override func tearDown() {
        loop.stop()
        loop = nil
    }

    /// A TCP listener on 127.0.0.1 with SO_REUSEADDR and SO_REUSEPORT, as the shards of
    /// another server have; returns (fd, port).
    func reusePortListener() throws -> (Int32, UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        XCTAssertGreaterThanOrEqual(fd, 0)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        XCTAssertTrue(bound)
        XCTAssertEqual(listen(fd, 16), 0)
        return (fd, UInt16(bigEndian: address.sin_port))
    }

    func testAPortWhereAnotherProcessListensWithReusePortIsRefused() throws {
        let (fd, port) = try reusePortListener()
        for shards in [1, 2] {
            XCTAssertThrowsError(try HTTPServer(loop: loop, host: "127.0.0.1", port: port, shards: shards), "\(shards) shard(s)") {
                guard case .bindFailed(let message)? = $0 as? IOError else { return XCTFail("\($0)") }
                XCTAssertTrue(message.contains("Address already in use"), message)
            }
        }
        close(fd)
        let server = try HTTPServer(loop: loop, host: "127.0.0.1", port: port, shards: 2)
        XCTAssertEqual(server.boundPort, port, "free again: every shard binds it")
        server.stop()
    }
}
