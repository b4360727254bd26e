import Storage

/// Builds one JSON object as text, field by field, without a reflection-based encoder on
/// the relay path (every relayed event is written once per recipient).
///
/// The object is built as UTF-8 bytes in a buffer of its own (`GrowableBytes`) and copied
/// out once, as a `String` (`finish()`) or bytes (`finishBytes()`).
/// Strings are escaped per RFC 8259 §7, byte-wise: runs of bytes that need no escape (all
/// but `"`, `\` and U+0000–U+001F; multi-byte UTF-8 sequences never contain bytes below
/// 0x80) are copied in bulk, so a 3 KB SDP with a CRLF per line costs a few dozen appends
/// instead of one per character. `raw` splices text that is already JSON.
public struct JSONWriter: ~Copyable {
    private var out: GrowableBytes
    private var first = true

    /// 1 KB: a result or an event with the call's snapshot (~700 bytes for a call with four
    /// devices) fits without growing; at 256 bytes most of them grew once or twice, ~1.5 %
    /// of the hub's instructions. SDP-carrying events grow once.
    public init(capacity: Int = 1024) {
        out = GrowableBytes(capacity: capacity)
        out.put(UInt8(ascii: "{"))
    }

    public mutating func field(_ key: StaticString, _ value: String?) {
        guard let value else { return }
        key_(key)
        // Short values (names, IDs, enum cases) mostly need no escape: the plain copy; long
        // ones (SDP, candidates) go through the word-wise scan, faster per byte.
        if value.utf8.count > Self.plainValueLimit || !Self.appendPlain(value, to: &out) {
            Self.appendQuoted(value, to: &out)
        }
    }

    /// 32 bytes: IDs, account and device names and enum cases are shorter; past a few words
    /// the byte loop of ``appendPlain(_:to:)`` costs more than the word-wise scan.
    static let plainValueLimit = 32

    public mutating func field(_ key: StaticString, _ value: Int64?) {
        guard let value else { return }
        key_(key)
        Self.appendDecimal(value, to: &out)
    }

    public mutating func field(_ key: StaticString, _ value: Int?) {
        guard let value else { return }
        key_(key)
        Self.appendDecimal(Int64(value), to: &out)
    }

    public mutating func field(_ key: StaticString, _ value: Bool?) {
        guard let value else { return }
        key_(key)
        put(value ? "true" : "false")
    }

    /// A string field whose JSON literal (quotes included) is already made, e.g. by
    /// ``QuotedSDPMemo``: the bytes of `field(key, text)` for the text `quoted` stands for.
    mutating func field(_ key: StaticString, quoted: [UInt8]?) {
        guard let quoted else { return }
        key_(key)
        quoted.withUnsafeBufferPointer { out.put($0) }
    }

    /// Splices `json`, which must already be a complete JSON value.
    public mutating func raw(_ key: StaticString, _ json: String?) {
        guard var json else { return }
        key_(key)
        json.withUTF8 { out.put($0) }
    }

    public mutating func null(_ key: StaticString) {
        key_(key)
        put("null")
    }

    /// A nested object under `key`, its fields written by `body` straight into this writer:
    /// the bytes of `raw(key, <a separate writer's finish()>)` without the second buffer
    /// and string.
    mutating func object(_ key: StaticString, _ body: (inout JSONWriter) -> Void) {
        key_(key)
        out.put(UInt8(ascii: "{"))
        first = true
        body(&self)
        out.put(UInt8(ascii: "}"))
        first = false
    }

    /// An array of objects under `key`, one per element, each written by `body` in place:
    /// the bytes of `raw(key, "[" + elements.map { <object> }.joined(separator: ",") + "]")`.
    mutating func objects<S: Sequence>(_ key: StaticString, _ elements: S, _ body: (inout JSONWriter, S.Element) -> Void) {
        key_(key)
        out.put(UInt8(ascii: "["))
        var firstElement = true
        for element in elements {
            if firstElement { firstElement = false } else { out.put(UInt8(ascii: ",")) }
            out.put(UInt8(ascii: "{"))
            first = true
            body(&self, element)
            out.put(UInt8(ascii: "}"))
        }
        out.put(UInt8(ascii: "]"))
        first = false
    }

