/// The server side of the transport that every SFU description carries: ICE-lite credentials,
/// the DTLS certificate fingerprint and the host candidates of the single shared UDP port.
public struct SFUTransportParameters: Sendable, Equatable {
    /// RFC 8839 §5.4: at least 4 ice-chars.
    public var iceUfrag: String
    /// RFC 8839 §5.4: at least 22 ice-chars.
    public var icePwd: String
    public var fingerprint: Fingerprint
    /// Host candidates, usually one: the announced address and the shared port.
    public var candidates: [ICECandidate]

    public init(iceUfrag: String, icePwd: String, fingerprint: Fingerprint, candidates: [ICECandidate]) {
        self.iceUfrag = iceUfrag
        self.icePwd = icePwd
        self.fingerprint = fingerprint
        self.candidates = candidates
    }

    /// One host UDP candidate on `address`:`port`.
    public init(iceUfrag: String, icePwd: String, fingerprint: Fingerprint, address: String, port: UInt16) {
        self.init(iceUfrag: iceUfrag, icePwd: icePwd, fingerprint: fingerprint,
                  candidates: [.host(address: address, port: port)])
    }

    /// Connection data and port for `m=`/`c=`: the first candidate's, as ICE-lite servers
    /// (mediasoup, Janus) write them; `9`/`0.0.0.0` (RFC 8840 §4.1.1) when there is none.
    var defaultAddress: (address: String, port: UInt16) {
        guard let first = candidates.first else { return ("0.0.0.0", 9) }
        return (first.address, first.port)
    }

    /// Transport attributes of a bundled media section (RFC 8829 §5.2.1, §5.3.1).
    func transportAttributes(setup: DTLSSetup) -> [SDPAttribute] {
        [SDPAttribute("ice-ufrag", iceUfrag), SDPAttribute("ice-pwd", icePwd),
         SDPAttribute("fingerprint", fingerprint.attributeValue), SDPAttribute("setup", setup.rawValue)]
    }

    func candidateAttributes() -> [SDPAttribute] {
        candidates.map { SDPAttribute("candidate", $0.attributeValue) } + [SDPAttribute("end-of-candidates")]
    }
}

/// A track the server forwards to a subscriber: written as `a=msid` and `a=ssrc` lines
/// (RFC 8830, RFC 5576) so the subscriber's `ontrack` names the right stream.
public struct ForwardedTrack: Sendable, Equatable {
    public var streamID: String
    public var trackID: String
    public var ssrc: UInt32
    public var rtxSSRC: UInt32?
    /// RTCP CNAME (RFC 7022), one per forwarded participant.
    public var cname: String

    public init(streamID: String, trackID: String, ssrc: UInt32, rtxSSRC: UInt32? = nil, cname: String) {
        self.streamID = streamID
        self.trackID = trackID
        self.ssrc = ssrc
        self.rtxSSRC = rtxSSRC
        self.cname = cname
    }

    /// msid, ssrc-group FID and ssrc lines, in Chromium's order.
    func attributes(rtx: Bool) -> (msid: SDPAttribute, ssrc: [SDPAttribute]) {
        let msid = MediaStreamID(streamID: streamID, trackID: trackID).attributeValue
        var lines: [SDPAttribute] = []
        var ssrcs = [ssrc]
        if rtx, let rtxSSRC {
            lines.append(SDPAttribute("ssrc-group", SSRCGroup(semantics: "FID", ssrcs: [ssrc, rtxSSRC]).attributeValue))
            ssrcs.append(rtxSSRC)
        }
        for value in ssrcs {
            lines.append(SDPAttribute("ssrc", SSRCAttribute(ssrc: value, attribute: "cname", value: cname).attributeValue))
            lines.append(SDPAttribute("ssrc", SSRCAttribute(ssrc: value, attribute: "msid", value: msid).attributeValue))
        }
        return (SDPAttribute("msid", msid), lines)
    }
}
