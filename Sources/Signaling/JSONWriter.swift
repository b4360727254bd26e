/// Builds one JSON object as text, field by field, without a reflection-based encoder on
/// the relay path (every relayed event is written once per recipient).
///
/// The object is built as UTF-8 bytes and turned into a `String` once, in `finish()`.
/// Strings are escaped per RFC 8259 §7, byte-wise: runs of bytes that need no escape (all
/// but `"`, `\` and U+0000–U+001F; multi-byte UTF-8 sequences never contain bytes below
/// 0x80) are copied in bulk, so a 3 KB SDP with a CRLF per line costs a few dozen appends
/// instead of one per character. `raw` splices text that is already JSON.
public struct JSONWriter: Sendable {
    private var bytes: [UInt8]
    private var first = true

    /// 256: the envelope of a typical event; grows once for SDP-carrying events.
    public init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
        bytes.append(UInt8(ascii: "{"))
    }

    public mutating func field(_ key: String, _ value: String?) {
        guard let value else { return }
        key_(key)
        Self.appendQuoted(value, to: &bytes)
    }

    public mutating func field(_ key: String, _ value: Int64?) {
        guard let value else { return }
        key_(key)
        Self.appendDecimal(value, to: &bytes)
    }

    public mutating func field(_ key: String, _ value: Int?) {
        guard let value else { return }
        key_(key)
        Self.appendDecimal(Int64(value), to: &bytes)
    }

    public mutating func field(_ key: String, _ value: Bool?) {
        guard let value else { return }
        key_(key)
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    /// Splices `json`, which must already be a complete JSON value.
    public mutating func raw(_ key: String, _ json: String?) {
        guard let json else { return }
        key_(key)
        bytes.append(contentsOf: json.utf8)
    }

    public mutating func null(_ key: String) {
        key_(key)
        bytes.append(contentsOf: "null".utf8)
    }

    /// A nested object under `key`, its fields written by `body` straight into this writer:
    /// the bytes of `raw(key, <a separate writer's finish()>)` without the second buffer
    /// and string.
    mutating func object(_ key: String, _ body: (inout JSONWriter) -> Void) {
        key_(key)
        bytes.append(UInt8(ascii: "{"))
        first = true
        body(&self)
        bytes.append(UInt8(ascii: "}"))
        first = false
    }

    /// An array of objects under `key`, one per element, each written by `body` in place:
    /// the bytes of `raw(key, "[" + elements.map { <object> }.joined(separator: ",") + "]")`.
    mutating func objects<S: Sequence>(_ key: String, _ elements: S, _ body: (inout JSONWriter, S.Element) -> Void) {
        key_(key)
        bytes.append(UInt8(ascii: "["))
        var firstElement = true
        for element in elements {
            if firstElement { firstElement = false } else { bytes.append(UInt8(ascii: ",")) }
            bytes.append(UInt8(ascii: "{"))
            first = true
            body(&self, element)
            bytes.append(UInt8(ascii: "}"))
        }
        bytes.append(UInt8(ascii: "]"))
        first = false
    }

    public consuming func finish() -> String {
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }

    private mutating func key_(_ key: String) {
        if first { first = false } else { bytes.append(UInt8(ascii: ",")) }
        Self.appendQuoted(key, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
    }

    /// Appends `value` as a JSON string literal (RFC 8259 §7) to `out`.
    static func appendQuoted(_ value: String, to out: inout String) {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(value.utf8.count + 2)
        appendQuoted(value, to: &buffer)
        out += String(decoding: buffer, as: UTF8.self)
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Appends `value` in decimal, the bytes of `String(value)` (`-` and digits, no leading
    /// zeros), without making the string.
    static func appendDecimal(_ value: Int64, to out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits = 1
        var rest = magnitude / 10
        while rest > 0 { digits += 1; rest /= 10 }
        let start = out.count
        out.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: digits))
        var k = start + digits - 1
        while magnitude > 0 {
            out[k] = UInt8(ascii: "0") + UInt8(magnitude % 10)
            magnitude /= 10
            k -= 1
        }
    }

    /// Appends `value` as a JSON string literal (RFC 8259 §7) to `out`, as UTF-8 bytes.
    static func appendQuoted(_ value: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { utf8 in
            var runStart = 0
            for i in 0 ..< utf8.count {
                let byte = utf8[i]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                if runStart < i { out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart ..< i])) }
                runStart = i + 1
                out.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""): out.append(UInt8(ascii: "\""))
                case UInt8(ascii: "\\"): out.append(UInt8(ascii: "\\"))
                case UInt8(ascii: "\n"): out.append(UInt8(ascii: "n"))
                case UInt8(ascii: "\r"): out.append(UInt8(ascii: "r"))
                case UInt8(ascii: "\t"): out.append(UInt8(ascii: "t"))
                default:
                    // \u00XX for the other control characters.
                    out.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                            hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0xf)]])
                }
            }
            if runStart < utf8.count { out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...])) }
        }
        out.append(UInt8(ascii: "\""))
    }
}
