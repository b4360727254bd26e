/// WebRTC accessors over a media section (JSEP, RFC 8829 §5).
extension MediaDescription {
    /// `a=mid` (RFC 5888 §4, RFC 9143).
    public var mid: String? { attribute(named: "mid")?.value }

    /// `a=rtcp-mux` (RFC 5761 §5.1.1).
    public var rtcpMux: Bool { hasAttribute("rtcp-mux") }

    /// `a=rtcp-rsize` (RFC 5506 §5).
    public var rtcpReducedSize: Bool { hasAttribute("rtcp-rsize") }

    /// `a=end-of-candidates` (RFC 8840 §8.2).
    public var endOfCandidates: Bool { hasAttribute("end-of-candidates") }

    /// `a=msid` lines (RFC 8830 §2).
    public func msids() throws(SDPError) -> [MediaStreamID] {
        try parsedAttributes(named: "msid") { (value, line) throws(SDPError) in
            try MediaStreamID(attributeValue: value, line: line)
        }
    }

    /// `a=candidate` lines (RFC 8839 §5.1).
    public func candidates() throws(SDPError) -> [ICECandidate] {
        try parsedAttributes(named: "candidate") { (value, line) throws(SDPError) in
            try ICECandidate(attributeValue: value, line: line)
        }
    }

    public func rtpMaps() throws(SDPError) -> [RTPMap] {
        try parsedAttributes(named: "rtpmap") { (value, line) throws(SDPError) in
            try RTPMap(attributeValue: value, line: line)
        }
    }

    public func formatParameters() throws(SDPError) -> [FormatParameters] {
        try parsedAttributes(named: "fmtp") { (value, line) throws(SDPError) in
            try FormatParameters(attributeValue: value, line: line)
        }
    }

    public func rtcpFeedback() throws(SDPError) -> [RTCPFeedback] {
        try parsedAttributes(named: "rtcp-fb") { (value, line) throws(SDPError) in
            try RTCPFeedback(attributeValue: value, line: line)
        }
    }

    /// The section's payload types in `m=` order (preference order, RFC 3264 §5.1) with their
    /// rtpmap, fmtp and rtcp-fb lines. Formats that are not payload type numbers (e.g.
    /// `webrtc-datachannel`) are skipped.
    public func payloadFormats() throws(SDPError) -> [PayloadFormat] {
        let maps = try rtpMaps(), parameters = try formatParameters(), feedback = try rtcpFeedback()
        return formats.compactMap { format -> PayloadFormat? in
            guard let payloadType = UInt8(format), payloadType < 128 else { return nil }
            return PayloadFormat(
                payloadType: payloadType,
                rtpMap: maps.first { $0.payloadType == payloadType },
                formatParameters: parameters.first { $0.payloadType == payloadType },
                feedback: feedback.filter { $0.payloadType == payloadType || $0.payloadType == nil })
        }
    }

    /// `a=ssrc` lines (RFC 5576 §4.1).
    public func ssrcAttributes() throws(SDPError) -> [SSRCAttribute] {
        try parsedAttributes(named: "ssrc") { (value, line) throws(SDPError) in
            try SSRCAttribute(attributeValue: value, line: line)
        }
    }

    /// Distinct SSRCs from `a=ssrc` lines in first-seen order.
    public func ssrcs() throws(SDPError) -> [UInt32] {
        var seen: [UInt32] = []
        for attribute in try ssrcAttributes() where !seen.contains(attribute.ssrc) { seen.append(attribute.ssrc) }
        return seen
    }

    /// `a=ssrc-group` lines (RFC 5576 §4.2).
    public func ssrcGroups() throws(SDPError) -> [SSRCGroup] {
        try parsedAttributes(named: "ssrc-group") { (value, line) throws(SDPError) in
            try SSRCGroup(attributeValue: value, line: line)
        }
    }

    /// `a=rid` lines (RFC 8851).
    public func rids() throws(SDPError) -> [RIDDescription] {
        try parsedAttributes(named: "rid") { (value, line) throws(SDPError) in
            try RIDDescription(attributeValue: value, line: line)
        }
    }

    /// `a=simulcast` (RFC 8853); nil when absent.
    public func simulcast() throws(SDPError) -> Simulcast? {
        guard let attribute = attribute(named: "simulcast") else { return nil }
        guard let value = attribute.value else { throw .invalidAttribute(line: attribute.line, name: "simulcast") }
        return try Simulcast(attributeValue: value, line: attribute.line)
    }
}
