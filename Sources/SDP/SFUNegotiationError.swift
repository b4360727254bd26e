/// Why an offer cannot be answered (or an answer accepted) at all. Single media sections the SFU
/// cannot use are rejected in the answer instead (port 0, RFC 3264 §6).
public enum SFUNegotiationError: Error, Equatable, Sendable {
    /// The description does not parse or a WebRTC attribute is malformed.
    case invalidSDP(SDPError)
    /// A media section has no `a=mid` (required by JSEP, RFC 8829 §5.2.1).
    case missingMid(sectionIndex: Int)
    /// Two media sections share a mid (RFC 5888 §4).
    case duplicateMid(String)
    /// No ice-ufrag/ice-pwd for an accepted section (RFC 8839 §5.4).
    case missingICECredentials(mid: String)
    /// No fingerprint for an accepted section (RFC 8122 §5, RFC 5763 §5).
    case missingFingerprint(mid: String)
    /// The offer asks the SFU to be the DTLS client (`a=setup:passive`); the SFU is always the
    /// DTLS server when answering (RFC 5763 §5).
    case unsupportedSetup(mid: String)

    public var code: String {
        switch self {
        case .invalidSDP(let error): return error.code
        case .missingMid: return "sdp_missing_mid"
        case .duplicateMid: return "sdp_duplicate_mid"
        case .missingICECredentials: return "sdp_missing_ice_credentials"
        case .missingFingerprint: return "sdp_missing_fingerprint"
        case .unsupportedSetup: return "sdp_unsupported_setup"
        }
    }
}

/// What was agreed for one media section, for the forwarder.
public struct NegotiatedSection: Sendable, Equatable {
    public enum Rejection: String, Sendable, Equatable {
        /// Not audio or video (e.g. data channels), or not `UDP/TLS/RTP/SAVPF`.
        case unsupportedMedia
        /// No codec in common.
        case noCommonCodec
        /// The offer does not multiplex RTCP (RFC 5761); the SFU only runs one component.
        case noRTCPMux
        /// The offerer itself disabled it (port 0).
        case rejectedByOfferer
    }

    public var mid: String
    public var media: String
    public var kind: MediaKind?
    /// Direction written in the answer (server's point of view); inactive when rejected.
    public var direction: Direction
    public var rejection: Rejection?
    /// Payload formats accepted in this section (offer numbering).
    public var codecs: [CodecMap.Entry]
    /// Accepted header extension ids by URI (offer numbering).
    public var headerExtensions: [HeaderExtension.KnownURI: UInt8]
    /// Simulcast rids the server receives, in the offer's order (RFC 8853).
    public var receivedRIDs: [String]
    /// SSRCs the offerer announced for this section (RFC 5576) and its FID pairs.
    public var remoteSSRCs: [UInt32]
    public var remoteSSRCGroups: [SSRCGroup]
    public var remoteMSID: MediaStreamID?

    public var isAccepted: Bool { rejection == nil }
}
