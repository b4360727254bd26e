/// Identifies one ICE session (one participant's transport) on the shared port.
public struct ICESessionID: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public var description: String { "ice#\(rawValue)" }
}

/// Why a STUN datagram was not accepted as a connectivity check.
public enum ICERejectReason: Error, Equatable, Sendable {
    /// Not a well-formed STUN message (libnice: NOT_STUN / INCOMPLETE_STUN). Dropped.
    case notSTUN
    /// A STUN response, or a method other than Binding: the lite agent sends no requests,
    /// so there is nothing to match. Dropped. (Binding indications, keepalives, are
    /// ignored without an event.)
    case notBindingRequest
    /// USERNAME or MESSAGE-INTEGRITY missing, or FINGERPRINT missing/wrong
    /// (RFC 8489 §9.1.3, RFC 8445 §7.2.2): answered 400.
    case badRequest
    /// The USERNAME's first fragment is no registered local ufrag, or its second fragment is
    /// not that session's remote ufrag. Dropped without a reply so the port is no oracle for
    /// scanners (RFC 8489 §9.1.3 would allow 401; mediasoup and Janus also stay silent).
    case unknownUsername
    /// MESSAGE-INTEGRITY does not verify with the session's password: answered 401.
    case badIntegrity(ICESessionID)
    /// A comprehension-required attribute we do not know: answered 420 (RFC 8489 §6.3.1.1).
    case unknownAttribute(ICESessionID)
    /// The peer sent ICE-CONTROLLED: it also believes it is controlled. A lite agent is
    /// always controlled (RFC 8445 §6.1.1, §7.3.1.1), so it answers 487 and the full agent
    /// switches to controlling.
    case roleConflict(ICESessionID)
    /// The session's consent expired (RFC 7675 §5.1): it stays silent until restarted.
    case sessionExpired(ICESessionID)
    /// libnice could not build the reply (buffer or address problem).
    case replyFailed

    /// Stable string code (metrics, logs).
    public var code: String {
        switch self {
        case .notSTUN: "ice_not_stun"
        case .notBindingRequest: "ice_not_binding_request"
        case .badRequest: "ice_bad_request"
        case .unknownUsername: "ice_unknown_username"
        case .badIntegrity: "ice_bad_integrity"
        case .unknownAttribute: "ice_unknown_attribute"
        case .roleConflict: "ice_role_conflict"
        case .sessionExpired: "ice_session_expired"
        case .replyFailed: "ice_reply_failed"
        }
    }
}

/// Something the owner of the socket must act on.
public enum ICEEvent: Equatable, Sendable {
    /// An authenticated Binding request arrived from `address` (RFC 8445 §7.3): the address
    /// is now a validated remote address of `session` (peer-reflexive if never signalled),
    /// and consent is refreshed (RFC 7675 §5.1). `nominated` when it carried USE-CANDIDATE.
    case checkValidated(ICESessionID, SocketAddress, nominated: Bool)
    /// The selected (nominated) address changed: first nomination (`old == nil`), a network
    /// switch, or an ICE restart. Media to the session goes to `new` from now on.
    case pathChanged(ICESessionID, old: SocketAddress?, new: SocketAddress)
    /// No authenticated check for `ICELiteAgent.consentTimeout` (RFC 7675 §5.1): stop
    /// sending media to this session.
    case consentExpired(ICESessionID)
    /// A STUN datagram was rejected.
    case reject(ICERejectReason)
}

/// The result of one STUN datagram: at most one reply, and events.
public struct ICEAction: Equatable, Sendable {
    /// Bytes to send back (success, or 400/401/420/487 error) and where to.
    public var response: [UInt8]?
    public var responseAddress: SocketAddress?
    public var events: [ICEEvent]

    public init(response: [UInt8]? = nil, to address: SocketAddress? = nil, events: [ICEEvent] = []) {
        self.response = response
        self.responseAddress = address
        self.events = events
    }

    /// Dropped with a reason and no reply.
    static func drop(_ reason: ICERejectReason) -> ICEAction { ICEAction(events: [.reject(reason)]) }
}

/// Registration errors (signalling input: credentials come from SDP).
public enum ICEError: Error, Equatable, Sendable {
    /// Another live session uses this local ufrag.
    case duplicateLocalUfrag
    /// ufrag shorter than 4 or password shorter than 22 characters, or a character outside
    /// ice-char (RFC 8839 §5.4: ALPHA / DIGIT / "+" / "/"), or longer than 256.
    case invalidCredentials
    /// No such session.
    case unknownSession

    public var code: String {
        switch self {
        case .duplicateLocalUfrag: "ice_duplicate_ufrag"
        case .invalidCredentials: "ice_invalid_credentials"
        case .unknownSession: "ice_unknown_session"
        }
    }
}
