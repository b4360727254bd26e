/// RFC 6455 §5.2 base framing, client side: what ``LeanWebSocket`` writes.
///
/// Benchmark client only: the server keeps libsoup for its IM channel (issue 2 forbids
/// hand-written framing there), and so does `WebSocketClient` for tests and tools.
enum LeanFrame {
    /// Opcodes (RFC 6455 §5.2, §11.8).
    static let continuation: UInt8 = 0x0
    static let text: UInt8 = 0x1
    static let binary: UInt8 = 0x2
    static let close: UInt8 = 0x8
    static let ping: UInt8 = 0x9
    static let pong: UInt8 = 0xA

    /// Appends one frame to `out`: FIN as given, RSV1–3 zero (no extension negotiated,
    /// §5.2), MASK set with `maskKey` (a client MUST mask every frame, §5.1, §5.3), the
    /// shortest payload length encoding (§5.2: 7 bits, 126 + 16 bits, 127 + 64 bits), the
    /// key in network order and the masked payload (§5.3: octet i XOR key octet i mod 4).
    static func appendMasked(opcode: UInt8, fin: Bool = true, payload: UnsafeRawBufferPointer, maskKey: UInt32,
                             to out: inout [UInt8]) {
        let count = payload.count
        out.append((fin ? 0x80 : 0) | (opcode & 0x0F))
        if count < 126 {
            out.append(0x80 | UInt8(count))
        } else if count <= 0xFFFF {
            out.append(0x80 | 126)
            out.append(UInt8(count >> 8))
            out.append(UInt8(count & 0xFF))
        } else {
            out.append(0x80 | 127)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: UInt64(count) >> UInt64(shift))) }
        }
        let key: (UInt8, UInt8, UInt8, UInt8) = (UInt8(maskKey >> 24), UInt8((maskKey >> 16) & 0xFF),
                                                 UInt8((maskKey >> 8) & 0xFF), UInt8(maskKey & 0xFF))
        out.append(key.0)
        out.append(key.1)
        out.append(key.2)
        out.append(key.3)
        guard count > 0, let source = payload.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        let start = out.count
        out.append(contentsOf: repeatElement(0, count: count))
        out.withUnsafeMutableBufferPointer { buffer in
            guard let target = buffer.baseAddress?.advanced(by: start) else { return }
            // Whole words first: the key repeats every 4 octets, so 8 payload octets XOR
            // with the key twice over (little-endian load: octet 0 is the low byte).
            let k = UInt64(key.0) | UInt64(key.1) << 8 | UInt64(key.2) << 16 | UInt64(key.3) << 24
            let word = k | k << 32
            var i = 0
            while i + 8 <= count {
                let v = UnsafeRawPointer(source + i).loadUnaligned(as: UInt64.self)
                UnsafeMutableRawPointer(target + i).storeBytes(of: v ^ word, as: UInt64.self)
                i += 8
            }
            let bytes = [key.0, key.1, key.2, key.3]
            while i < count {
                target[i] = source[i] ^ bytes[i & 3]
                i += 1
            }
        }
    }

    /// ``appendMasked(opcode:fin:payload:maskKey:to:)`` for a text message (UTF-8 of `text`).
    static func appendMaskedText(_ text: String, maskKey: UInt32, to out: inout [UInt8]) {
        var text = text
        text.withUTF8 { appendMasked(opcode: Self.text, payload: UnsafeRawBufferPointer($0), maskKey: maskKey, to: &out) }
    }

    /// A close frame's body (§5.5.1): the code in network order, then the UTF-8 reason,
    /// cut so the whole payload stays within the 125 octets of a control frame (§5.5).
    static func closePayload(code: UInt16, reason: String) -> [UInt8] {
        var body: [UInt8] = [UInt8(code >> 8), UInt8(code & 0xFF)]
        // Whole scalars only, so a cut never splits a UTF-8 sequence (§5.5.1: the reason is UTF-8).
        var reasonBytes: [UInt8] = []
        for scalar in reason.unicodeScalars {
            let utf8 = Array(String(scalar).utf8)
            guard reasonBytes.count + utf8.count <= 123 else { break }
            reasonBytes += utf8
        }
        body += reasonBytes
        return body
    }
}
