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
        bytes.withUnsafeBufferPointer { buffer in
            var scanner = FrameScanner(bytes: buffer)
            return scanner.frame()
        }
    }
}

private struct FrameScanner {
    let bytes: UnsafeBufferPointer<UInt8>
    var i = 0

    init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    private enum Field: Int {
        case v, type, eventID, callID, callee, revision, generation, sdp, candidate, sdpMid, sdpMLineIndex
        case ufrag, room, media, invitees, token, cursor
        case publisher, mid, track, maxWidth, maxHeight, maxLayer

        init?(_ key: String) {
            switch key {
            case "v": self = .v
            case "type": self = .type
            case "eventID": self = .eventID
            case "callID": self = .callID
            case "callee": self = .callee
            case "revision": self = .revision
            case "generation": self = .generation
            case "sdp": self = .sdp
            case "candidate": self = .candidate
            case "sdpMid": self = .sdpMid
            case "sdpMLineIndex": self = .sdpMLineIndex
            case "ufrag": self = .ufrag
            case "room": self = .room
            case "media": self = .media
            case "invitees": self = .invitees
            case "token": self = .token
            case "cursor": self = .cursor
            case "publisher": self = .publisher
            case "mid": self = .mid
            case "track": self = .track
            case "maxWidth": self = .maxWidth
            case "maxHeight": self = .maxHeight
            case "maxLayer": self = .maxLayer
            default: return nil
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
            guard let key = string() else { return nil }
            skipSpace()
            guard take(UInt8(ascii: ":")) else { return nil }
            skipSpace()
            if let field = Field(key) {
                let bit: UInt32 = 1 << field.rawValue
                guard seenFields & bit == 0 else { return nil }
                seenFields |= bit
                guard read(field, into: &raw) else { return nil }
            } else {
                guard !unknownKeys.contains(key) else { return nil }
                unknownKeys.append(key)
                guard skipScalar() else { return nil }
            }
            skipSpace()
            if take(UInt8(ascii: ",")) { continue }
            guard take(UInt8(ascii: "}")) else { return nil }
            return end() ? raw : nil
        }
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
            case .sdp: raw.sdp = text
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

    /// A string literal, unescaped (RFC 8259 §7). Runs without escapes are copied in bulk.
    private mutating func string() -> String? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        var out: [UInt8] = []
        var runStart = i
        while i < bytes.count {
            let b = bytes[i]
            if b == UInt8(ascii: "\"") {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart ..< i]))
                i += 1
                return String(decoding: out, as: UTF8.self)
            }
            if b < 0x20 { return nil }
            guard b == UInt8(ascii: "\\") else { i += 1; continue }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart ..< i]))
            i += 1
            guard i < bytes.count else { return nil }
            let e = bytes[i]
            i += 1
            switch e {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                guard var code = hex4() else { return nil }
                if (0xD800 ... 0xDBFF).contains(code) {
                    guard take(UInt8(ascii: "\\")), take(UInt8(ascii: "u")), let low = hex4(), (0xDC00 ... 0xDFFF).contains(low) else {
                        return nil
                    }
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00 ... 0xDFFF).contains(code) {
                    return nil
                }
                guard let scalar = Unicode.Scalar(code) else { return nil }
                out.append(contentsOf: String(Character(scalar)).utf8)
            default:
                return nil
            }
            runStart = i
        }
        return nil
    }

    private mutating func hex4() -> UInt32? {
        guard bytes.count - i >= 4 else { return nil }
        var value: UInt32 = 0
        for _ in 0 ..< 4 {
            let b = bytes[i]
            let digit: UInt32
            switch b {
            case UInt8(ascii: "0") ... UInt8(ascii: "9"): digit = UInt32(b - UInt8(ascii: "0"))
            case UInt8(ascii: "a") ... UInt8(ascii: "f"): digit = UInt32(b - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A") ... UInt8(ascii: "F"): digit = UInt32(b - UInt8(ascii: "A") + 10)
            default: return nil
            }
            value = value << 4 | digit
            i += 1
        }
        return value
    }
}
