/// Builds server-initiated offers to subscribers (RFC 8829 §5.2): one `sendonly` section per
/// forwarded track with `a=msid` and `a=ssrc` lines, the server's chosen payload types and
/// header extension ids, ICE-lite and `a=setup:actpass` (RFC 5763 §5: an offer is actpass; the
/// browser answers active and becomes the DTLS client).
public struct SFUOfferBuilder: Sendable {
    /// One media section of a subscriber offer. Keep mids stable across renegotiations
    /// (RFC 8829 §5.2.2): a section whose track left stays with `track == nil` (inactive) or is
    /// stopped (`stopped`, port 0) until it is reused.
    public struct Section: Sendable, Equatable {
        public var mid: String
        public var kind: MediaKind
        public var track: ForwardedTrack?
        public var stopped: Bool

        public init(mid: String, kind: MediaKind, track: ForwardedTrack?, stopped: Bool = false) {
            self.mid = mid
            self.kind = kind
            self.track = track
            self.stopped = stopped
        }
    }

    public var transport: SFUTransportParameters
    /// The payload types the server offers. Defaults follow Chromium 156's numbering (opus 111,
    /// VP8 96/rtx 97, H.264 42e01f 108/rtx 109) so a Chromium publisher's packets usually need no
    /// payload type rewrite.
    public var codecMap: CodecMap
    /// Header extension ids the server offers; defaults follow Chromium 156's numbering.
    public var headerExtensionIDs: [HeaderExtension.KnownURI: UInt8]
    public var sessionID: String
    public var sessionVersion: UInt64

    public static let defaultCodecMap = CodecMap(entries: [
        .init(codec: .opus, payloadType: 111),
        .init(codec: .vp8, payloadType: 96, rtxPayloadType: 97),
        .init(codec: .h264, payloadType: 108, rtxPayloadType: 109),
    ])

    public static let defaultHeaderExtensionIDs: [HeaderExtension.KnownURI: UInt8] = [
        .audioLevel: 1, .absSendTime: 2, .transportWideCC: 3, .mid: 4, .rid: 10, .repairedRID: 11,
    ]

    public init(
        transport: SFUTransportParameters, sessionID: String, sessionVersion: UInt64 = 1,
        codecMap: CodecMap = SFUOfferBuilder.defaultCodecMap,
        headerExtensionIDs: [HeaderExtension.KnownURI: UInt8] = SFUOfferBuilder.defaultHeaderExtensionIDs
    ) {
        self.transport = transport
        self.sessionID = sessionID
        self.sessionVersion = sessionVersion
        self.codecMap = codecMap
        self.headerExtensionIDs = headerExtensionIDs
    }

    public func offer(sections: [Section]) -> SessionDescription {
        let address = transport.defaultAddress
        var media: [MediaDescription] = []
        for spec in sections {
            let entries = codecMap.entries.filter { $0.codec.kind == spec.kind }
            var formats: [String] = []
            var codecLines: [SDPAttribute] = []
            for entry in entries {
                let codec = entry.codec
                formats.append(String(entry.payloadType))
                codecLines.append(SDPAttribute("rtpmap", RTPMap(
                    payloadType: entry.payloadType, encodingName: codec.encodingName, clockRate: codec.clockRate,
                    channels: codec.channels).attributeValue))
                for feedback in codec.feedback { codecLines.append(SDPAttribute("rtcp-fb", "\(entry.payloadType) " + feedback)) }
                if let parameters = codec.formatParameters {
                    codecLines.append(SDPAttribute("fmtp", "\(entry.payloadType) " + parameters))
                }
                if let rtx = entry.rtxPayloadType {
                    formats.append(String(rtx))
                    codecLines.append(SDPAttribute("rtpmap", "\(rtx) rtx/\(codec.clockRate)"))
                    codecLines.append(SDPAttribute("fmtp", "\(rtx) apt=\(entry.payloadType)"))
                }
            }
            if formats.isEmpty || spec.stopped {
                var section = MediaDescription(
                    media: spec.kind.rawValue, port: 0, proto: "UDP/TLS/RTP/SAVPF",
                    formats: formats.isEmpty ? ["0"] : formats, connections: [Connection(address: "0.0.0.0")])
                // Transport and codec lines kept for aiortc 1.16, which requires them in every section.
                section.attributes += transport.transportAttributes(setup: .actpass)
                section.addAttribute("mid", spec.mid)
                section.addAttribute(Direction.inactive.rawValue)
                section.addAttribute("rtcp-mux")
                section.attributes += codecLines
                media.append(section)
                continue
            }
            var section = MediaDescription(
                media: spec.kind.rawValue, port: address.port, proto: "UDP/TLS/RTP/SAVPF", formats: formats,
                connections: [Connection(address: address.address)])
            section.attributes += transport.transportAttributes(setup: .actpass)
            section.addAttribute("mid", spec.mid)
            for uri in SFUCodec.headerExtensions(for: spec.kind) {
                guard let id = headerExtensionIDs[uri] else { continue }
                section.addAttribute("extmap", HeaderExtension(id: id, uri: uri.rawValue).attributeValue)
            }
            let trackLines = spec.track?.attributes(rtx: entries.contains { $0.rtxPayloadType != nil })
            section.addAttribute((trackLines == nil ? Direction.inactive : .sendonly).rawValue)
            if let trackLines { section.attributes.append(trackLines.msid) }
            section.addAttribute("rtcp-mux")
            section.addAttribute("rtcp-rsize")
            section.attributes += codecLines
            if let trackLines { section.attributes += trackLines.ssrc }
            section.attributes += transport.candidateAttributes()
            media.append(section)
        }
        var attributes = [SDPAttribute("ice-lite")]
        let bundled = sections.filter { !$0.stopped }.map(\.mid)
        if !bundled.isEmpty {
            attributes.append(SDPAttribute("group", MediaGroup(semantics: "BUNDLE", mids: bundled).attributeValue))
        }
        attributes.append(SDPAttribute("msid-semantic", " WMS *"))
        return SessionDescription(
            origin: Origin(sessionID: sessionID, sessionVersion: String(sessionVersion)),
            attributes: attributes, media: media)
    }
}
