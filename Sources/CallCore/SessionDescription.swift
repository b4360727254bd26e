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
