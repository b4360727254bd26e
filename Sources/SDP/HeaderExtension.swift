/// `a=extmap:<id>[/<direction>] <URI> [<attributes>]` (RFC 8285 §8).
public struct HeaderExtension: Sendable, Hashable {
    /// 1–14 for one-byte headers, up to 255 with two-byte headers (RFC 8285 §4.2–4.3).
    public var id: UInt8
    public var direction: Direction?
    public var uri: String
    public var extensionAttributes: String?

    public init(id: UInt8, direction: Direction? = nil, uri: String, extensionAttributes: String? = nil) {
        self.id = id
        self.direction = direction
        self.uri = uri
        self.extensionAttributes = extensionAttributes
    }

    public init(attributeValue: String, line: Int? = nil) throws(SDPError) {
        let error = SDPError.invalidAttribute(line: line, name: "extmap")
        let fields = attributeValue.split(separator: " ", maxSplits: 2)
        guard fields.count >= 2 else { throw error }
        let idParts = fields[0].split(separator: "/", omittingEmptySubsequences: false)
        guard idParts.count <= 2, let id = UInt8(idParts[0]), id >= 1 else { throw error }
        var direction: Direction?
        if idParts.count == 2 {
            guard let parsed = Direction(rawValue: String(idParts[1])) else { throw error }
            direction = parsed
        }
        self.init(id: id, direction: direction, uri: String(fields[1]),
                  extensionAttributes: fields.count == 3 ? String(fields[2]) : nil)
    }

    public var attributeValue: String {
        var text = String(id)
        if let direction { text += "/" + direction.rawValue }
        text += " " + uri
        if let extensionAttributes { text += " " + extensionAttributes }
        return text
    }

    /// The RTP header extension URIs the SFU understands.
    public enum KnownURI: String, Sendable, Hashable, CaseIterable {
        /// RFC 9143 §15.
        case mid = "urn:ietf:params:rtp-hdrext:sdes:mid"
        /// RFC 8852 §3.1.
        case rid = "urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id"
        /// RFC 8852 §3.2.
        case repairedRID = "urn:ietf:params:rtp-hdrext:sdes:repaired-rtp-stream-id"
        /// RFC 6464.
        case audioLevel = "urn:ietf:params:rtp-hdrext:ssrc-audio-level"
        /// webrtc.org abs-send-time (used by goog-remb).
        case absSendTime = "http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time"
        /// draft-holmer-rmcat-transport-wide-cc-extensions-01.
        case transportWideCC = "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"
    }

    public var knownURI: KnownURI? { KnownURI(rawValue: uri) }
}
