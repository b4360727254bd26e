/// Builds the SFU's answer to a participant's offer (JSEP answer rules, RFC 8829 §5.3; offer/answer,
/// RFC 3264 §6), as an ICE-lite (RFC 8445 §2.5), DTLS-server (`a=setup:passive`, RFC 5763 §5),
/// BUNDLE (RFC 9143) endpoint.
///
/// Payload types and header extension ids are the offerer's (RFC 3264 §6.1, RFC 8285 §7);
/// the resulting ``CodecMap`` records them for the forwarder.
public struct SFUAnswerBuilder: Sendable {
    public var transport: SFUTransportParameters
    /// Codecs the server forwards; the answer contains the intersection with the offer.
    public var codecs: [SFUCodec]
    /// `o=` session id (decimal digits, RFC 8866 §5.2) and version; bump the version on every
    /// new answer in the same session (RFC 3264 §8).
    public var sessionID: String
    public var sessionVersion: UInt64
    /// What the server wants for a section when ``directions`` has no entry: recvonly for a
    /// publisher, so sendonly and sendrecv offers are answered recvonly.
    public var defaultDirection: Direction
    /// Per-mid wanted direction; the answer is this limited by the offer (RFC 3264 §6.1).
    public var directions: [String: Direction]
    /// Tracks the server sends on sections whose answered direction includes send.
    public var sendingTracks: [String: ForwardedTrack]

    public init(
        transport: SFUTransportParameters, codecs: [SFUCodec] = SFUCodec.allCases, sessionID: String,
        sessionVersion: UInt64 = 1, defaultDirection: Direction = .recvonly, directions: [String: Direction] = [:],
        sendingTracks: [String: ForwardedTrack] = [:]
    ) {
        self.transport = transport
        self.codecs = codecs
        self.sessionID = sessionID
        self.sessionVersion = sessionVersion
        self.defaultDirection = defaultDirection
        self.directions = directions
        self.sendingTracks = sendingTracks
    }

    /// Parses `offerText` and answers it.
    public func answer(toOfferText offerText: String) throws(SFUNegotiationError) -> SFUAnswer {
        let offer: SessionDescription
        do { offer = try SessionDescription(parsing: offerText) } catch { throw .invalidSDP(error) }
        return try answer(to: offer)
    }

    public func answer(to offer: SessionDescription) throws(SFUNegotiationError) -> SFUAnswer {
        do { try offer.validateWebRTCAttributes() } catch { throw .invalidSDP(error) }
        let offeredBundle: MediaGroup?
        do { offeredBundle = try offer.bundleGroup() } catch { throw .invalidSDP(error) }

        var sections: [MediaDescription] = []
        var negotiated: [NegotiatedSection] = []
        var codecMap = CodecMap()
        var seenMids: Set<String> = []
        for (index, offered) in offer.media.enumerated() {
            guard let mid = offered.mid else { throw .missingMid(sectionIndex: index) }
            guard seenMids.insert(mid).inserted else { throw .duplicateMid(mid) }
            let details: OfferedSection
            do { details = try OfferedSection(offered, in: offer) } catch { throw .invalidSDP(error) }
            let result = try answerSection(offered, details, mid: mid)
            sections.append(result.0)
            negotiated.append(result.1)
            for entry in result.1.codecs { codecMap.add(entry) }
        }

        var attributes = [SDPAttribute("ice-lite")]
        let acceptedMids = negotiated.filter(\.isAccepted).map(\.mid)
        if let offeredBundle {
            // RFC 9143 §7.3.1: the answer's group lists the accepted mids of the offered group.
            let bundled = offeredBundle.mids.filter { acceptedMids.contains($0) }
            if !bundled.isEmpty {
                attributes.append(SDPAttribute("group", MediaGroup(semantics: "BUNDLE", mids: bundled).attributeValue))
            }
        }
        if offer.extmapAllowMixed { attributes.append(SDPAttribute("extmap-allow-mixed")) }
        attributes.append(SDPAttribute("msid-semantic", " WMS *"))

        let description = SessionDescription(
            origin: Origin(sessionID: sessionID, sessionVersion: String(sessionVersion)),
            attributes: attributes, media: sections)
        return SFUAnswer(description: description, codecMap: codecMap, sections: negotiated)
    }

