/// RFC 6455 §5 frames from the server, decoded for ``LeanWebSocket``: control frames are
/// delivered as they arrive (also between the fragments of a message, §5.4), data messages
/// once their last fragment is in (§5.4 reassembly). Pure: no I/O, no clock.
struct LeanFrameDecoder {
    /// A complete message or control frame.
    enum Message: Equatable {
        case text(String)
        case binary([UInt8])
        case ping([UInt8])
        case pong([UInt8])
        /// `code` nil: an empty close body (§5.5.1; reported as 1005 by §7.1.5).
        case close(code: UInt16?, reason: String)
    }

    /// Largest message (all fragments together) accepted; larger is ``LeanWebSocketError/messageTooBig(_:)``.
    let maxMessage: Int
    /// Opcode of the message being reassembled (text or binary), nil between messages.
    private var fragmentOpcode: UInt8?
    private var fragments: [UInt8] = []

    init(maxMessage: Int) { self.maxMessage = maxMessage }

    /// Decodes every complete frame at the start of `bytes`, handing each complete message
    /// to `deliver`, and returns how many bytes it consumed (a partial frame stays for the
    /// caller to keep and offer again with more bytes). The first violation throws; the
    /// connection must then be failed (§7.1.7), so no state after it matters.
    mutating func decode(_ bytes: UnsafeBufferPointer<UInt8>,
                         _ deliver: (Message) -> Void) throws(LeanWebSocketError) -> Int {
        var at = 0
        while let frame = try Self.header(bytes, at: at) {
            let end = frame.payloadStart + frame.length
            guard end <= bytes.count else {
                // Refuse early rather than buffer a frame that can never be accepted.
                if frame.length > maxMessage { throw .messageTooBig(frame.length) }
                break
            }
            let payload = UnsafeBufferPointer(rebasing: bytes[frame.payloadStart ..< end])
            try handle(fin: frame.fin, opcode: frame.opcode, payload: payload, deliver)
            at = end
        }
        return at
    }

    private struct Header {
        let fin: Bool
        let opcode: UInt8
        let length: Int
        let payloadStart: Int
    }

    /// The frame header at `at` (§5.2), nil when it is not complete yet.
    private static func header(_ bytes: UnsafeBufferPointer<UInt8>, at: Int) throws(LeanWebSocketError) -> Header? {
        guard bytes.count - at >= 2 else { return nil }
        let b0 = bytes[at], b1 = bytes[at + 1]
        // RSV1–3 MUST be 0 unless an extension says otherwise (§5.2); we offer none.
        guard b0 & 0x70 == 0 else { throw .protocolViolation("reserved bits") }
        // A server MUST NOT mask (§5.1); the client closes on a masked frame.
        guard b1 & 0x80 == 0 else { throw .protocolViolation("masked server frame") }
        var length = Int(b1 & 0x7F)
        var start = at + 2
        if length == 126 {
            guard bytes.count - start >= 2 else { return nil }
            length = Int(bytes[start]) << 8 | Int(bytes[start + 1])
            start += 2
        } else if length == 127 {
            guard bytes.count - start >= 8 else { return nil }
            // §5.2: the most significant bit MUST be 0.
            guard bytes[start] & 0x80 == 0 else { throw .protocolViolation("64-bit length with the high bit set") }
            var value: UInt64 = 0
            for i in 0 ..< 8 { value = value << 8 | UInt64(bytes[start + i]) }
            guard value <= UInt64(Int32.max) else { throw .messageTooBig(Int(clamping: value)) }
            length = Int(value)
            start += 8
        }
        return Header(fin: b0 & 0x80 != 0, opcode: b0 & 0x0F, length: length, payloadStart: start)
    }

    private mutating func handle(fin: Bool, opcode: UInt8, payload: UnsafeBufferPointer<UInt8>,
                                 _ deliver: (Message) -> Void) throws(LeanWebSocketError) {
        switch opcode {
        case LeanFrame.close, LeanFrame.ping, LeanFrame.pong:
            // Control frames: at most 125 octets and never fragmented (§5.5).
            guard payload.count <= 125 else { throw .protocolViolation("control frame over 125 octets") }
            guard fin else { throw .protocolViolation("fragmented control frame") }
            if opcode == LeanFrame.ping {
                deliver(.ping(Array(payload)))
            } else if opcode == LeanFrame.pong {
                deliver(.pong(Array(payload)))
            } else {
                deliver(try Self.close(payload))
            }
        case LeanFrame.text, LeanFrame.binary:
            // A new data message while one is unfinished is a violation (§5.4).
            guard fragmentOpcode == nil else { throw .protocolViolation("data frame inside a fragmented message") }
            guard payload.count <= maxMessage else { throw .messageTooBig(payload.count) }
            if fin {
                deliver(try Self.message(opcode: opcode, payload))
            } else {
                fragmentOpcode = opcode
                fragments.removeAll(keepingCapacity: true)
                fragments.append(contentsOf: payload)
            }
        case LeanFrame.continuation:
            guard let first = fragmentOpcode else { throw .protocolViolation("continuation without a message") }
            guard fragments.count + payload.count <= maxMessage else { throw .messageTooBig(fragments.count + payload.count) }
            fragments.append(contentsOf: payload)
            if fin {
                fragmentOpcode = nil
                let message = try fragments.withUnsafeBufferPointer { whole throws(LeanWebSocketError) in
                    try Self.message(opcode: first, whole)
                }
                fragments.removeAll(keepingCapacity: true)
                deliver(message)
            }
        default:
            // 0x3–0x7 and 0xB–0xF are reserved (§5.2): fail the connection.
            throw .protocolViolation("reserved opcode \(opcode)")
        }
    }

    private static func message(opcode: UInt8, _ payload: UnsafeBufferPointer<UInt8>) throws(LeanWebSocketError) -> Message {
        guard opcode == LeanFrame.text else { return .binary(Array(payload)) }
        // Text MUST be UTF-8 (§5.6, §8.1: fail with 1007 otherwise).
        guard let text = String(validating: payload, as: UTF8.self) else { throw .invalidUTF8 }
        return .text(text)
    }

    /// §5.5.1: empty, or a 2-octet code then a UTF-8 reason; 1 octet is malformed.
    private static func close(_ payload: UnsafeBufferPointer<UInt8>) throws(LeanWebSocketError) -> Message {
        if payload.isEmpty { return .close(code: nil, reason: "") }
        guard payload.count >= 2 else { throw .protocolViolation("1-octet close body") }
        let code = UInt16(payload[0]) << 8 | UInt16(payload[1])
        guard let reason = String(validating: UnsafeBufferPointer(rebasing: payload[2...]), as: UTF8.self) else {
            throw .invalidUTF8
        }
        return .close(code: code, reason: reason)
    }
}
