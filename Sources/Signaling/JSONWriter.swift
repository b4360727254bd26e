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
        // Short values (names, IDs, enum cases) mostly need no escape: the plain copy; long
        // ones (SDP, candidates) go through the word-wise scan, faster per byte.
        if value.utf8.count > Self.plainValueLimit || !Self.appendPlain(value, to: &bytes) {
            Self.appendQuoted(value, to: &bytes)
        }
    }

    /// 32 bytes: IDs, account and device names and enum cases are shorter; past a few words
    /// the byte loop of ``appendPlain(_:to:)`` costs more than the word-wise scan.
    static let plainValueLimit = 32

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

    /// A string field whose JSON literal (quotes included) is already made, e.g. by
    /// ``QuotedSDPMemo``: the bytes of `field(key, text)` for the text `quoted` stands for.
    mutating func field(_ key: String, quoted: [UInt8]?) {
        guard let quoted else { return }
        key_(key)
        bytes.append(contentsOf: quoted)
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

    /// The object's UTF-8 bytes: those of ``finish()``, without making a `String` (a copy
    /// and a UTF-8 validation) for bytes that go to storage or the wire as bytes.
    consuming func finishBytes() -> [UInt8] {
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    /// ``finishBytes()`` as a frame to send. The bytes are valid UTF-8: every value went in
    /// as a Swift `String` (escaped byte-wise, never split inside a sequence) or as ASCII.
    consuming func finishFrame() -> WireText {
        WireText(utf8: finishBytes())
    }

    private mutating func key_(_ key: String) {
        if first { first = false } else { bytes.append(UInt8(ascii: ",")) }
        if !Self.appendPlain(key, to: &bytes) { Self.appendQuoted(key, to: &bytes) }
        bytes.append(UInt8(ascii: ":"))
    }

    /// Appends `"text"` when no byte of `text` needs an escape, as with every key this code
    /// writes and most short values; false, having appended nothing, otherwise. A byte loop
    /// over a few bytes: ``appendQuoted(_:to:)-([UInt8])`` cost ~330 instructions per short
    /// string, and a snapshot alone has ~12 keys (callgrind, docs/benchmarks.md "Keys without
    /// the escape scan").
    @inline(__always)
    static func appendPlain(_ text: String, to out: inout [UInt8]) -> Bool {
        text.utf8.withContiguousStorageIfAvailable { utf8 -> Bool in
            for byte in utf8 where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return false }
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: utf8)
            out.append(UInt8(ascii: "\""))
            return true
        } ?? false
    }

    /// Appends `value` as a JSON string literal (RFC 8259 §7) to `out`.
    static func appendQuoted(_ value: String, to out: inout String) {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(value.utf8.count + 2)
        appendQuoted(value, to: &buffer)
        out += String(decoding: buffer, as: UTF8.self)
    }

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
    ///
    /// Runs of bytes that need no escape (all but `"`, `\`, U+0000–U+001F; multi-byte UTF-8
    /// sequences never contain bytes below 0x80) are found 8 bytes at a time and copied in
    /// bulk; only an 8-byte word that holds a byte to escape is looked at byte by byte. A
    /// 3 KB SDP with a CRLF per line was ~18 instructions per byte byte-wise, ~4 this way
    /// (callgrind, docs/benchmarks.md "Hub Swift CPU per command").
    static func appendQuoted(_ value: String, to out: inout [UInt8]) {
        var value = value
        value.withUTF8 { appendQuoted($0, to: &out) }
    }

    /// ``appendQuoted(_:to:)-([UInt8])`` of UTF-8 bytes.
    static func appendQuoted(_ utf8: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        let count = utf8.count
        // Geometric growth (an exact reserve per call would reallocate on every field); the
        // escapes may still grow it once more.
        let needed = out.count + count + 2
        if out.capacity < needed { out.reserveCapacity(Swift.max(needed, 2 * out.capacity)) }
        out.append(UInt8(ascii: "\""))
        guard let base = utf8.baseAddress else {
            out.append(UInt8(ascii: "\""))
            return
        }
        var runStart = 0
        var i = 0
        while i < count {
            var end = i + 1
            if count - i >= 8 {
                // Bounds: i + 8 <= count, so the 8 bytes at base + i are inside `utf8`.
                let word = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
                if !needsEscape(word) {
                    i += 8
                    continue
                }
                end = i + 8
            } else {
                // The last 1–7 bytes: tested as one word padded with `A` (needs no escape)
                // instead of byte by byte. Most keys and many values are shorter than 8
                // bytes, the rest ends in such a tail. Bounds: count - i bytes at base + i.
                var word: UInt64 = 0x4141_4141_4141_4141
                withUnsafeMutableBytes(of: &word) { $0.copyMemory(from: UnsafeRawBufferPointer(start: base + i, count: count - i)) }
                if !needsEscape(word) {
                    i = count
                    continue
                }
                end = count
            }
            // Byte by byte through [i, end), end <= count.
            while i < end {
                let byte = base[i]
                if byte >= 0x20, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") {
                    i += 1
                    continue
                }
                if runStart < i { out.append(contentsOf: UnsafeBufferPointer(start: base + runStart, count: i - runStart)) }
                out.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""): out.append(UInt8(ascii: "\""))
                case UInt8(ascii: "\\"): out.append(UInt8(ascii: "\\"))
                case UInt8(ascii: "\n"): out.append(UInt8(ascii: "n"))
                case UInt8(ascii: "\r"): out.append(UInt8(ascii: "r"))
                case UInt8(ascii: "\t"): out.append(UInt8(ascii: "t"))
                default:
                    // \u00XX for the other control characters.
                    out.append(UInt8(ascii: "u"))
                    out.append(UInt8(ascii: "0"))
                    out.append(UInt8(ascii: "0"))
                    out.append(hexDigit(byte >> 4))
                    out.append(hexDigit(byte & 0xF))
                }
                i += 1
                runStart = i
            }
        }
        if runStart < count { out.append(contentsOf: UnsafeBufferPointer(start: base + runStart, count: count - runStart)) }
        out.append(UInt8(ascii: "\""))
    }

    /// Whether any of the 8 bytes of `word` is below 0x20, `"` or `\` (SWAR: a byte b < n
    /// makes `(b - n) & ~b` set its top bit, and no borrow crosses bytes unless some byte is
    /// below n; `==` is "x ^ c is zero", i.e. below 1).
    @inline(__always)
    static func needsEscape(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let high: UInt64 = 0x8080_8080_8080_8080
        let quote = word ^ (ones &* UInt64(UInt8(ascii: "\"")))
        let backslash = word ^ (ones &* UInt64(UInt8(ascii: "\\")))
        let control = (word &- ones &* 0x20) & ~word
        let quoteZero = (quote &- ones) & ~quote
        let backslashZero = (backslash &- ones) & ~backslash
        return (control | quoteZero | backslashZero) & high != 0
    }

    /// Lowercase hex digit of a nibble (0–15).
    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }
}
