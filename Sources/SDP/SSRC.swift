/// `a=ssrc:<ssrc-id> <attribute>[:<value>]` (RFC 5576 §4.1), e.g. `cname:...`, `msid:...`.
public struct SSRCAttribute: Sendable, Hashable {
    public var ssrc: UInt32
    public var attribute: String
    public var value: String?

    public init(ssrc: UInt32, attribute: String, value: String? = nil) {
        self.ssrc = ssrc
        self.attribute = attribute
        self.value = value
    }

    public init(attributeValue: String, line: Int? = nil) throws(SDPError) {
        let error = SDPError.invalidAttribute(line: line, name: "ssrc")
        guard let space = attributeValue.firstIndex(of: " "), let ssrc = UInt32(attributeValue[..<space]) else { throw error }
        let rest = attributeValue[attributeValue.index(after: space)...]
        guard !rest.isEmpty else { throw error }
        if let colon = rest.firstIndex(of: ":") {
            self.init(ssrc: ssrc, attribute: String(rest[..<colon]), value: String(rest[rest.index(after: colon)...]))
        } else {
            self.init(ssrc: ssrc, attribute: String(rest))
        }
    }

    public var attributeValue: String {
        "\(ssrc) " + attribute + (value.map { ":" + $0 } ?? "")
    }
}

/// `a=ssrc-group:<semantics> <ssrc-id> ...` (RFC 5576 §4.2): `FID` pairs a media SSRC with its
/// RTX SSRC (RFC 4588 §8.5), `SIM` lists simulcast layers, `FEC-FR` pairs FlexFEC.
public struct SSRCGroup: Sendable, Hashable {
    public var semantics: String
    public var ssrcs: [UInt32]

    public init(semantics: String, ssrcs: [UInt32]) {
        self.semantics = semantics
        self.ssrcs = ssrcs
    }

    public init(attributeValue: String, line: Int? = nil) throws(SDPError) {
        let fields = attributeValue.split(separator: " ")
        var ssrcs: [UInt32] = []
        for field in fields.dropFirst() {
            guard let ssrc = UInt32(field) else { throw .invalidAttribute(line: line, name: "ssrc-group") }
            ssrcs.append(ssrc)
        }
        guard let semantics = fields.first, !ssrcs.isEmpty else { throw .invalidAttribute(line: line, name: "ssrc-group") }
        self.init(semantics: String(semantics), ssrcs: ssrcs)
    }

    public var attributeValue: String { ([semantics] + ssrcs.map(String.init)).joined(separator: " ") }
}

/// `a=msid:<stream id> [<track id>]` (RFC 8830 §2).
public struct MediaStreamID: Sendable, Hashable {
    /// `-` means no stream (RFC 8829 §5.2.1).
    public var streamID: String
    public var trackID: String?

    public init(streamID: String, trackID: String? = nil) {
        self.streamID = streamID
        self.trackID = trackID
    }

    public init(attributeValue: String, line: Int? = nil) throws(SDPError) {
        let fields = attributeValue.split(separator: " ")
        guard fields.count == 1 || fields.count == 2 else { throw .invalidAttribute(line: line, name: "msid") }
        self.init(streamID: String(fields[0]), trackID: fields.count == 2 ? String(fields[1]) : nil)
    }

    public var attributeValue: String { streamID + (trackID.map { " " + $0 } ?? "") }
}

/// `a=group:<semantics> <mid> ...` (RFC 5888 §5); `BUNDLE` per RFC 9143.
public struct MediaGroup: Sendable, Hashable {
    public var semantics: String
    public var mids: [String]

    public init(semantics: String, mids: [String]) {
        self.semantics = semantics
        self.mids = mids
    }

    public init(attributeValue: String, line: Int? = nil) throws(SDPError) {
        let fields = attributeValue.split(separator: " ")
        guard let semantics = fields.first else { throw .invalidAttribute(line: line, name: "group") }
        self.init(semantics: String(semantics), mids: fields.dropFirst().map(String.init))
    }

    public var attributeValue: String { ([semantics] + mids).joined(separator: " ") }
}
