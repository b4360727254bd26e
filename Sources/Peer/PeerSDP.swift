import SDP

/// Builds the synthetic peer's descriptions (JSEP, RFC 8829), as Chromium shapes them:
/// Unified Plan, one BUNDLE group (RFC 9143), rtcp-mux (RFC 5761), the mid header extension
/// (RFC 9143 §15), msid (RFC 8830) and ssrc lines (RFC 5576). Pure: no clock, no I/O.
public enum PeerSDP {
    /// RFC 8843 / Chromium: the mid extension's id in Chromium's offers.
    public static let midExtensionID: UInt8 = 4
    /// Chromium: the ssrc-audio-level extension's id in its offers (RFC 6464).
    public static let audioLevelExtensionID: UInt8 = 1
    static let proto = "UDP/TLS/RTP/SAVPF"

    /// One media section of an offer, in m-line order.
    public enum OfferSection: Sendable, Equatable {
        /// One of our tracks (sendrecv: the SFU answers recvonly, RFC 8829 §5.3.1; an echo
        /// harness may answer sendrecv).
        case send(PeerTrack)
        /// A section the other side added (a forwarded track) that we keep receiving on.
        case receive(mid: String, codec: PeerTrack.Codec, payloadType: UInt8, midExtensionID: UInt8?)
        /// A section that stays in the m-line list but is stopped (port 0).
        case rejected(mid: String, media: String)
    }

    /// An initial offer for `tracks`. `a=setup:actpass` as RFC 5763 §5 requires of offers.
    public static func offer(transport: PeerTransport, tracks: [PeerTrack], sessionID: String,
                             sessionVersion: UInt64) -> String {
        offer(transport: transport, sections: tracks.map { .send($0) }, sessionID: sessionID, sessionVersion: sessionVersion)
    }

    /// An offer with explicit sections: a subsequent offer keeps every m-line of the current
    /// session in its order (RFC 8829 §5.2.2), with ours sending and the rest receiving.
    public static func offer(transport: PeerTransport, sections: [OfferSection], sessionID: String,
                             sessionVersion: UInt64) -> String {
        var media: [MediaDescription] = []
        var bundle: [String] = []
        var streamIDs: [String] = []
        for spec in sections {
            switch spec {
            case .send(let track):
                media.append(section(for: track, mid: track.mid, codec: track.codec, transport: transport, setup: .actpass,
                                     direction: .sendrecv, payloadType: track.codec.defaultPayloadType, midExtensionID: midExtensionID,
                                     audioLevelExtensionID: track.codec == .opus ? audioLevelExtensionID : nil,
                                     rtxPayloadType: track.rtxSSRC == nil ? nil : PeerTrack.rtxPayloadType))
                bundle.append(track.mid)
                streamIDs.append(track.streamID)
            case .receive(let mid, let codec, let payloadType, let midExtensionID):
                media.append(section(for: nil, mid: mid, codec: codec, transport: transport, setup: .actpass,
                                     direction: .recvonly, payloadType: payloadType, midExtensionID: midExtensionID))
                bundle.append(mid)
            case .rejected(let mid, let kind):
                media.append(MediaDescription(media: kind, port: 0, proto: proto, formats: ["0"],
                                              connections: [Connection(address: "0.0.0.0")],
                                              attributes: [SDPAttribute("mid", mid), SDPAttribute("inactive")]))
            }
        }
        return description(sessionID: sessionID, sessionVersion: sessionVersion, bundle: bundle, streamIDs: streamIDs,
                           media: media).serialized
    }

