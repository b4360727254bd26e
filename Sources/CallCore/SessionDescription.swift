/// An SDP body as the devices exchange it (RFC 8866). The reducer does not parse it beyond
/// the ICE username fragment (RFC 8839 §5.4, `a=ice-ufrag`), which it uses to drop
/// candidates of a replaced ICE session (§4 case 7).
public struct SessionDescription: Codable, Sendable, Equatable {
    public var sdp: String

    public init(sdp: String) {
        self.sdp = sdp
    }

    /// The first `a=ice-ufrag:` value, or nil when the SDP has none. Bundled media share one
    /// ICE session (RFC 9143), so the first one is the session's.
    public var iceUfrag: String? {
        if let fast = Self.asciiIceUfrag(sdp) { return fast }
        return Self.characterIceUfrag(sdp)
    }

    /// The definition: the first line (split at any Unicode newline) starting with
    /// `a=ice-ufrag:`, its value trimmed of spaces and tabs.
    static func characterIceUfrag(_ sdp: String) -> String? {
        let prefix = "a=ice-ufrag:"
        // "\r\n" is one Character in Swift; `isNewline` covers it, "\n" and "\r".
        for rawLine in sdp.split(whereSeparator: { $0.isNewline }) {
            if rawLine.hasPrefix(prefix) {
                let value = rawLine.dropFirst(prefix.count).trimmingSpaces()
                return value.isEmpty ? nil : String(value)
            }
        }
        return nil
    }

    /// `iceUfrag` over the UTF-8 bytes, while every byte read is ASCII other than vertical
    /// tab and form feed — every SDP a browser writes. Up to the end of the `a=ice-ufrag`
    /// line, lines are then exactly the runs between CR/LF bytes and a Character is a byte
    /// (CRLF aside), and what follows that line cannot change where it ends (a grapheme
    /// always breaks after CR and LF), so the result equals the Character-based scan, which
    /// costs a grapheme-breaking pass over the whole ~3 KB SDP (profile: 5 % of the hub's
    /// CPU, docs/benchmarks.md). `nil` when a byte outside that set comes first: the caller
    /// takes the Character-based path; `.some(nil)` when the SDP has no ufrag.
    static func asciiIceUfrag(_ sdp: String) -> String?? {
        var sdp = sdp
        return sdp.withUTF8 { bytes -> String?? in
            let prefix: [UInt8] = Array("a=ice-ufrag:".utf8)
            let cr = UInt8(ascii: "\r"), lf = UInt8(ascii: "\n")
            func plain(_ byte: UInt8) -> Bool { byte < 0x80 && byte != 0x0B && byte != 0x0C }
            var i = 0
            while i < bytes.count {
                // `i` is at the start of a line.
                var end = i
                while end < bytes.count, bytes[end] != cr, bytes[end] != lf {
                    guard plain(bytes[end]) else { return nil }
                    end += 1
                }
                if end - i >= prefix.count, prefix.indices.allSatisfy({ bytes[i + $0] == prefix[$0] }) {
                    var start = i + prefix.count
                    var last = end
                    while start < last, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
                    while last > start, bytes[last - 1] == 0x20 || bytes[last - 1] == 0x09 { last -= 1 }
                    if start == last { return .some(nil) }
                    return .some(String(decoding: UnsafeBufferPointer(rebasing: bytes[start ..< last]), as: UTF8.self))
                }
                i = end
                while i < bytes.count, bytes[i] == cr || bytes[i] == lf { i += 1 }
            }
            return .some(nil)
        }
    }
}

extension Substring {
    fileprivate func trimmingSpaces() -> Substring {
        var s = self
        while let first = s.first, first == " " || first == "\t" { s = s.dropFirst() }
        while let last = s.last, last == " " || last == "\t" { s = s.dropLast() }
        return s
    }
}

/// A trickled ICE candidate (RFC 8838 §4, W3C `RTCIceCandidateInit`). An empty `candidate`
/// is the end-of-candidates indication.
public struct IceCandidate: Codable, Sendable, Equatable {
    public var candidate: String
    public var sdpMid: String?
    public var sdpMLineIndex: Int?
    /// The ufrag of the ICE session this candidate belongs to (RFC 8839 §5.1).
    public var usernameFragment: String?

    public init(candidate: String, sdpMid: String? = nil, sdpMLineIndex: Int? = nil, usernameFragment: String? = nil) {
        self.candidate = candidate
        self.sdpMid = sdpMid
        self.sdpMLineIndex = sdpMLineIndex
        self.usernameFragment = usernameFragment
    }
}
