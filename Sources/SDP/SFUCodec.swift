/// The codecs the SFU forwards, with the parameters it answers and offers.
public enum SFUCodec: String, Sendable, Hashable, CaseIterable {
    /// Opus 48000/2 (RFC 7587); in-band FEC on, 10 ms minimum packet time (what Chromium sends).
    case opus
    /// VP8 90000 (RFC 7741).
    case vp8
    /// H.264 90000, packetization-mode=1 and Constrained Baseline 3.1 (profile-level-id 42e01f,
    /// RFC 6184 §8.1): the one profile every browser decodes in hardware or OpenH264.
    case h264

    public var kind: MediaKind { self == .opus ? .audio : .video }

    public var encodingName: String {
        switch self {
        case .opus: return "opus"
        case .vp8: return "VP8"
        case .h264: return "H264"
        }
    }

    public var clockRate: UInt32 { self == .opus ? 48000 : 90000 }

    /// RFC 7587 §7: opus is always signalled with 2 channels.
    public var channels: UInt8? { self == .opus ? 2 : nil }

    /// fmtp the SFU writes for this codec.
    public var formatParameters: String? {
        switch self {
        case .opus: return "minptime=10;useinbandfec=1"
        case .vp8: return nil
        case .h264: return "level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f"
        }
    }

    /// RTCP feedback the SFU handles: NACK/PLI/FIR for video repair and keyframes (RFC 4585,
    /// RFC 5104), REMB and transport-cc for bandwidth estimation.
    public var feedback: [String] {
        switch self {
        case .opus: return ["transport-cc"]
        case .vp8, .h264: return ["goog-remb", "transport-cc", "ccm fir", "nack", "nack pli"]
        }
    }

    /// Whether RTX (RFC 4588) is negotiated alongside.
    public var usesRTX: Bool { kind == .video }

    /// Header extensions the SFU reads or rewrites for this kind of media.
    public static func headerExtensions(for kind: MediaKind) -> [HeaderExtension.KnownURI] {
        switch kind {
        case .audio: return [.audioLevel, .absSendTime, .transportWideCC, .mid]
        case .video: return [.absSendTime, .transportWideCC, .mid, .rid, .repairedRID]
        case .application: return []
        }
    }

    /// Whether an offered payload format is this codec with parameters the SFU accepts.
    public func matches(_ format: PayloadFormat) -> Bool {
        guard let map = format.rtpMap, map.normalizedName == encodingName.lowercased(),
              map.clockRate == clockRate else { return false }
        switch self {
        case .opus:
            return map.channels == 2
        case .vp8:
            return true
        case .h264:
            guard let parameters = format.formatParameters else { return false }
            return parameters["packetization-mode"] == "1"
                && parameters["profile-level-id"]?.lowercased() == "42e01f"
        }
    }
}