    public consuming func finish() -> String {
        out.put(UInt8(ascii: "}"))
        return out.string()
    }

    /// The object's UTF-8 bytes: those of ``finish()``, without making a `String` (a
    /// UTF-8 validation) for bytes that go to storage or the wire as bytes.
    consuming func finishBytes() -> [UInt8] {
        out.put(UInt8(ascii: "}"))
        return out.array()
    }

    /// ``finishBytes()`` as a frame to send. The bytes are valid UTF-8: every value went in
    /// as a Swift `String` (escaped byte-wise, never split inside a sequence) or as ASCII,
    /// every key as a `StaticString` (valid UTF-8 by construction).
    consuming func finishFrame() -> WireText {
        WireText(utf8: finishBytes())
    }

    /// `,"key":`. Keys are literals of this code, which need no escape; one that would is
    /// escaped all the same (a byte loop over a few bytes, then the general path).
    @inline(__always)
    private mutating func key_(_ key: StaticString) {
        let comma = !first
        first = false
        key.withUTF8Buffer { utf8 in
            for byte in utf8 where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                if comma { out.put(UInt8(ascii: ",")) }
                Self.appendQuoted(utf8, to: &out)
                out.put(UInt8(ascii: ":"))
                return
            }
            out.putJSONKey(utf8, comma: comma)
        }
    }

    private mutating func put(_ literal: StaticString) {
        literal.withUTF8Buffer { out.put($0) }
    }

    /// Appends `"text"` when no byte of `text` needs an escape, as with most short values;
    /// false, having appended nothing, otherwise. A byte loop over a few bytes:
    /// ``appendQuoted(_:to:)`` cost ~330 instructions per short string
    /// (callgrind, docs/benchmarks.md "Keys without the escape scan").
    @inline(__always)
    static func appendPlain<Sink: JSONByteSink & ~Copyable>(_ text: String, to out: inout Sink) -> Bool {
        text.utf8.withContiguousStorageIfAvailable { utf8 -> Bool in
            for byte in utf8 where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return false }
            out.reserve(utf8.count + 2)
            out.put(UInt8(ascii: "\""))
            out.put(utf8)
            out.put(UInt8(ascii: "\""))
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
    static func appendDecimal<Sink: JSONByteSink & ~Copyable>(_ value: Int64, to out: inout Sink) {
        if value < 0 { out.put(UInt8(ascii: "-")) }
        // 24 bytes, room for the 20 digits of UInt64.max; filled from the end.
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &digits) { buffer in
            var magnitude = value.magnitude
            var k = buffer.count
            repeat {
                k -= 1
                buffer[k] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            let bytes = UnsafeBufferPointer(start: buffer.baseAddress!.assumingMemoryBound(to: UInt8.self) + k, count: buffer.count - k)
            out.put(bytes)
        }
    }

    /// Appends `value` as a JSON string literal (RFC 8259 §7) to `out`, as UTF-8 bytes.
    ///
    /// Runs of bytes that need no escape (all but `"`, `\`, U+0000–U+001F; multi-byte UTF-8
    /// sequences never contain bytes below 0x80) are found 8 bytes at a time and copied in
    /// bulk; a word that holds a byte to escape is skipped up to it (``escapeOffset(_:)``).
    /// A 3 KB SDP with a CRLF per line was ~18 instructions per byte byte-wise, ~4 word-wise
    /// (callgrind, docs/benchmarks.md "Hub Swift CPU per command").
    static func appendQuoted<Sink: JSONByteSink & ~Copyable>(_ value: String, to out: inout Sink) {
        var value = value
        value.withUTF8 { appendQuoted($0, to: &out) }
    }

    /// ``appendQuoted(_:to:)`` of UTF-8 bytes.
    static func appendQuoted<Sink: JSONByteSink & ~Copyable>(_ utf8: UnsafeBufferPointer<UInt8>, to out: inout Sink) {
        let count = utf8.count
        // Room for the text unescaped; the escapes may still grow it.
        out.reserve(count + 2)
        out.put(UInt8(ascii: "\""))
        guard let base = utf8.baseAddress else {
            out.put(UInt8(ascii: "\""))
            return
        }
        var runStart = 0
        var i = 0
        while i < count {
            if count - i >= 8 {
                // Bounds: i + 8 <= count, so the 8 bytes at base + i are inside `utf8`.
                let skip = escapeOffset(UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self))
                i += skip
                if skip == 8 { continue }
            } else {
                // The last 1–7 bytes: tested as one word padded with `A` (needs no escape)
                // instead of byte by byte. Most keys and many values are shorter than 8
                // bytes, the rest ends in such a tail. Bounds: count - i bytes at base + i;
                // a byte found is one of them, the padding never is.
                var word: UInt64 = 0x4141_4141_4141_4141
                withUnsafeMutableBytes(of: &word) { $0.copyMemory(from: UnsafeRawBufferPointer(start: base + i, count: count - i)) }
                let skip = escapeOffset(word)
                if skip == 8 {
                    i = count
                    continue
                }
                i += skip
            }
            // base[i], i < count, needs an escape: the run before it, then the escape.
            let byte = base[i]
            if runStart < i { out.put(UnsafeBufferPointer(start: base + runStart, count: i - runStart)) }
            out.put(UInt8(ascii: "\\"))
            switch byte {
            case UInt8(ascii: "\""): out.put(UInt8(ascii: "\""))
            case UInt8(ascii: "\\"): out.put(UInt8(ascii: "\\"))
            case UInt8(ascii: "\n"): out.put(UInt8(ascii: "n"))
            case UInt8(ascii: "\r"): out.put(UInt8(ascii: "r"))
            case UInt8(ascii: "\t"): out.put(UInt8(ascii: "t"))
            default:
                // \u00XX for the other control characters.
                out.put(UInt8(ascii: "u"))
                out.put(UInt8(ascii: "0"))
                out.put(UInt8(ascii: "0"))
                out.put(hexDigit(byte >> 4))
                out.put(hexDigit(byte & 0xF))
            }
            i += 1
            runStart = i
        }
        if runStart < count { out.put(UnsafeBufferPointer(start: base + runStart, count: count - runStart)) }
        out.put(UInt8(ascii: "\""))
    }

    /// How many of the 8 bytes of `word`, in memory order, come before the first one below
    /// 0x20, `"` or `\`; 8 when there is none. The mask's lowest flagged byte is exact: a
    /// borrow only starts at a byte that is truly below n, so the false flags it can cause
    /// all lie above the first true one.
    @inline(__always)
    static func escapeOffset(_ word: UInt64) -> Int {
        // Memory order is little-endian byte order: byte i in bits 8i ..< 8i + 8.
        let mask = escapeMask(UInt64(littleEndian: word))
        return mask == 0 ? 8 : mask.trailingZeroBitCount >> 3
    }

    /// The top bit of each byte of `word` that is below 0x20, `"` or `\`, and possibly of
    /// bytes above the first such one (see ``escapeOffset(_:)``). SWAR: a byte b < n makes
    /// `(b - n) & ~b` set its top bit, and no borrow crosses bytes unless some byte is below
    /// n; `==` is "x ^ c is zero", i.e. below 1.
    @inline(__always)
    static func escapeMask(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let high: UInt64 = 0x8080_8080_8080_8080
        let quote = word ^ (ones &* UInt64(UInt8(ascii: "\"")))
        let backslash = word ^ (ones &* UInt64(UInt8(ascii: "\\")))
        let control = (word &- ones &* 0x20) & ~word
        let quoteZero = (quote &- ones) & ~quote
        let backslashZero = (backslash &- ones) & ~backslash
        return (control | quoteZero | backslashZero) & high
    }

    /// Lowercase hex digit of a nibble (0–15).
    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }
}
