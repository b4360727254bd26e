/// A single-pass reader for the frames devices actually send: one flat JSON object (RFC
/// 8259) whose known fields hold strings, integers, `null` or (invitees) an array of
/// strings. It replaces `JSONDecoder` on the hot path, which was ~7 % of the hub's CPU
/// (docs/benchmarks.md, "Signaling") for frames that carry a 3 KB SDP.
///
/// It answers only when its reading is certainly the decoder's: on anything else — invalid
/// JSON, a value of the wrong type, a number with a fraction or exponent or out of range, a
/// nested value in an unknown field, a key that appears twice, a lone surrogate escape —
/// it returns nil and the caller runs `JSONDecoder`, so accepted frames, refusals and error
/// texts stay exactly as they were.
extension RawFrame {
    static func scan(_ bytes: [UInt8]) -> RawFrame? {
        bytes.withUnsafeBufferPointer { scan($0) }
    }

    /// ``scan(_:)-([UInt8])`` over bytes the caller holds (a native `String`'s UTF-8 storage,
    /// so a frame is not copied into an array first).
    static func scan(_ bytes: UnsafeBufferPointer<UInt8>) -> RawFrame? {
        var scanner = FrameScanner(bytes: bytes)
        return scanner.frame()
    }

    /// ``scan(_:)-(UnsafeBufferPointer<UInt8>)`` that also returns the `sdp` value's JSON
    /// string literal as it stands in the frame (quotes included), when that literal is
    /// byte for byte what ``JSONWriter/appendQuoted(_:to:)-([UInt8])`` makes of the
    /// unescaped SDP (`FrameScanner.lastStringCanonical`); else nil. The hub sends and stores
    /// that literal instead of escaping the SDP again (``QuotedSDPMemo``).
    static func scan(_ bytes: UnsafeBufferPointer<UInt8>, quotedSDP: inout [UInt8]?) -> RawFrame? {
        var scanner = FrameScanner(bytes: bytes)
        guard let raw = scanner.frame() else { return nil }
        if let range = scanner.canonicalSDPLiteral {
            quotedSDP = Array(UnsafeBufferPointer(rebasing: bytes[range]))
        }
        return raw
    }
}

private struct FrameScanner {
    let bytes: UnsafeBufferPointer<UInt8>
    var i = 0
    /// Whether the last literal read by ``string()`` is in the writer's form: its escapes
    /// are exactly those ``JSONWriter`` writes (`\"`, `\\`, `\n`, `\r`, `\t`, and
    /// `\u00xx` in lowercase hex for the other bytes below 0x20), so escaping its unescaped
    /// text again gives the literal back. Bytes that need no escape are never escaped by
    /// the writer, and a literal holds no raw `"`, `\` or control byte (refused above).
    private(set) var lastStringCanonical = false
    /// Where the last literal read by ``string()`` stands in `bytes`, quotes included.
    private var lastLiteral = 0 ..< 0
    /// The `sdp` value's literal, quotes included, when it was canonical.
    private(set) var canonicalSDPLiteral: Range<Int>?

    init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    private enum Field: Int, CaseIterable {
        case v, type, eventID, callID, callee, revision, generation, sdp, candidate, sdpMid, sdpMLineIndex
        case ufrag, room, media, invitees, token, cursor
        case publisher, mid, track, maxWidth, maxHeight, maxLayer

        /// The field named `key` (unescaped), or nil.
        init?(_ key: String) {
            var key = key
            guard let field = key.withUTF8({ Field(bytes: $0) }) else { return nil }
            self = field
        }

        /// The field whose name is exactly `bytes` (no escapes), or nil.
        init?(bytes: UnsafeBufferPointer<UInt8>) {
            guard bytes.count < Self.namesByLength.count else { return nil }
            for (name, field) in Self.namesByLength[bytes.count] where name.elementsEqual(bytes) {
                self = field
                return
            }
            return nil
        }

        /// The fields' names as bytes, indexed by length (at most 5 share one).
        static let namesByLength: [[([UInt8], Field)]] = {
            let longest = allCases.map(\.name.utf8.count).max() ?? 0
            var table = [[([UInt8], Field)]](repeating: [], count: longest + 1)
            for field in allCases {
                let name = Array(field.name.utf8)
                table[name.count].append((name, field))
            }
            return table
        }()

        var name: String {
            switch self {
            case .v: return "v"
            case .type: return "type"
            case .eventID: return "eventID"
            case .callID: return "callID"
            case .callee: return "callee"
            case .revision: return "revision"
            case .generation: return "generation"
            case .sdp: return "sdp"
            case .candidate: return "candidate"
            case .sdpMid: return "sdpMid"
            case .sdpMLineIndex: return "sdpMLineIndex"
            case .ufrag: return "ufrag"
            case .room: return "room"
            case .media: return "media"
            case .invitees: return "invitees"
            case .token: return "token"
            case .cursor: return "cursor"
            case .publisher: return "publisher"
            case .mid: return "mid"
            case .track: return "track"
            case .maxWidth: return "maxWidth"
            case .maxHeight: return "maxHeight"
            case .maxLayer: return "maxLayer"
            }
        }
    }

