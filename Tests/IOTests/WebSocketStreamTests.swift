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
    /// A server and a raw client past its 101 answer.
    private func upgradedClient() throws -> RawClient {
        try startServer()
        let socket = try RawClient(port: server.boundPort)
        try socket.write(RawClient.upgradeRequest())
        _ = try socket.readUntil("\r\n\r\n")
        return socket
    }

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
        let socket = try upgradedClient()
        defer { socket.close() }
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
        let socket = try upgradedClient()
        defer { socket.close() }
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
        let socket = try upgradedClient()
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

/// The stream on its own, over one end of a socket pair, through GIO's blocking and
/// non-blocking calls (the ones libsoup's WebSocket does not use must work too).
final class WebSocketStreamUnitTests: XCTestCase {
    private var fds: [Int32] = [-1, -1]
    private var stream: UnsafeMutablePointer<GIOStream>!

    override func setUpWithError() throws {
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds), 0)
        let socket = try XCTUnwrap(g_socket_new_from_fd(fds[0], nil))
        let stolen = try XCTUnwrap(g_socket_connection_factory_create_connection(socket))
        stream = sb_ws_stream_new(UnsafeMutableRawPointer(stolen).assumingMemoryBound(to: GIOStream.self), fds[0])
        g_object_unref(UnsafeMutableRawPointer(stolen))
        g_object_unref(UnsafeMutableRawPointer(socket))
    }

    override func tearDown() {
        if let stream { g_object_unref(UnsafeMutableRawPointer(stream)) }
        if fds[1] >= 0 { close(fds[1]) }
    }

    private var input: UnsafeMutablePointer<GInputStream> { g_io_stream_get_input_stream(stream) }
    private var output: UnsafeMutablePointer<GOutputStream> { g_io_stream_get_output_stream(stream) }

    func testBlockingReadWaitsForBytesAndNonBlockingReadWouldBlock() throws {
        var buffer = [UInt8](repeating: 0, count: 64)
        var error: UnsafeMutablePointer<GError>?
        let n = buffer.withUnsafeMutableBytes {
            g_pollable_input_stream_read_nonblocking(OpaquePointer(input), $0.baseAddress, 64, nil, &error)
        }
        XCTAssertEqual(n, -1)
        XCTAssertEqual(error?.pointee.code, gint(G_IO_ERROR_WOULD_BLOCK.rawValue))
        g_clear_error(&error)
        let peer = fds[1]
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.05) { _ = send(peer, "late", 4, 0) }
        let read = buffer.withUnsafeMutableBytes { g_input_stream_read(input, $0.baseAddress, 64, nil, &error) }
        XCTAssertNil(error)
        XCTAssertEqual(read, 4)
        XCTAssertEqual(Array(buffer[0 ..< 4]), Array("late".utf8))
    }

    func testReadableAndWritableAnswerWithoutWaiting() throws {
        XCTAssertEqual(g_pollable_input_stream_is_readable(OpaquePointer(input)), 0)
        XCTAssertNotEqual(g_pollable_output_stream_is_writable(OpaquePointer(output)), 0)
        XCTAssertEqual(send(fds[1], "x", 1, 0), 1)
        XCTAssertNotEqual(g_pollable_input_stream_is_readable(OpaquePointer(input)), 0)
    }

    func testBlockingWriteReachesThePeerAndCloseEndsTheSocket() throws {
        var error: UnsafeMutablePointer<GError>?
        var written: gsize = 0
        XCTAssertNotEqual(g_output_stream_write_all(output, "hello", 5, &written, nil, &error), 0)
        XCTAssertNil(error)
        XCTAssertEqual(written, 5)
        var buffer = [UInt8](repeating: 0, count: 16)
        XCTAssertEqual(buffer.withUnsafeMutableBytes { recv(fds[1], $0.baseAddress, 16, 0) }, 5)
        XCTAssertEqual(sb_ws_stream_fd(stream), fds[0])
        XCTAssertNotEqual(g_io_stream_close(stream, nil, &error), 0)
        XCTAssertNil(error)
        XCTAssertEqual(sb_ws_stream_fd(stream), -1)
        // The socket under the stolen stream is closed: the peer reads end of file.
        XCTAssertEqual(buffer.withUnsafeMutableBytes { recv(fds[1], $0.baseAddress, 16, 0) }, 0)
        let n = buffer.withUnsafeMutableBytes {
            g_pollable_input_stream_read_nonblocking(OpaquePointer(input), $0.baseAddress, 16, nil, &error)
        }
        XCTAssertEqual(n, -1)
        XCTAssertEqual(error?.pointee.code, gint(G_IO_ERROR_CLOSED.rawValue))
        g_clear_error(&error)
    }

    func testWantedEventsFollowLiveSourcesAndReadyWakesTheirCheck() throws {
        XCTAssertEqual(sb_ws_stream_wanted_events(stream), 0)
        let source = try XCTUnwrap(g_pollable_input_stream_create_source(OpaquePointer(input), nil))
        XCTAssertEqual(sb_ws_stream_wanted_events(stream), UInt32(SB_WS_STREAM_IN))
        let context = g_main_context_new()
        XCTAssertNotEqual(g_main_context_acquire(context), 0)
        defer {
            g_main_context_release(context)
            g_main_context_unref(context)
        }
        g_source_attach(source, context)
        // Nothing reported: the source is not ready, and it adds no poll record of its own.
        XCTAssertEqual(g_main_context_iteration(context, 0), 0)
        sb_ws_stream_set_ready(stream, UInt32(SB_WS_STREAM_IN))
        var priority: gint = 0
        _ = g_main_context_prepare(context, &priority)
        XCTAssertEqual(g_main_context_check(context, priority, nil, 0), 1)
        g_main_context_dispatch(context)  // no callback: the source removes itself
        sb_ws_stream_set_ready(stream, 0)
        XCTAssertNotEqual(g_source_is_destroyed(source), 0)
        g_source_unref(source)
        XCTAssertEqual(sb_ws_stream_wanted_events(stream), 0)
    }
}