    /// Answers an offer (a server-initiated renegotiation, RFC 8829 §5.3): every section whose
    /// mid is one of `tracks` is answered with that track (sending when the offer receives),
    /// every other section recvonly when the offer sends (the SFU's forwarded tracks), with the
    /// offer's payload type for Opus or VP8 and its id for the mid extension. Sections with no
    /// codec we handle, or offered with port 0, are rejected with port 0 (RFC 3264 §6).
    /// `acceptRTX`: keep an offered RTX format (RFC 4588 §8) for VP8 in the answer.
    public static func answer(to offer: SessionDescription, transport: PeerTransport, tracks: [PeerTrack],
                              setup: DTLSSetup, sessionID: String, sessionVersion: UInt64,
                              acceptRTX: Bool = false) throws(PeerError) -> String {
        var media: [MediaDescription] = []
        var accepted: [String] = []
        for (index, offered) in offer.media.enumerated() {
            guard let mid = offered.mid else { throw .invalidRemoteDescription("section \(index) has no mid") }
            let track = tracks.first { $0.mid == mid }
            let codec: PeerTrack.Codec? = offered.kind == .audio ? .opus : offered.kind == .video ? .vp8 : nil
            let payloadType: UInt8?
            let extensions: [HeaderExtension]
            var rtxPayloadType: UInt8?
            do {
                payloadType = try codec.flatMap { codec in try offered.payloadFormats().first { matches($0, codec) }?.payloadType }
                if acceptRTX, codec == .vp8, let payloadType {
                    rtxPayloadType = try offered.payloadFormats().first { $0.associatedPayloadType == payloadType }?.payloadType
                }
                extensions = try offer.headerExtensions(for: offered)
            } catch {
                throw .invalidRemoteDescription("section \(mid): \(error)")
            }
            guard !offered.isRejected, let codec, let payloadType else {
                media.append(MediaDescription(media: offered.media, port: 0, proto: offered.proto, formats: offered.formats,
                                              connections: [Connection(address: "0.0.0.0")],
                                              attributes: [SDPAttribute("mid", mid), SDPAttribute("inactive")]))
                continue
            }
            let wanted: Direction = track != nil ? .sendonly : .recvonly
            let direction = offered.direction.answerLimited(to: wanted)
            let midID = extensions.first { $0.knownURI == .mid }?.id
            // RFC 8285 §7: an offered extension is answered with the offer's id.
            let audioLevelID = codec == .opus ? extensions.first { $0.knownURI == .audioLevel }?.id : nil
            let answered = track.map { original -> PeerTrack in
                var answered = PeerTrack(mid: mid, codec: codec, ssrc: original.ssrc, streamID: original.streamID,
                                         trackID: original.trackID, cname: original.cname,
                                         rtxSSRC: rtxPayloadType == nil ? nil : original.rtxSSRC)
                answered.simulcastSSRCs = codec == .vp8 ? original.simulcastSSRCs : []  // keep the layers on renegotiation
                return answered
            }
            media.append(section(for: answered, mid: mid, codec: codec, transport: transport, setup: setup,
                                 direction: direction, payloadType: payloadType, midExtensionID: midID,
                                 audioLevelExtensionID: audioLevelID, rtxPayloadType: rtxPayloadType))
            accepted.append(mid)
        }
        return description(sessionID: sessionID, sessionVersion: sessionVersion, bundle: accepted,
                           streamIDs: tracks.map(\.streamID), media: media).serialized
    }

    static func matches(_ format: PayloadFormat, _ codec: PeerTrack.Codec) -> Bool {
        guard let map = format.rtpMap else { return false }
        switch codec {
        case .opus: return map.normalizedName == "opus" && map.clockRate == 48_000
        case .vp8: return map.normalizedName == "vp8" && map.clockRate == 90_000
        }
    }

    static func description(sessionID: String, sessionVersion: UInt64, bundle: [String], streamIDs: [String],
                            media: [MediaDescription]) -> SessionDescription {
        var attributes: [SDPAttribute] = []
        if !bundle.isEmpty { attributes.append(SDPAttribute("group", MediaGroup(semantics: "BUNDLE", mids: bundle).attributeValue)) }
        // Stream ids are escaped into SDP tokens (RFC 8830 §2): "alice/laptop" → "alice%2Flaptop".
        let streams = Array(Set(streamIDs.map(SDPToken.escape))).sorted()
        attributes.append(SDPAttribute("msid-semantic", " WMS" + (streams.isEmpty ? " *" : streams.map { " " + $0 }.joined())))
        return SessionDescription(origin: Origin(sessionID: sessionID, sessionVersion: String(sessionVersion)),
                                  attributes: attributes, media: media)
    }

    static func section(for track: PeerTrack, transport: PeerTransport, setup: DTLSSetup, direction: Direction,
                        payloadType: UInt8, midExtensionID: UInt8?, audioLevelExtensionID: UInt8? = nil) -> MediaDescription {
        section(for: track, mid: track.mid, codec: track.codec, transport: transport, setup: setup, direction: direction,
                payloadType: payloadType, midExtensionID: midExtensionID, audioLevelExtensionID: audioLevelExtensionID)
    }