    private func answerSection(
        _ offered: MediaDescription, _ details: OfferedSection, mid: String
    ) throws(SFUNegotiationError) -> (MediaDescription, NegotiatedSection) {
        var info = NegotiatedSection(
            mid: mid, media: offered.media, kind: offered.kind, direction: .inactive, rejection: nil, codecs: [],
            headerExtensions: [:], receivedRIDs: [], remoteSSRCs: details.ssrcs,
            remoteSSRCGroups: details.ssrcGroups, remoteMSID: details.msid)

        func reject(_ reason: NegotiatedSection.Rejection) -> (MediaDescription, NegotiatedSection) {
            info.rejection = reason
            // RFC 8829 §5.3.1: a rejected section keeps its media type, proto and mid. The
            // transport lines are kept too: aiortc 1.16 refuses any answer section without
            // ice-ufrag/ice-pwd, a DTLS role, and (audio/video) rtcp-mux, rejected or not.
            var section = MediaDescription(
                media: offered.media, port: 0, proto: offered.proto, formats: offered.formats,
                connections: [Connection(address: "0.0.0.0")])
            section.attributes += transport.transportAttributes(setup: .passive)
            section.addAttribute("mid", mid)
            section.addAttribute(Direction.inactive.rawValue)
            if offered.kind == .audio || offered.kind == .video { section.addAttribute("rtcp-mux") }
            return (section, info)
        }

        if offered.isRejected { return reject(.rejectedByOfferer) }
        guard let kind = offered.kind, kind != .application, offered.proto == "UDP/TLS/RTP/SAVPF" else {
            return reject(.unsupportedMedia)
        }
        guard offered.rtcpMux else { return reject(.noRTCPMux) }
        guard details.hasICECredentials else { throw .missingICECredentials(mid: mid) }
        guard !details.fingerprints.isEmpty else { throw .missingFingerprint(mid: mid) }
        if details.setup == .passive { throw .unsupportedSetup(mid: mid) }

        // Codecs: the offer's order and numbers, only those the SFU forwards.
        let formats = details.formats
        var accepted: [PayloadFormat] = []
        for format in formats {
            guard let codec = codecs.first(where: { $0.kind == kind && $0.matches(format) }) else { continue }
            let rtx = codec.usesRTX ? formats.first { $0.associatedPayloadType == format.payloadType } : nil
            info.codecs.append(CodecMap.Entry(codec: codec, payloadType: format.payloadType, rtxPayloadType: rtx?.payloadType))
            accepted.append(format)
        }
        guard !info.codecs.isEmpty else { return reject(.noCommonCodec) }

        let wanted = directions[mid] ?? defaultDirection
        let direction = offered.direction.answerLimited(to: wanted)
        info.direction = direction
        let address = transport.defaultAddress

        var payloadTypes: [String] = []
        var codecLines: [SDPAttribute] = []
        for entry in info.codecs {
            let codec = entry.codec
            let offeredFeedback = Set(accepted.first { $0.payloadType == entry.payloadType }?.feedback.map(\.kind) ?? [])
            payloadTypes.append(String(entry.payloadType))
            codecLines.append(SDPAttribute("rtpmap", RTPMap(
                payloadType: entry.payloadType, encodingName: codec.encodingName, clockRate: codec.clockRate,
                channels: codec.channels).attributeValue))
            for feedback in codec.feedback where offeredFeedback.contains(feedback) {
                codecLines.append(SDPAttribute("rtcp-fb", "\(entry.payloadType) " + feedback))
            }
            if let parameters = codec.formatParameters {
                codecLines.append(SDPAttribute("fmtp", "\(entry.payloadType) " + parameters))
            }
            if let rtx = entry.rtxPayloadType {
                payloadTypes.append(String(rtx))
                codecLines.append(SDPAttribute("rtpmap", "\(rtx) rtx/\(codec.clockRate)"))
                codecLines.append(SDPAttribute("fmtp", "\(rtx) apt=\(entry.payloadType)"))
            }
        }

        var section = MediaDescription(
            media: offered.media, port: address.port, proto: offered.proto, formats: payloadTypes,
            connections: [Connection(address: address.address)])
        section.attributes += transport.transportAttributes(setup: .passive)
        section.addAttribute("mid", mid)

        let supportedURIs = SFUCodec.headerExtensions(for: kind)
        for offeredExtension in details.headerExtensions {
            guard let known = offeredExtension.knownURI, supportedURIs.contains(known),
                  info.headerExtensions[known] == nil else { continue }
            // Keep the offer's id (RFC 8285 §7); an offered direction is answered mirrored.
            let answered = HeaderExtension(id: offeredExtension.id, direction: offeredExtension.direction?.reversed,
                                           uri: offeredExtension.uri)
            info.headerExtensions[known] = offeredExtension.id
            section.addAttribute("extmap", answered.attributeValue)
        }

        section.addAttribute(direction.rawValue)
        let track = direction.sends ? sendingTracks[mid] : nil
        let trackLines = track?.attributes(rtx: info.codecs.contains { $0.rtxPayloadType != nil })
        if let trackLines { section.attributes.append(trackLines.msid) }
        section.addAttribute("rtcp-mux")
        if offered.rtcpReducedSize { section.addAttribute("rtcp-rsize") }
        section.attributes += codecLines

        // Simulcast (RFC 8853 §5.3): receive the offered send streams whose rids are declared
        // (RFC 8851 §10) and usable with the accepted payload types.
        if direction.receives, let simulcast = details.simulcast, !simulcast.send.isEmpty,
           info.headerExtensions[.rid] != nil {
            let acceptedTypes = Set(info.codecs.map(\.payloadType))
            let rids = details.rids.filter { $0.direction == .send }
            var ridLines: [SDPAttribute] = []
            var streams: [[Simulcast.Stream]] = []
            for alternatives in simulcast.send {
                let kept = alternatives.filter { stream in
                    guard let rid = rids.first(where: { $0.id == stream.rid }) else { return false }
                    return rid.payloadTypes.isEmpty || rid.payloadTypes.contains { acceptedTypes.contains($0) }
                }
                guard !kept.isEmpty else { continue }
                streams.append(kept)
                for stream in kept {
                    guard let rid = rids.first(where: { $0.id == stream.rid }) else { continue }
                    let answered = RIDDescription(id: rid.id, direction: .recv,
                                                  payloadTypes: rid.payloadTypes.filter { acceptedTypes.contains($0) })
                    ridLines.append(SDPAttribute("rid", answered.attributeValue))
                    info.receivedRIDs.append(rid.id)
                }
            }
            if !streams.isEmpty {
                section.attributes += ridLines
                section.addAttribute("simulcast", Simulcast(recv: streams).attributeValue)
            }
        }
        if let trackLines { section.attributes += trackLines.ssrc }
        section.attributes += transport.candidateAttributes()
        return (section, info)
    }
}