    mutating func frame() -> RawFrame? {
        var raw = RawFrame()
        var seenFields: UInt32 = 0
        var unknownKeys: [String] = []
        skipSpace()
        guard take(UInt8(ascii: "{")) else { return nil }
        skipSpace()
        if take(UInt8(ascii: "}")) { return end() ? raw : nil }
        while true {
            skipSpace()
            guard let key = self.key() else { return nil }
            skipSpace()
            guard take(UInt8(ascii: ":")) else { return nil }
            skipSpace()
            switch key {
            case .known(let field):
                let bit: UInt32 = 1 << field.rawValue
                guard seenFields & bit == 0 else { return nil }
                seenFields |= bit
                guard read(field, into: &raw) else { return nil }
            case .unknown(let name):
                guard !unknownKeys.contains(name) else { return nil }
                unknownKeys.append(name)
                guard skipScalar() else { return nil }
            }
            skipSpace()
            if take(UInt8(ascii: ",")) { continue }
            guard take(UInt8(ascii: "}")) else { return nil }
            return end() ? raw : nil
        }
    }

    private enum Key {
        case known(Field)
        case unknown(String)
    }

    /// An object key. A literal without escapes (every key a client writes) is matched on its
    /// bytes against the field names, with no `String` made for a known field and no string
    /// comparisons (~7 keys per command: making each a `String` and running it through
    /// ``Field/init(_:)`` was ~10 % of the parse). A key with an escape (`"\u0074ype"` is
    /// `type`) is unescaped and goes through ``Field/init(_:)``.
    private mutating func key() -> Key? {
        guard let (literal, escaped) = literal() else { return nil }
        guard escaped else {
            return Field(bytes: literal).map { .known($0) } ?? .unknown(String(decoding: literal, as: UTF8.self))
        }
        guard let name = unescaped(literal) else { return nil }
        return Field(name).map { .known($0) } ?? .unknown(name)
    }

    /// One known field's value; `null` leaves it nil, as `decodeIfPresent` does.
    private mutating func read(_ field: Field, into raw: inout RawFrame) -> Bool {
        if takeLiteral("null") { return true }
        switch field {
        case .v: guard let n = integer(), let v = Int(exactly: n) else { return false }; raw.v = v
        case .revision: guard let n = integer() else { return false }; raw.revision = n
        case .generation: guard let n = integer() else { return false }; raw.generation = n
        case .maxWidth: guard let n = integer() else { return false }; raw.maxWidth = n
        case .maxHeight: guard let n = integer() else { return false }; raw.maxHeight = n
        case .maxLayer: guard let n = integer() else { return false }; raw.maxLayer = n
        case .sdpMLineIndex: guard let n = integer(), let v = Int(exactly: n) else { return false }; raw.sdpMLineIndex = v
        case .invitees:
            guard take(UInt8(ascii: "[")) else { return false }
            var items: [String] = []
            skipSpace()
            if !take(UInt8(ascii: "]")) {
                while true {
                    skipSpace()
                    guard let item = string() else { return false }
                    items.append(item)
                    skipSpace()
                    if take(UInt8(ascii: ",")) { continue }
                    guard take(UInt8(ascii: "]")) else { return false }
                    break
                }
            }
            raw.invitees = items
        default:
            guard let text = string() else { return false }
            switch field {
            case .type: raw.type = text
            case .eventID: raw.eventID = text
            case .callID: raw.callID = text
            case .callee: raw.callee = text
            case .sdp:
                raw.sdp = text
                if lastStringCanonical { canonicalSDPLiteral = lastLiteral }
            case .candidate: raw.candidate = text
            case .sdpMid: raw.sdpMid = text
            case .ufrag: raw.ufrag = text
            case .room: raw.room = text
            case .media: raw.media = text
            case .token: raw.token = text
            case .cursor: raw.cursor = text
            case .publisher: raw.publisher = text
            case .mid: raw.mid = text
            case .track: raw.track = text
            case .v, .revision, .generation, .sdpMLineIndex, .invitees, .maxWidth, .maxHeight, .maxLayer: return false
            }
        }
        return true
    }

