import CSoup
import Foundation

/// The opening handshake of RFC 6455 §4, client side, for ``LeanWebSocket``: the HTTP/1.1
/// Upgrade request (§4.1) and the checks on the server's answer (§4.1, the client's steps
/// 1–6 after sending). Pure apart from the SHA-1 (GLib's `GChecksum`).
enum LeanHandshake {
    /// §1.3 / §4.2.2: the GUID appended to the key before hashing.
    static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
    /// 8 KiB: a 101 answer from the server is ~200 bytes; anything past this is not one.
    static let maxHeadBytes = 8 << 10

    /// Where a `ws://` URL points: host, port and request target.
    struct Target: Equatable {
        let host: String
        let port: UInt16
        /// Path and query, `/` when the URL has none (§3: resource name).
        let resource: String
        /// The `Host` header value (§4.1 item 4): host, and the port when not 80.
        var hostHeader: String {
            let h = host.contains(":") ? "[\(host)]" : host
            return port == 80 ? h : "\(h):\(port)"
        }

        /// `ws://host[:port][/path][?query]` (§3). `wss` is refused: this client has no TLS,
        /// it only drives a server on the benchmark's host.
        static func parse(_ url: String) throws(LeanWebSocketError) -> Target {
            guard url.hasPrefix("ws://") else { throw .invalidURL(url) }
            let rest = url.dropFirst(5)
            let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
            let authority = rest[rest.startIndex ..< authorityEnd]
            var resource = String(rest[authorityEnd...].prefix { $0 != "#" })
            if resource.isEmpty { resource = "/" } else if resource.hasPrefix("?") { resource = "/" + resource }
            var host = Substring(authority)
            var port: UInt16 = 80
            if authority.hasPrefix("[") {
                guard let close = authority.firstIndex(of: "]") else { throw .invalidURL(url) }
                host = authority[authority.index(after: authority.startIndex) ..< close]
                let after = authority[authority.index(after: close)...]
                if !after.isEmpty {
                    guard after.hasPrefix(":"), let p = UInt16(after.dropFirst()), p > 0 else { throw .invalidURL(url) }
                    port = p
                }
            } else if let colon = authority.lastIndex(of: ":") {
                host = authority[authority.startIndex ..< colon]
                guard let p = UInt16(authority[authority.index(after: colon)...]), p > 0 else { throw .invalidURL(url) }
                port = p
            }
            guard !host.isEmpty, !host.contains("@") else { throw .invalidURL(url) }
            return Target(host: String(host), port: port, resource: resource)
        }
    }

    /// §4.1 item 7: a nonce of 16 random bytes, base64.
    static func key(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }

    /// §4.2.2 item 5.4: base64(SHA-1(key + GUID)).
    static func accept(key: String) -> String {
        let input = Array((key + guid).utf8)
        guard let checksum = g_checksum_new(G_CHECKSUM_SHA1) else { return "" }
        defer { g_checksum_free(checksum) }
        input.withUnsafeBufferPointer { g_checksum_update(checksum, $0.baseAddress, gssize($0.count)) }
        var digest = [UInt8](repeating: 0, count: 20)
        var length = gsize(digest.count)
        digest.withUnsafeMutableBufferPointer { g_checksum_get_digest(checksum, $0.baseAddress, &length) }
        return Data(digest.prefix(Int(length))).base64EncodedString()
    }

    /// The request of §4.1 (items 1–9): GET, Host, `Upgrade: websocket`, `Connection:
    /// Upgrade`, the key, version 13. No Origin (not a browser), no subprotocol, no
    /// extension offered (so no permessage-deflate, RFC 7692, and RSV1 stays 0).
    static func request(_ target: Target, key: String) -> [UInt8] {
        Array(("GET \(target.resource) HTTP/1.1\r\nHost: \(target.hostHeader)\r\nUpgrade: websocket\r\n"
            + "Connection: Upgrade\r\nSec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n\r\n").utf8)
    }

    /// Checks the server's answer at the start of `bytes`: nil while the head (up to the
    /// empty line) is incomplete, else the length of the head; the bytes after it are
    /// already frames. Throws when the answer fails any of the client's checks (§4.1):
    /// status 101 (1), `Upgrade: websocket` (2), `Connection: upgrade` (3), the accept
    /// value (4), no extension (5) or subprotocol (6) we did not ask for.
    static func response(_ bytes: UnsafeBufferPointer<UInt8>, key: String) throws(LeanWebSocketError) -> Int? {
        guard let end = headEnd(bytes) else {
            if bytes.count > maxHeadBytes { throw .handshakeRejected("headersTooLong") }
            return nil
        }
        guard let head = String(validating: UnsafeBufferPointer(rebasing: bytes[0 ..< end]), as: UTF8.self) else {
            throw .handshakeRejected("malformed")
        }
        var lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
        let statusLine = lines.removeFirst().split(separator: " ", maxSplits: 2)
        guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/1."), let status = Int(statusLine[1]) else {
            throw .handshakeRejected("malformed")
        }
        guard status == 101 else { throw .handshakeStatus(status) }
        var headers: [String: String] = [:]
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { throw .handshakeRejected("malformed") }
            let name = line[line.startIndex ..< colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers[name] = headers[name].map { $0 + ", " + value } ?? value
        }
        guard headers["upgrade"]?.lowercased() == "websocket" else { throw .handshakeRejected("upgrade") }
        let connection = headers["connection"]?.lowercased().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } ?? []
        guard connection.contains("upgrade") else { throw .handshakeRejected("connection") }
        guard headers["sec-websocket-accept"] == accept(key: key) else { throw .handshakeRejected("accept") }
        guard headers["sec-websocket-extensions"] == nil else { throw .handshakeRejected("extensions") }
        guard headers["sec-websocket-protocol"] == nil else { throw .handshakeRejected("protocol") }
        return end + 4
    }

    /// Offset of the `\r\n\r\n` that ends the head, nil when not there yet.
    private static func headEnd(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for i in 0 ... bytes.count - 4 where bytes[i] == 13 && bytes[i + 1] == 10 && bytes[i + 2] == 13 && bytes[i + 3] == 10 {
            return i
        }
        return nil
    }
}
