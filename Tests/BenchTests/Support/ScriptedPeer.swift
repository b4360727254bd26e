import Foundation

/// A WebSocket "server" on 127.0.0.1, port 0, written step by step by a test with blocking
/// calls (5 s receive timeout), to put exact bytes in front of the lean client.
final class ScriptedPeer {
    /// The listening socket; -1 once ``closeListener()`` closed it.
    private(set) var listener: Int32
    private(set) var port: UInt16 = 0
    private(set) var connection: Int32 = -1
    private var buffer: [UInt8] = []

    init() throws {
        listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 4) == 0 else { throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        port = UInt16(bigEndian: address.sin_port)
    }

    deinit {
        if connection >= 0 { close(connection) }
        closeListener()
    }

    /// Closes the listening socket (the port is free again, nobody accepts). Closing it by
    /// number and again in deinit closed whatever fd had taken the number meanwhile: once
    /// the GLib wake-up eventfd of the next test's event loop, which then never woke.
    func closeListener() {
        if listener >= 0 { close(listener) }
        listener = -1
    }

    var url: String { "ws://127.0.0.1:\(port)/v1/ws" }

    func accept() throws {
        connection = Glibc.accept(listener, nil, nil)
        guard connection >= 0 else { throw POSIXError(.ECONNABORTED) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 4096)
        let n = chunk.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { throw POSIXError(n == 0 ? .ECONNRESET : .ETIMEDOUT) }
        buffer += chunk[0 ..< n]
    }

    /// The request head up to the empty line, as text.
    func readHead() throws -> String {
        while true {
            if let end = (0 ..< max(0, buffer.count - 3)).first(where: { buffer[$0] == 13 && buffer[$0 + 1] == 10 && buffer[$0 + 2] == 13 && buffer[$0 + 3] == 10 }) {
                let head = String(decoding: buffer[0 ..< end], as: UTF8.self)
                buffer.removeFirst(end + 4)
                return head
            }
            try fill()
        }
    }

    /// One client frame: FIN, opcode, whether it was masked, the unmasked payload.
    func readFrame() throws -> (fin: Bool, opcode: UInt8, masked: Bool, payload: [UInt8]) {
        func need(_ n: Int) throws { while buffer.count < n { try fill() } }
        try need(2)
        var length = Int(buffer[1] & 0x7F)
        var at = 2
        if length == 126 { try need(4); length = Int(buffer[2]) << 8 | Int(buffer[3]); at = 4 }
        if length == 127 { try need(10); length = buffer[2 ..< 10].reduce(0) { $0 << 8 | Int($1) }; at = 10 }
        let masked = buffer[1] & 0x80 != 0
        let keyStart = at
        if masked { at += 4 }
        try need(at + length)
        let key = masked ? Array(buffer[keyStart ..< keyStart + 4]) : [0, 0, 0, 0]
        let payload = buffer[at ..< at + length].enumerated().map { $0.element ^ key[$0.offset % 4] }
        let frame = (fin: buffer[0] & 0x80 != 0, opcode: buffer[0] & 0x0F, masked: masked, payload: payload)
        buffer.removeFirst(at + length)
        return frame
    }

    func write(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    func write(_ text: String) { write(Array(text.utf8)) }

    /// Closes TCP (the server's last step of the closing handshake, RFC 6455 §7.1.1).
    func closeConnection() {
        if connection >= 0 { close(connection) }
        connection = -1
    }
}