    /// One bundled media section; `track` adds msid and ssrc lines when the section sends.
    /// `rtxPayloadType` adds an RTX format for it (RFC 4588 §8.6: `rtx/90000` with `apt`).
    static func section(for track: PeerTrack?, mid: String, codec: PeerTrack.Codec, transport: PeerTransport,
                        setup: DTLSSetup, direction: Direction, payloadType: UInt8, midExtensionID: UInt8?,
                        audioLevelExtensionID: UInt8? = nil, rtxPayloadType: UInt8? = nil) -> MediaDescription {
        var a: [SDPAttribute] = [SDPAttribute("rtcp", "9 IN IP4 0.0.0.0")]
        a += transport.candidates.map { SDPAttribute("candidate", $0) }
        // No trickle: every candidate is in the description (the SFU never trickles either).
        a.append(SDPAttribute("end-of-candidates"))
        a += [SDPAttribute("ice-ufrag", transport.iceUfrag), SDPAttribute("ice-pwd", transport.icePwd),
              SDPAttribute("fingerprint", transport.fingerprint), SDPAttribute("setup", setup.rawValue),
              SDPAttribute("mid", mid)]
        if let audioLevelExtensionID {
            a.append(SDPAttribute("extmap", "\(audioLevelExtensionID) \(HeaderExtension.KnownURI.audioLevel.rawValue)"))
        }
        if let midExtensionID {
            a.append(SDPAttribute("extmap", "\(midExtensionID) \(HeaderExtension.KnownURI.mid.rawValue)"))
        }
        a.append(SDPAttribute(direction.rawValue))
        let sends = direction.sends
        if sends, let track { a.append(SDPAttribute("msid", "\(SDPToken.escape(track.streamID)) \(SDPToken.escape(track.trackID))")) }
        a.append(SDPAttribute("rtcp-mux"))
        a.append(SDPAttribute("rtpmap", "\(payloadType) \(codec.rtpMap)"))
        switch codec {
        case .opus:
            a.append(SDPAttribute("rtcp-fb", "\(payloadType) transport-cc"))
            // RFC 7587 §6.1: useinbandfec=1 tells the sender we decode in-band FEC.
            a.append(SDPAttribute("fmtp", "\(payloadType) minptime=10;useinbandfec=1"))
        case .vp8:
            a.append(SDPAttribute("rtcp-rsize"))
            for feedback in ["goog-remb", "transport-cc", "ccm fir", "nack", "nack pli"] {
                a.append(SDPAttribute("rtcp-fb", "\(payloadType) \(feedback)"))
            }
            if let rtxPayloadType {
                a.append(SDPAttribute("rtpmap", "\(rtxPayloadType) rtx/\(codec.clockRate)"))
                a.append(SDPAttribute("fmtp", "\(rtxPayloadType) apt=\(payloadType)"))
            }
        }
        var formats = [String(payloadType)]
        if codec == .vp8, let rtxPayloadType { formats.append(String(rtxPayloadType)) }
        if sends, let track {
            // RFC 5576 §4.2 / RFC 4588 §8.7: the RTX SSRC is paired with the media SSRC by FID.
            let rtx = track.rtxSSRC.flatMap { rtxPayloadType == nil ? nil : $0 }
            if let rtx { a.append(SDPAttribute("ssrc-group", "FID \(track.ssrc) \(rtx)")) }
            // RFC 5576 §4.2 SIM group (Chromium's SDP-munged simulcast): layers lowest first.
            let layers = track.mediaSSRCs
            if layers.count > 1 { a.append(SDPAttribute("ssrc-group", "SIM " + layers.map(String.init).joined(separator: " "))) }
            for ssrc in layers + (rtx.map { [$0] } ?? []) {
                a.append(SDPAttribute("ssrc", "\(ssrc) cname:\(SDPToken.escape(track.cname))"))
                a.append(SDPAttribute("ssrc", "\(ssrc) msid:\(SDPToken.escape(track.streamID)) \(SDPToken.escape(track.trackID))"))
            }
        }
        return MediaDescription(media: codec.kind.rawValue, port: 9, proto: proto, formats: formats,
                                connections: [Connection(address: "0.0.0.0")], attributes: a)
    }
}