    /// The value of a field RawFrame does not have: a string, number or literal (a nested
    /// object or array goes to the decoder).
    private mutating func skipScalar() -> Bool {
        guard i < bytes.count else { return false }
        switch bytes[i] {
        case UInt8(ascii: "\""): return string() != nil
        case UInt8(ascii: "t"): return takeLiteral("true")
        case UInt8(ascii: "f"): return takeLiteral("false")
        case UInt8(ascii: "n"): return takeLiteral("null")
        default: return integer() != nil
        }
    }

    private func end() -> Bool {
        var j = i
        while j < bytes.count, Self.isSpace(bytes[j]) { j += 1 }
        return j == bytes.count
    }

    private static func isSpace(_ b: UInt8) -> Bool {
        b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09
    }

    private mutating func skipSpace() {
        while i < bytes.count, Self.isSpace(bytes[i]) { i += 1 }
    }

    private mutating func take(_ byte: UInt8) -> Bool {
        guard i < bytes.count, bytes[i] == byte else { return false }
        i += 1
        return true
    }

    private mutating func takeLiteral(_ literal: StaticString) -> Bool {
        let n = literal.utf8CodeUnitCount
        guard bytes.count - i >= n else { return false }
        for k in 0 ..< n where bytes[i + k] != literal.utf8Start[k] { return false }
        // A literal must not run into more letters ("nullx" is not JSON).
        if i + n < bytes.count, bytes[i + n] >= UInt8(ascii: "a"), bytes[i + n] <= UInt8(ascii: "z") { return false }
        i += n
        return true
    }

    /// `-?(0|[1-9][0-9]*)` within Int64, not followed by a fraction or exponent.
    private mutating func integer() -> Int64? {
        var j = i
        let negative = j < bytes.count && bytes[j] == UInt8(ascii: "-")
        if negative { j += 1 }
        let start = j
        var value: Int64 = 0
        while j < bytes.count, bytes[j] >= UInt8(ascii: "0"), bytes[j] <= UInt8(ascii: "9") {
            let digit = Int64(bytes[j] - UInt8(ascii: "0"))
            let (times10, o1) = value.multipliedReportingOverflow(by: 10)
            let (next, o2) = negative ? times10.subtractingReportingOverflow(digit) : times10.addingReportingOverflow(digit)
            guard !o1, !o2 else { return nil }
            value = next
            j += 1
        }
        let digits = j - start
        guard digits > 0, !(digits > 1 && bytes[start] == UInt8(ascii: "0")), !(negative && value == 0) else { return nil }
        if j < bytes.count, bytes[j] == UInt8(ascii: ".") || bytes[j] == UInt8(ascii: "e") || bytes[j] == UInt8(ascii: "E") {
            return nil
        }
        i = j
        return value
    }

    /// A string literal, unescaped (RFC 8259 §7), made into a `String` with one copy: a
    /// literal without escapes straight from the frame's bytes, one with escapes (an SDP's
    /// `\r\n`) unescaped directly into the new string's storage.
    private mutating func string() -> String? {
        guard let (literal, escaped) = literal() else { return nil }
        return escaped ? unescaped(literal) : String(decoding: literal, as: UTF8.self)
    }

