/// `a=rtpmap:<payload type> <encoding name>/<clock rate>[/<encoding parameters>]`
/// (RFC 8866 §6.6).
public struct RTPMap: Sendable, Hashable {
    public var payloadType: UInt8
    /// As written (`opus`, `VP8`, `H264`, `rtx`); compare with ``normalizedName``.
    public var encodingName: String
    public var clockRate: UInt32
    /// For audio, the channel count.
    public var channels: UInt8?

    public init(payloadType: UInt8, encodingName: String, clockRate: UInt32, channels: UInt8? = nil) {
        self.payloadType = payloadType
        self.encodingName = encodingName
        self.clockRate = clockRate
        self.channels = channels
    }

    public init(attributeValue: String, line: Int? = nil) throws(SDPError) {
        let error = SDPError.invalidAttribute(line: line, name: "rtpmap")
        let fields = attributeValue.split(separator: " ")
        guard fields.count == 2, let payloadType = UInt8(fields[0]), payloadType < 128 else { throw error }
        let parts = fields[1].split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2 || parts.count == 3, !parts[0].isEmpty, let rate = UInt32(parts[1]) else { throw error }
        var channels: UInt8?
        if parts.count == 3 {
            guard let count = UInt8(parts[2]) else { throw error }
            channels = count
        }
        self.init(payloadType: payloadType, encodingName: String(parts[0]), clockRate: rate, channels: channels)
    }

    /// Encoding names are case-insensitive (RFC 4855 §3).
    public var normalizedName: String { encodingName.lowercased() }

    public var attributeValue: String {
        var text = "\(payloadType) \(encodingName)/\(clockRate)"
        if let channels { text += "/\(channels)" }
        return text
    }
}

/// `a=fmtp:<payload type> <parameters>` (RFC 8866 §6.15). Parameters are kept as written; the
/// common `key=value;key=value` form is available through ``parameters``.
public struct FormatParameters: Sendable, Hashable {
    public var payloadType: UInt8
    public var text: String

    public init(payloadType: UInt8, text: String) {
        self.payloadType = payloadType
        self.text = text
    }

    public init(payloadType: UInt8, parameters: [(String, String)]) {
        self.init(payloadType: payloadType, text: parameters.map { $0.0 + "=" + $0.1 }.joined(separator: ";"))
    }

    public init(attributeValue: String, line: Int? = nil) throws(SDPError) {
        guard let space = attributeValue.firstIndex(of: " "),
              let payloadType = UInt8(attributeValue[..<space]), payloadType < 128
        else { throw .invalidAttribute(line: line, name: "fmtp") }
        self.init(payloadType: payloadType, text: String(attributeValue[attributeValue.index(after: space)...]))
    }

    /// `key=value` pairs split on `;` with surrounding spaces trimmed; keys lower-cased
    /// (RFC 6184 §8.1 and RFC 7587 §7 parameter names are case-insensitive). Tokens without `=`
    /// (e.g. RED's `111/111`, telephone-event `0-15`) appear with an empty key.
    public var parameters: [(key: String, value: String)] {
        text.split(separator: ";").map { token in
            let trimmed = token.drop { $0 == " " }
            if let equals = trimmed.firstIndex(of: "=") {
                return (String(trimmed[..<equals]).lowercased(), String(trimmed[trimmed.index(after: equals)...]))
            }
            return ("", String(trimmed))
        }
    }

    public subscript(key: String) -> String? {
        let wanted = key.lowercased()
        return parameters.first { $0.key == wanted }?.value
    }

    public var attributeValue: String { "\(payloadType) \(text)" }
}

/// `a=rtcp-fb:<payload type or *> <type> [<subtype>]` (RFC 4585 §4.2), e.g. `nack pli`,
/// `ccm fir` (RFC 5104), `goog-remb`, `transport-cc`.
public struct RTCPFeedback: Sendable, Hashable {
    /// nil for the `*` wildcard.
    public var payloadType: UInt8?
    public var type: String
    public var parameter: String?

    public init(payloadType: UInt8?, type: String, parameter: String? = nil) {
        self.payloadType = payloadType
        self.type = type
        self.parameter = parameter
    }

    public init(attributeValue: String, line: Int? = nil) throws(SDPError) {
        let error = SDPError.invalidAttribute(line: line, name: "rtcp-fb")
        let fields = attributeValue.split(separator: " ", maxSplits: 2)
        guard fields.count >= 2 else { throw error }
        var payloadType: UInt8?
        if fields[0] != "*" {
            guard let number = UInt8(fields[0]), number < 128 else { throw error }
            payloadType = number
        }
        self.init(payloadType: payloadType, type: String(fields[1]), parameter: fields.count == 3 ? String(fields[2]) : nil)
    }

    /// `type` and `parameter` without the payload type, e.g. `nack pli`.
    public var kind: String { parameter.map { type + " " + $0 } ?? type }

    public var attributeValue: String {
        (payloadType.map(String.init) ?? "*") + " " + kind
    }
}

/// One payload type of a media section with its rtpmap, fmtp and rtcp-fb lines gathered.
public struct PayloadFormat: Sendable, Hashable {
    public var payloadType: UInt8
    /// nil for a static payload type without rtpmap (e.g. PCMU 0 in old offers).
    public var rtpMap: RTPMap?
    public var formatParameters: FormatParameters?
    /// Feedback for this payload type, including `*` wildcard lines.
    public var feedback: [RTCPFeedback]

    public init(payloadType: UInt8, rtpMap: RTPMap?, formatParameters: FormatParameters? = nil, feedback: [RTCPFeedback] = []) {
        self.payloadType = payloadType
        self.rtpMap = rtpMap
        self.formatParameters = formatParameters
        self.feedback = feedback
    }

    /// For an `rtx` format, the payload type it repairs (`apt`, RFC 4588 §8.6).
    public var associatedPayloadType: UInt8? {
        guard rtpMap?.normalizedName == "rtx", let apt = formatParameters?["apt"] else { return nil }
        return UInt8(apt)
    }
}
