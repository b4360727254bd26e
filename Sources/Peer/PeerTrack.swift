import SDP

/// A track the synthetic peer sends: one media section of its offer.
public struct PeerTrack: Sendable, Equatable {
    public enum Codec: String, Sendable, Equatable {
        /// Opus 48000/2 (RFC 7587), offered as PT 111 with useinbandfec=1.
        case opus
        /// VP8 90000 (RFC 7741), offered as PT 96.
        case vp8

        public var kind: MediaKind { self == .opus ? .audio : .video }
        /// Chromium 156's payload type numbers, so an SFU with Chromium defaults needs no rewrite.
        public var defaultPayloadType: UInt8 { self == .opus ? 111 : 96 }
        public var clockRate: UInt32 { self == .opus ? 48_000 : 90_000 }
        public var rtpMap: String { self == .opus ? "opus/48000/2" : "VP8/90000" }
    }

    public var mid: String
    public var codec: Codec
    public var ssrc: UInt32
    /// `a=msid` stream id (the SFU's server offers use `account/device` for forwarded tracks).
    public var streamID: String
    public var trackID: String
    /// RTCP CNAME (RFC 7022).
    public var cname: String
    /// Video only: the RTX (RFC 4588) SSRC paired with `ssrc` by `a=ssrc-group:FID`; nil = no RTX.
    public var rtxSSRC: UInt32?
    /// Video only: one SSRC per simulcast layer, lowest first (`ssrc` is the first), written
    /// as `a=ssrc-group:SIM`; empty = no simulcast.
    public var simulcastSSRCs: [UInt32] = []

    /// Every SSRC this track sends media on (the simulcast layers, else `ssrc`).
    public var mediaSSRCs: [UInt32] { simulcastSSRCs.count > 1 ? simulcastSSRCs : [ssrc] }

    /// RTX payload type offered with VP8 (Chromium's number: `a=rtpmap:97 rtx/90000`, apt=96).
    public static let rtxPayloadType: UInt8 = 97

    public init(mid: String, codec: Codec, ssrc: UInt32, streamID: String, trackID: String, cname: String, rtxSSRC: UInt32? = nil) {
        self.mid = mid
        self.codec = codec
        self.ssrc = ssrc
        self.streamID = streamID
        self.trackID = trackID
        self.cname = cname
        self.rtxSSRC = codec == .vp8 ? rtxSSRC : nil
    }
}

/// The local transport a description carries: ICE credentials from libnice, its host
/// candidates and the DTLS certificate fingerprint.
public struct PeerTransport: Sendable, Equatable {
    public var iceUfrag: String
    public var icePwd: String
    /// `a=fingerprint` value, e.g. "sha-256 AB:CD:…".
    public var fingerprint: String
    /// Candidate attribute values, after "a=candidate:" ("1 1 UDP 2015363327 127.0.0.1 40000 typ host").
    public var candidates: [String]

    public init(iceUfrag: String, icePwd: String, fingerprint: String, candidates: [String]) {
        self.iceUfrag = iceUfrag
        self.icePwd = icePwd
        self.fingerprint = fingerprint
        self.candidates = candidates
    }
}
