import CWebSocketStream
import Foundation
@testable import IO
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The server's WebSocket connections read and write through `CWebSocketStream` (a GIOStream
/// whose sources the cell polls through its epoll), not libsoup's socket stream. These tests
/// drive it from raw sockets, so every byte boundary is the test's choice.
final class WebSocketStreamTests: EchoServerCase {
    /// A client that sends its first frame in the same write as its upgrade request: the
    /// frame's bytes are read by libsoup's HTTP parser along with the request, and must be
    /// handed to the WebSocket, not lost with the stolen stream.
    func testFrameSentWithTheUpgradeRequestIsDelivered() throws {
        try startServer()
        let socket = try RawClient(port: server.boundPort)
        defer { socket.close() }
        try socket.write(RawClient.upgradeRequest() + RawClient.maskedText("first"))
        let response = try socket.readUntil("\r\n\r\n")
        XCTAssertTrue(response.hasPrefix("HTTP/1.1 101"), response)
        XCTAssertEqual(try socket.readTextFrame(), "first")
        try socket.write(RawClient.maskedText("second"))
        XCTAssertEqual(try socket.readTextFrame(), "second")
    }

    /// A message far larger than one read (16 KiB) arrives whole, and many small frames sent
    /// in one write all arrive, in order.
    func testLargeMessageAndBurstOfFramesArriveWholeAndInOrder() throws {
        try startServer()
        let socket = try RawClient(port: server.boundPort)
        defer { socket.close() }
        try socket.write(RawClient.upgradeRequest())
        _ = try socket.readUntil("\r\n\r\n")
        let large = (0 ..< 300_000).map { String(UnicodeScalar(UInt8(97 + $0 % 26))) }.joined()
        try socket.write(RawClient.maskedText(large))
        XCTAssertEqual(try socket.readTextFrame(), large)
        var burst: [UInt8] = []
        for i in 0 ..< 200 { burst += RawClient.maskedText("frame \(i)") }
        try socket.write(burst)
        for i in 0 ..< 200 { XCTAssertEqual(try socket.readTextFrame(), "frame \(i)") }
    }

    /// A read that returned less than asked leaves the socket known to be empty: libsoup's
    /// next read is answered "would block" without a recv. The frames still all arrive.
    func testShortReadSavesTheFailingReceive() throws {
        try startServer()
        let socket = try RawClient(port: server.boundPort)
        defer { socket.close() }
        try socket.write(RawClient.upgradeRequest())
        _ = try socket.readUntil("\r\n\r\n")
        func counters() -> (receives: guint64, skipped: guint64) {
            var receives: guint64 = 0, skipped: guint64 = 0
            sb_ws_stream_counters(&receives, &skipped)
            return (receives, skipped)
        }
        // The upgrade is complete (a frame sent before would be read with the request).
        XCTAssertTrue(eventually { self.server.openWebSocketCount == 1 })
        let before = counters()
        for i in 0 ..< 20 {
            try socket.write(RawClient.maskedText("ping \(i)"))
            XCTAssertEqual(try socket.readTextFrame(), "ping \(i)")
        }
        // The echo leaves before libsoup's read loop asks again: wait for the last round.
        XCTAssertTrue(eventually { counters().skipped - before.skipped == 20 }, "\(counters()) against \(before)")
        // One recv per frame; libsoup's own stream made two (the frame, then EAGAIN).
        XCTAssertEqual(counters().receives - before.receives, 20)
    }

    /// A peer that drops the TCP connection without a close frame: the server reports 1006
    /// and the connection's context goes away.
    func testDroppedSocketClosesWith1006() throws {
        try startServer()
        let socket = try RawClient(port: server.boundPort)
        try socket.write(RawClient.upgradeRequest())
        _ = try socket.readUntil("\r\n\r\n")
        XCTAssertTrue(eventually { self.server.openWebSocketCount == 1 })
        socket.close()
        XCTAssertTrue(eventually { self.serverLoop.sync { self.delegate.closes.first?.0 } == 1006 })
        XCTAssertTrue(eventually { self.server.openWebSocketCount == 0 })
        // The cell retired, and with it its reference on the stream.
        XCTAssertTrue(eventually { self.serverLoop.webSocketDispatchStats.contexts == 0 })
    }
}

/// A blocking TCP client speaking RFC 6455 by hand (test side only).
private final class RawClient {
    private var fd: Int32
    private var buffer: [UInt8] = []

    init(port: UInt16) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(port.bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let ok = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard ok == 0 else { throw POSIXError(.ECONNREFUSED) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    static func upgradeRequest() -> [UInt8] {
        Array(("GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").utf8)
    }

    /// A masked client text frame (RFC 6455 §5.2, §5.3).
    static func maskedText(_ text: String) -> [UInt8] {
        let payload = Array(text.utf8)
        var frame: [UInt8] = [0x81]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else if payload.count <= 0xFFFF {
            frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            frame.append(0x80 | 127)
            for shift in stride(from: 56, through: 0, by: -8) { frame.append(UInt8((payload.count >> shift) & 0xFF)) }
        }
        let mask: [UInt8] = [0x12, 0x34, 0x56, 0x78]
        frame += mask
        for (i, byte) in payload.enumerated() { frame.append(byte ^ mask[i % 4]) }
        return frame
    }

    func write(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw POSIXError(.EPIPE) }
            sent += n
        }
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { throw POSIXError(.ETIMEDOUT) }
        buffer += chunk[0 ..< n]
    }

    private func take(_ count: Int) throws -> [UInt8] {
        while buffer.count < count { try fill() }
        let bytes = Array(buffer[0 ..< count])
        buffer.removeFirst(count)
        return bytes
    }

    func readUntil(_ marker: String) throws -> String {
        let end = Array(marker.utf8)
        while true {
            if let range = buffer.firstRange(of: end) {
                let head = String(decoding: buffer[..<range.upperBound], as: UTF8.self)
                buffer.removeFirst(range.upperBound)
                return head
            }
            try fill()
        }
    }

    /// The next server frame, which must be an unmasked, unfragmented text frame.
    func readTextFrame() throws -> String {
        let head = try take(2)
        guard head[0] == 0x81, head[1] & 0x80 == 0 else { throw POSIXError(.EPROTO) }
        var length = Int(head[1] & 0x7F)
        if length == 126 {
            let ext = try take(2)
            length = Int(ext[0]) << 8 | Int(ext[1])
        } else if length == 127 {
            length = try take(8).reduce(0) { $0 << 8 | Int($1) }
        }
        return String(decoding: try take(length), as: UTF8.self)
    }
}
