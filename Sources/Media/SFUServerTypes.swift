import SDP

/// A room member: one device's transport, "account/device" (protocol §9). Its forwarded
/// tracks carry it as their stream id in `streamID` form, "account%2Fdevice": "/" is not an
/// SDP token-char (RFC 8830 §2 `msid-id = 1*64token-char`, RFC 4566 §9), so it is
/// percent-encoded (`SDPToken`).
public struct MemberID: Hashable, Sendable, CustomStringConvertible {
    public let account: String
    public let device: String

    public init(account: String, device: String) {
        self.account = account
        self.device = device
    }

    /// Parses "account/device"; nil without exactly one "/" or with an empty side.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { return nil }
        self.init(account: String(parts[0]), device: String(parts[1]))
    }

    public var description: String { "\(account)/\(device)" }

    /// The member as an SDP token: `a=msid` stream id and RTCP CNAME of its forwarded tracks.
    /// Protocol identifiers (`[A-Za-z0-9._-]`) only have their "/" escaped. At most 64 chars
    /// (RFC 8830) when account and device together are 61 chars or fewer.
    public var streamID: String { SDPToken.escape(description) }

    /// Parses a `streamID` back; nil when it is not one.
    public init?(streamID: String) {
        guard let text = SDPToken.unescape(streamID) else { return nil }
        self.init(text)
    }
}

/// The server's answer to a member's offer (protocol §9: `result` of `sfu.offer`).
public struct SFUAnswerResult: Equatable, Sendable {
    /// The member's current negotiation generation (the last server offer's, 0 before any).
    public var generation: UInt64
    public var sdp: String
}

/// Why a member left its room (protocol §9 `room.memberLeft` reason via `wireReason`).
public enum SFULeaveReason: String, Equatable, Sendable {
    /// `leave(_:)` was called (signaling: `room.leave`, or the WebSocket session ended).
    case left
    /// No ICE consent check for the consent timeout (RFC 7675 §5.1).
    case consentExpired
    /// The DTLS handshake failed (bad fingerprint, timeout): media can never flow.
    case dtlsFailed
    /// The peer sent a DTLS close_notify.
    case dtlsClosed

    /// The protocol's reason: left / consentExpired / disconnected.
    public var wireReason: String {
        switch self {
        case .left: return "left"
        case .consentExpired: return "consentExpired"
        case .dtlsFailed, .dtlsClosed: return "disconnected"
        }
    }
}

/// Why a control call on `SFUServer` was refused. Codes are stable (they reach the wire).
public enum SFUServerError: Error, Equatable, Sendable {
    /// The SDP does not parse or cannot be answered; `reason` is the SDP layer's code.
    case invalidSDP(reason: String)
    /// No such member (never joined, or already left).
    case unknownMember
    /// The member is already in another room on this server.
    case wrongRoom
    /// The answer is for a server offer that is not the outstanding one (protocol §9).
    case invalidGeneration
    /// The device offered while the server's offer is unanswered (server impolite, §9).
    case glare
    /// The offer's fingerprint uses a hash the DTLS layer does not accept, or is missing.
    case badFingerprint
    /// ICE credentials were refused (duplicate/too short) by the ICE agent.
    case iceRejected(reason: String)
    /// The router refused the member's tracks (SSRC clash, too many layers…).
    case routerRejected(reason: String)
    /// The server is not running.
    case notRunning

    public var code: String {
        switch self {
        case .invalidSDP: return "sdp_invalid"
        case .unknownMember: return "sfu_unknown_member"
        case .wrongRoom: return "sfu_wrong_room"
        case .invalidGeneration: return "invalidGeneration"
        case .glare: return "glare"
        case .badFingerprint: return "sdp_bad_fingerprint"
        case .iceRejected: return "sfu_ice_rejected"
        case .routerRejected: return "sfu_router_rejected"
        case .notRunning: return "sfu_not_running"
        }
    }
}