    /// The next string literal's bytes between its quotes, still escaped, and whether it has
    /// an escape; `i` moves past the closing quote.
    private mutating func literal() -> (bytes: UnsafeBufferPointer<UInt8>, escaped: Bool)? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = i
        // Find the closing quote; an escape's second byte is never the end. Words of 8
        // bytes without `"`, `\` or a control byte are skipped whole (an SDP is ~3 KB), and
        // a word that holds one is skipped up to it (``JSONWriter/escapeOffset(_:)``).
        var end = i
        var escaped = false
        var closed = false
        while end < bytes.count {
            if bytes.count - end >= 8, let base = bytes.baseAddress {
                let skip = JSONWriter.escapeOffset(UnsafeRawPointer(base + end).loadUnaligned(as: UInt64.self))
                end += skip
                if skip == 8 { continue }
            }
            // The byte at `end`: the one a word test found, or one of the last 7.
            let b = bytes[end]
            if b == UInt8(ascii: "\"") { closed = true; break }
            if b < 0x20 { return nil }
            if b == UInt8(ascii: "\\") { escaped = true; end += 2 } else { end += 1 }
        }
        guard closed, end < bytes.count else { return nil }
        let literal = UnsafeBufferPointer(rebasing: bytes[start ..< end])
        i = end + 1
        lastLiteral = start - 1 ..< end + 1
        lastStringCanonical = true
        return (literal, escaped)
    }

    /// `literal` (from ``literal()``, with at least one escape) unescaped, or nil when an
    /// escape is invalid; sets ``lastStringCanonical``.
    private mutating func unescaped(_ literal: UnsafeBufferPointer<UInt8>) -> String? {
        // Unescaping never lengthens: a 2-byte escape gives 1 byte, `\uXXXX` (6 bytes) at most
        // 3 UTF-8 bytes, a surrogate pair (12 bytes) 4. So `literal.count` bytes of storage
        // always suffice, and every write below is at an index < `n` + (bytes the escape being
        // written consumed from `literal`), i.e. < literal.count.
        var valid = true
        var canonical = true
        let text = String(unsafeUninitializedCapacity: literal.count) { out -> Int in
            var n = 0
            var k = 0
            while k < literal.count {
                // 8 bytes are copied as one word; when they hold a backslash or control byte
                // (no `"` is inside `literal`), only those before it count, and the byte
                // itself is done below. Bounds: n <= k (unescaping never lengthens), and
                // k + 8 <= literal.count, the capacity of `out`.
                if literal.count - k >= 8, let from = literal.baseAddress, let to = out.baseAddress {
                    let word = UnsafeRawPointer(from + k).loadUnaligned(as: UInt64.self)
                    UnsafeMutableRawPointer(to + n).storeBytes(of: word, as: UInt64.self)
                    let plain = JSONWriter.escapeOffset(word)
                    n += plain; k += plain
                    if plain == 8 { continue }
                }
                let b = literal[k]
                guard b == UInt8(ascii: "\\") else {
                    if b < 0x20 { valid = false; return 0 }
                    out[n] = b; n += 1; k += 1
                    continue
                }
                // The scan above stopped at the closing quote only outside an escape, so a
                // backslash here always has a next byte inside `literal`.
                guard k + 1 < literal.count else { valid = false; return 0 }
                let e = literal[k + 1]
                k += 2
                let byte: UInt8
                switch e {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): byte = e
                case UInt8(ascii: "/"): byte = e; canonical = false
                case UInt8(ascii: "b"): byte = 0x08; canonical = false
                case UInt8(ascii: "f"): byte = 0x0C; canonical = false
                case UInt8(ascii: "n"): byte = 0x0A
                case UInt8(ascii: "r"): byte = 0x0D
                case UInt8(ascii: "t"): byte = 0x09
                case UInt8(ascii: "u"):
                    guard var code = Self.hex4(literal, at: k) else { valid = false; return 0 }
                    // The writer's `\u` escapes: `00` and a lowercase hex pair, for a byte
                    // below 0x20 that has no short escape.
                    if canonical, !(code < 0x20 && code != 0x09 && code != 0x0A && code != 0x0D
                                    && Self.isLowercaseHex4(literal, at: k)) {
                        canonical = false
                    }
                    k += 4
                    if (0xD800 ... 0xDBFF).contains(code) {
                        guard k + 1 < literal.count, literal[k] == UInt8(ascii: "\\"), literal[k + 1] == UInt8(ascii: "u"),
                              let low = Self.hex4(literal, at: k + 2), (0xDC00 ... 0xDFFF).contains(low) else {
                            valid = false; return 0
                        }
                        k += 6
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00 ... 0xDFFF).contains(code) {
                        valid = false; return 0
                    }
                    guard let scalar = Unicode.Scalar(code), let units = UTF8.encode(scalar) else { valid = false; return 0 }
                    for unit in units { out[n] = unit; n += 1 }
                    continue
                default:
                    valid = false; return 0
                }
                out[n] = byte; n += 1
            }
            return n
        }
        lastStringCanonical = canonical
        return valid ? text : nil
    }

    /// Whether the four hex digits at `at` (already read by ``hex4(_:at:)``) use no
    /// uppercase letter, as ``JSONWriter`` writes them.
    private static func isLowercaseHex4(_ literal: UnsafeBufferPointer<UInt8>, at start: Int) -> Bool {
        for k in start ..< start + 4 where literal[k] >= UInt8(ascii: "A") && literal[k] <= UInt8(ascii: "F") {
            return false
        }
        return true
    }

    /// Four hex digits at `at` in `literal`, or nil (too short, not hex).
    private static func hex4(_ literal: UnsafeBufferPointer<UInt8>, at start: Int) -> UInt32? {
        guard start >= 0, literal.count - start >= 4 else { return nil }
        var value: UInt32 = 0
        for k in start ..< start + 4 {
            let b = literal[k]
            let digit: UInt32
            switch b {
            case UInt8(ascii: "0") ... UInt8(ascii: "9"): digit = UInt32(b - UInt8(ascii: "0"))
            case UInt8(ascii: "a") ... UInt8(ascii: "f"): digit = UInt32(b - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A") ... UInt8(ascii: "F"): digit = UInt32(b - UInt8(ascii: "A") + 10)
            default: return nil
            }
            value = value << 4 | digit
        }
        return value
    }
}
