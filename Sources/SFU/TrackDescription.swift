/// A codec as negotiated in SDP (`a=rtpmap` / `a=fmtp`), per participant and direction.
public struct CodecDescription: Equatable, Sendable {
    /// Encoding name as in `a=rtpmap`, matched case-insensitively ("opus", "VP8", "H264").
    public var name: String
    public var payloadType: UInt8
    /// RTP clock rate in Hz (48000 Opus, 90000 video).
    public var clockRate: UInt32
    /// Audio channels (2 for Opus in SDP), 1 for video.
    public var channels: UInt8
    /// Extra key that must match for two codecs to be the same (e.g. H.264
    /// "profile-level-id=42e01f;packetization-mode=1"); empty when irrelevant.
    public var parameters: String
    /// RFC 4588 RTX payload type whose `apt` is this codec (publisher side), nil = no RTX.
    /// Needed to restore the original payload type of a publisher's retransmissions.
    public var rtxPayloadType: UInt8?

    public init(name: String, payloadType: UInt8, clockRate: UInt32, channels: UInt8 = 1, parameters: String = "", rtxPayloadType: UInt8? = nil) {
        self.name = name
        self.payloadType = payloadType
        self.clockRate = clockRate
        self.channels = channels
        self.parameters = parameters
        self.rtxPayloadType = rtxPayloadType
    }

    func matches(_ other: CodecDescription) -> Bool {
        name.lowercased() == other.name.lowercased() && clockRate == other.clockRate
            && channels == other.channels && parameters == other.parameters
    }
}

/// RFC 8285 header extension ids negotiated with `a=extmap`; 0 = not negotiated.
public struct HeaderExtensionIDs: Equatable, Sendable {
    /// urn:ietf:params:rtp-hdrext:sdes:mid (RFC 8843 §15).
    public var mid: UInt8
    /// urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id (RFC 8852).
    public var rid: UInt8
    /// urn:ietf:params:rtp-hdrext:sdes:repaired-rtp-stream-id (RFC 8852).
    public var repairedRid: UInt8
    /// urn:ietf:params:rtp-hdrext:ssrc-audio-level (RFC 6464).
    public var audioLevel: UInt8
    /// http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time
    public var absSendTime: UInt8
    /// http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01
    public var transportCC: UInt8

    public init(mid: UInt8 = 0, rid: UInt8 = 0, repairedRid: UInt8 = 0, audioLevel: UInt8 = 0, absSendTime: UInt8 = 0, transportCC: UInt8 = 0) {
        self.mid = mid
        self.rid = rid
        self.repairedRid = repairedRid
        self.audioLevel = audioLevel
        self.absSendTime = absSendTime
        self.transportCC = transportCC
    }
}

/// One RTP stream of a track: the only one, or one simulcast layer (RFC 8853).
public struct StreamDescription: Equatable, Sendable {
    /// Media SSRC; nil when unsignaled (Chrome's rid simulcast): learned from the first packet
    /// carrying this layer's `rid` (or the track's `mid` for a single-layer track).
    public var ssrc: UInt32?
    /// RTX SSRC (RFC 4588), when signaled.
    public var rtxSSRC: UInt32?
    /// RID of this layer (RFC 8851), when simulcast uses rids.
    public var rid: String?

    public init(ssrc: UInt32?, rtxSSRC: UInt32? = nil, rid: String? = nil) {
        self.ssrc = ssrc
        self.rtxSSRC = rtxSSRC
        self.rid = rid
    }
}

/// How keyframes are asked for on the publisher leg (RFC 4585 `nack pli` / RFC 5104 `ccm fir`).
public enum KeyframeRequestMethod: Sendable, Equatable {
    case pli
    case fir
}

/// A track as published (from the publisher's SDP offer).
public struct TrackDescription: Equatable, Sendable {
    public var id: TrackID
    public var kind: MediaKind
    /// Codecs the publisher may send on this track (its m-line's payload types).
    public var codecs: [CodecDescription]
    /// 1 stream, or up to 3 simulcast layers ordered from lowest to highest quality.
    public var layers: [StreamDescription]
    /// Extension ids on the publisher's transport.
    public var extensions: HeaderExtensionIDs
    /// The publisher's mid for this track (binds unsignaled SSRCs via the mid extension).
    public var mid: String?
    public var keyframeRequest: KeyframeRequestMethod
    /// The publisher accepts REMB (`a=rtcp-fb:* goog-remb`): when it also lacks the
    /// transport-cc extension, the SFU sends it REMB (docs/rtcp.md, REMB) so it still adapts.
    public var acceptsREMB: Bool

    public init(
        id: TrackID, kind: MediaKind, codecs: [CodecDescription], layers: [StreamDescription],
        extensions: HeaderExtensionIDs = HeaderExtensionIDs(), mid: String? = nil,
        keyframeRequest: KeyframeRequestMethod = .pli, acceptsREMB: Bool = false
    ) {
        self.acceptsREMB = acceptsREMB
        self.id = id
        self.kind = kind
        self.codecs = codecs
        self.layers = layers
        self.extensions = extensions
        self.mid = mid
        self.keyframeRequest = keyframeRequest
    }
}

/// What a participant can receive (from its SDP) and who it is.
public struct ParticipantDescription: Equatable, Sendable {
    /// RTCP CNAME of this participant's own streams (RFC 7022); sent to its subscribers in SDES.
    public var cname: String
    /// Codecs it accepts on its receiving m-lines (its payload type numbers).
    public var receiveCodecs: [CodecDescription]
    /// Extension ids on its transport for what we send it.
    public var receiveExtensions: HeaderExtensionIDs

    public init(cname: String, receiveCodecs: [CodecDescription], receiveExtensions: HeaderExtensionIDs = HeaderExtensionIDs()) {
        self.cname = cname
        self.receiveCodecs = receiveCodecs
        self.receiveExtensions = receiveExtensions
    }
}
