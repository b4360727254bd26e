@testable import Bench
import XCTest

/// The lean pair client's opening handshake (RFC 6455 §4.1) and URL parsing.
final class LeanHandshakeTests: XCTestCase {
    /// RFC 6455 §1.3: key "dGhlIHNhbXBsZSBub25jZQ==" is answered "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=".
    func testAcceptIsTheRFCExample() {
        XCTAssertEqual(LeanHandshake.accept(key: "dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    /// §4.1 item 7: 16 bytes, base64 (the §4.1 example nonce "the sample nonce").
    func testKeyIsBase64OfSixteenBytes() {
        XCTAssertEqual(LeanHandshake.key(Array("the sample nonce".utf8)), "dGhlIHNhbXBsZSBub25jZQ==")
    }

    func testRequestHasTheRequiredFields() throws {
        let target = try LeanHandshake.Target.parse("ws://127.0.0.1:18555/v1/ws")
        let text = String(decoding: LeanHandshake.request(target, key: "dGhlIHNhbXBsZSBub25jZQ=="), as: UTF8.self)
        XCTAssertEqual(text, "GET /v1/ws HTTP/1.1\r\nHost: 127.0.0.1:18555\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
    }

    func testTargets() throws {
        XCTAssertEqual(try LeanHandshake.Target.parse("ws://127.0.0.1:18555/v1/ws"),
                       .init(host: "127.0.0.1", port: 18555, resource: "/v1/ws"))
        XCTAssertEqual(try LeanHandshake.Target.parse("ws://example.com"), .init(host: "example.com", port: 80, resource: "/"))
        XCTAssertEqual(try LeanHandshake.Target.parse("ws://[::1]:9/a?b=c#frag"), .init(host: "::1", port: 9, resource: "/a?b=c"))
        XCTAssertEqual(try LeanHandshake.Target.parse("ws://h?x").resource, "/?x")
        XCTAssertEqual(LeanHandshake.Target(host: "::1", port: 9, resource: "/").hostHeader, "[::1]:9")
        for bad in ["wss://127.0.0.1/v1/ws", "http://h/", "ws://", "ws://h:0/", "ws://h:99999/", "ws://[::1/", "ws://u@h/"] {
            XCTAssertThrowsError(try LeanHandshake.Target.parse(bad), bad) { XCTAssertEqual($0 as? LeanWebSocketError, .invalidURL(bad)) }
        }
    }

    func check(_ head: String, key: String = "dGhlIHNhbXBsZSBub25jZQ==") throws(LeanWebSocketError) -> Int? {
        try Array(head.utf8).withUnsafeBufferPointer { buffer throws(LeanWebSocketError) in try LeanHandshake.response(buffer, key: key) }
    }

    func testAnswerChecks() throws {
        let good = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n"
        XCTAssertEqual(try check(good), good.utf8.count)
        // Frames right behind the head are not part of it.
        XCTAssertEqual(try check(good + "\u{81}\u{00}"), good.utf8.count)
        XCTAssertNil(try check(String(good.dropLast(2))), "incomplete head")
        // Header names and the upgrade token are case-insensitive; Connection is a list.
        XCTAssertNotNil(try check("HTTP/1.1 101 OK\r\nupgrade: WebSocket\r\nconnection: keep-alive, upgrade\r\n"
            + "sec-websocket-accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n"))

        func error(_ head: String) -> LeanWebSocketError? {
            do { _ = try check(head); return nil } catch { return error }
        }
        XCTAssertEqual(error("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n"), .handshakeStatus(403))
        XCTAssertEqual(error(good.replacingOccurrences(of: "s3pP", with: "AAAA")), .handshakeRejected("accept"))
        XCTAssertEqual(error(good.replacingOccurrences(of: "Upgrade: websocket\r\n", with: "")), .handshakeRejected("upgrade"))
        XCTAssertEqual(error(good.replacingOccurrences(of: "Connection: Upgrade", with: "Connection: close")), .handshakeRejected("connection"))
        XCTAssertEqual(error(good.replacingOccurrences(of: "\r\n\r\n", with: "\r\nSec-WebSocket-Extensions: permessage-deflate\r\n\r\n")),
                       .handshakeRejected("extensions"))
        XCTAssertEqual(error("garbage\r\n\r\n"), .handshakeRejected("malformed"))
        XCTAssertEqual(error("HTTP/1.1 101 OK\r\n" + String(repeating: "X-Filler: 0123456789\r\n", count: 500)),
                       .handshakeRejected("headersTooLong"))
    }
}
