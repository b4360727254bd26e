import Foundation
import Glibc
import ICE
import XCTest
@testable import Media

final class UDPBatchTests: XCTestCase {
    /// 10,000 datagrams between two sockets on 127.0.0.1 through sendmmsg/recvmmsg batches;
    /// every one arrives intact, in order, from the sender's address.
    func testTenThousandDatagramsThroughBatches() throws {
        let a = try UDPSocket(host: "127.0.0.1", port: 0)
        let b = try UDPSocket(host: "127.0.0.1", port: 0)
        XCTAssertNotEqual(a.localAddress.port, 0)
        let send = UDPSendBatch()
        let receive = UDPReceiveBatch()
        let total = 10_000
        var nextToSend = 0
        var received: [Int] = []
        received.reserveCapacity(total)
        var payload = [UInt8](repeating: 0, count: 200)
        let deadline = Date().addingTimeInterval(30)
        while received.count < total && Date() < deadline {
            // Send one batch, then drain what arrived (keeps the kernel queue from overflowing).
            while nextToSend < total && !send.isFull {
                payload[0] = 0x80
                payload[1] = UInt8(truncatingIfNeeded: nextToSend)
                withUnsafeBytes(of: UInt32(nextToSend).bigEndian) { payload.replaceSubrange(4..<8, with: $0) }
                payload.withUnsafeBytes { XCTAssertEqual(send.enqueue($0, to: b.localAddress, on: a), .queued) }
                nextToSend += 1
            }
            let (sent, dropped) = send.flush(on: a)
            XCTAssertEqual(dropped, 0)
            _ = sent
            var fd = pollfd(fd: b.fileDescriptor, events: Int16(POLLIN), revents: 0)
            _ = poll(&fd, 1, 100)
            while case let count = receive.receive(from: b), count > 0 {
                for index in 0..<count {
                    let (bytes, source, truncated) = receive.datagram(at: index)
                    XCTAssertFalse(truncated)
                    XCTAssertEqual(source, a.localAddress)
                    XCTAssertEqual(bytes.count, 200)
                    received.append(Int(UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: 4, as: UInt32.self))))
                }
            }
        }
        XCTAssertEqual(received.count, total)
        XCTAssertEqual(received, Array(0..<total), "loopback UDP keeps order")
    }

    /// A datagram larger than the slot arrives truncated and flagged; a too-large enqueue is refused.
    func testOversizedDatagramIsFlagged() throws {
        let a = try UDPSocket(host: "127.0.0.1", port: 0)
        let b = try UDPSocket(host: "127.0.0.1", port: 0)
        let big = UDPSendBatch(capacity: 2, slotSize: 4000)
        [UInt8](repeating: 0x80, count: 3000).withUnsafeBytes { XCTAssertEqual(big.enqueue($0, to: b.localAddress, on: a), .queued) }
        [UInt8](repeating: 0x80, count: 100).withUnsafeBytes { XCTAssertEqual(big.enqueue($0, to: b.localAddress, on: a), .queued) }
        XCTAssertEqual(big.flush(on: a).sent, 2)
        let small = UDPSendBatch(capacity: 1, slotSize: 1500)
        [UInt8](repeating: 0, count: 1501).withUnsafeBytes { XCTAssertEqual(small.enqueue($0, to: b.localAddress, on: a), .oversized) }

        let receive = UDPReceiveBatch(capacity: 4, slotSize: 1500)
        var fd = pollfd(fd: b.fileDescriptor, events: Int16(POLLIN), revents: 0)
        var seen: [(Int, Bool)] = []
        let deadline = Date().addingTimeInterval(5)
        while seen.count < 2 && Date() < deadline {
            _ = poll(&fd, 1, 100)
            let count = receive.receive(from: b)
            for index in 0..<max(0, count) {
                let datagram = receive.datagram(at: index)
                seen.append((datagram.bytes.count, datagram.truncated))
            }
        }
        XCTAssertEqual(seen.map(\.0), [1500, 100])
        XCTAssertEqual(seen.map(\.1), [true, false])
    }

    func testDualStackSocketSeesIPv4PeersAsIPv4() throws {
        guard let server = try? UDPSocket(host: "::", port: 0) else { throw XCTSkip("no IPv6 on this host") }
        XCTAssertTrue(server.isIPv6)
        let client = try UDPSocket(host: "127.0.0.1", port: 0)
        let send = UDPSendBatch()
        [UInt8]([0x80, 0x60, 1, 2]).withUnsafeBytes {
            _ = send.enqueue($0, to: SocketAddress(ipv4: 0x7F00_0001, port: server.localAddress.port), on: client)
        }
        XCTAssertEqual(send.flush(on: client).sent, 1)
        let receive = UDPReceiveBatch()
        var fd = pollfd(fd: server.fileDescriptor, events: Int16(POLLIN), revents: 0)
        _ = poll(&fd, 1, 5_000)
        XCTAssertEqual(receive.receive(from: server), 1)
        XCTAssertEqual(receive.datagram(at: 0).source, client.localAddress, "::ffff:127.0.0.1 folded to IPv4")
        // And back: the dual-stack socket maps the IPv4 destination.
        [UInt8]([0x80, 0x60, 3, 4]).withUnsafeBytes { XCTAssertEqual(send.enqueue($0, to: client.localAddress, on: server), .queued) }
        XCTAssertEqual(send.flush(on: server).sent, 1)
    }

    func testBadHostIsATypedError() {
        XCTAssertThrowsError(try UDPSocket(host: "not-an-ip", port: 0)) {
            XCTAssertEqual($0 as? UDPSocketError, .invalidAddress("not-an-ip"))
        }
    }
}