/// The answer text's model, the payload types it agreed, and per-section details.
public struct SFUAnswer: Sendable, Equatable {
    public var description: SessionDescription
    public var codecMap: CodecMap
    public var sections: [NegotiatedSection]

    public var sdp: String { description.serialized }
}

/// Everything the answer reads from one offered section, parsed up front so that a malformed
/// attribute surfaces as one ``SDPError`` with its line.
private struct OfferedSection {
    var hasICECredentials: Bool
    var fingerprints: [Fingerprint]
    var setup: DTLSSetup?
    var formats: [PayloadFormat]
    var headerExtensions: [HeaderExtension]
    var simulcast: Simulcast?
    var rids: [RIDDescription]
    var ssrcs: [UInt32]
    var ssrcGroups: [SSRCGroup]
    var msid: MediaStreamID?

    init(_ section: MediaDescription, in offer: SessionDescription) throws(SDPError) {
        hasICECredentials = offer.iceUfrag(for: section) != nil && offer.icePwd(for: section) != nil
        fingerprints = try offer.fingerprints(for: section)
        setup = try offer.setup(for: section)
        formats = try section.payloadFormats()
        headerExtensions = try offer.headerExtensions(for: section)
        simulcast = try section.simulcast()
        rids = try section.rids()
        ssrcs = try section.ssrcs()
        ssrcGroups = try section.ssrcGroups()
        msid = try section.msids().first
    }
}
