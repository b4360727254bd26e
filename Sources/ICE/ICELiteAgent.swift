import CNice

/// ICE-lite (RFC 8445 §2.5, §7.3) for many sessions on one shared UDP port, without I/O:
/// the socket loop hands it STUN datagrams and the current time and sends what it returns.
///
/// - Sessions are registered with the credentials exchanged in SDP and found by the first
///   USERNAME fragment (our ufrag) of each check.
/// - Binding requests are validated and answered with libnice's public STUN usage API
///   (`stun_agent_validate`, `stun_usage_ice_conncheck_create_reply`), see
///   `ICELiteAgent+STUN.swift`.
/// - The remote addresses of authenticated checks form the 5-tuple → session table
///   (`session(for:)`); the controlling peer's USE-CANDIDATE selects the media path.
/// - Consent freshness (RFC 7675): every authenticated check refreshes consent; `tick`
///   expires sessions silent for `consentTimeout`.
///
/// Not thread-safe: owned by one media loop thread. Times are milliseconds on any
/// monotonic clock.
public final class ICELiteAgent {
    /// RFC 7675 §5.1: consent expires 30 s after the last authenticated check (browsers send
    /// a consent check every ~5 s, so six have to be lost).
    public static let consentTimeout: Int64 = 30_000
    /// This agent's consent timeout (ms); `consentTimeout` unless a test or deployment needs a
    /// shorter one (e.g. to see a vanished peer cleaned up quickly).
    public var consentTimeoutMilliseconds: Int64 = ICELiteAgent.consentTimeout
    /// At most this many validated remote addresses per session (oldest forgotten first):
    /// a browser has a handful of candidates per component; the cap bounds the table when a
    /// peer with valid credentials sprays checks from many ports.
    public static let maxAddressesPerSession = 8

    var sessions: [ICESessionID: ICESession] = [:]
    var sessionsByUfrag: [String: ICESession] = [:]
    var addressTable: [SocketAddress: ICESessionID] = [:]
    private var nextID: UInt32 = 1
    let stun = LibniceSTUN()

    public init() {}

    /// Number of registered sessions.
    public var sessionCount: Int { sessions.count }

    /// Registers a session: `localUfrag`/`localPassword` are what we put in our SDP,
    /// `remoteUfrag` (and optionally `remotePassword`, unused by a lite agent, which sends
    /// no checks) come from the peer's SDP. Consent is counted from `now`, so a peer that
    /// never completes a check is expired after `consentTimeout` too.
    public func register(localUfrag: String, localPassword: String, remoteUfrag: String, remotePassword: String? = nil,
                         now: Int64) throws(ICEError) -> ICESessionID {
        try Self.checkCredentials(localUfrag: localUfrag, localPassword: localPassword, remoteUfrag: remoteUfrag)
        guard sessionsByUfrag[localUfrag] == nil else { throw .duplicateLocalUfrag }
        let id = ICESessionID(rawValue: nextID)
        nextID &+= 1
        let session = ICESession(id: id, localUfrag: localUfrag, localPassword: localPassword, remoteUfrag: remoteUfrag,
                                 remotePassword: remotePassword, now: now)
        sessions[id] = session
        sessionsByUfrag[localUfrag] = session
        return id
    }

    /// ICE restart (RFC 8445 §9): new credentials for an existing session. The current
    /// selected path keeps carrying media until the peer nominates again (then
    /// `.pathChanged`); validated addresses are kept, consent restarts from `now`.
    public func restart(_ id: ICESessionID, localUfrag: String, localPassword: String, remoteUfrag: String,
                        remotePassword: String? = nil, now: Int64) throws(ICEError) {
        guard let session = sessions[id] else { throw .unknownSession }
        try Self.checkCredentials(localUfrag: localUfrag, localPassword: localPassword, remoteUfrag: remoteUfrag)
        if let other = sessionsByUfrag[localUfrag], other !== session { throw .duplicateLocalUfrag }
        sessionsByUfrag[session.localUfrag] = nil
        session.localUfrag = localUfrag
        session.replacePassword(localPassword)
        session.remoteUfrag = remoteUfrag
        session.remotePassword = remotePassword
        session.lastConsent = now
        session.expired = false
        sessionsByUfrag[localUfrag] = session
        for address in session.validated.keys { addressTable[address] = id }
    }

    /// Forgets a session and its addresses.
    public func remove(_ id: ICESessionID) {
        guard let session = sessions.removeValue(forKey: id) else { return }
        sessionsByUfrag[session.localUfrag] = nil
        for address in session.validated.keys where addressTable[address] == id { addressTable[address] = nil }
    }

    /// The session whose authenticated checks came from `address` (5-tuple demux), unless
    /// its consent expired. No allocation.
    public func session(for address: SocketAddress) -> ICESessionID? { addressTable[address] }

    /// Where to send media for `id`: the nominated address, nil before nomination or after
    /// consent expiry.
    public func selectedAddress(of id: ICESessionID) -> SocketAddress? {
        guard let session = sessions[id], !session.expired else { return nil }
        return session.selected
    }

    /// Validated remote addresses of `id` (any order).
    public func validatedAddresses(of id: ICESessionID) -> [SocketAddress] {
        sessions[id].map { Array($0.validated.keys) } ?? []
    }

    /// The earliest time `tick` has something to do (next consent expiry), if any.
    /// O(sessions): for tests and idle sleeps; the media loop simply ticks every second.
    public func nextDeadline() -> Int64? {
        sessions.values.lazy.filter { !$0.expired }.map { $0.lastConsent + self.consentTimeoutMilliseconds }.min()
    }

    /// Expires consent of sessions without an authenticated check for `consentTimeout`
    /// (RFC 7675 §5.1). Each session is reported once; its addresses leave the 5-tuple table
    /// so no more media is accepted from or sent to it.
    public func tick(now: Int64) -> [ICEEvent] {
        var expired: [ICESessionID] = []
        for session in sessions.values where !session.expired && now - session.lastConsent >= consentTimeoutMilliseconds {
            session.expired = true
            for address in session.validated.keys where addressTable[address] == session.id { addressTable[address] = nil }
            expired.append(session.id)
        }
        return expired.sorted { $0.rawValue < $1.rawValue }.map { .consentExpired($0) }
    }

    /// Records an authenticated check from `address`; returns the events.
    func recordCheck(_ session: ICESession, from address: SocketAddress, nominated: Bool, now: Int64) -> [ICEEvent] {
        session.lastConsent = now
        if session.validated[address] == nil, session.validated.count >= Self.maxAddressesPerSession,
           let oldest = session.validated.filter({ $0.key != session.selected }).min(by: { $0.value < $1.value })?.key {
            session.validated[oldest] = nil
            if addressTable[oldest] == session.id { addressTable[oldest] = nil }
        }
        session.validated[address] = now
        // An address moves to the session that last authenticated from it (a NAT may reuse a
        // port for another peer after the first left).
        if let previous = addressTable[address], previous != session.id, let other = sessions[previous] {
            other.validated[address] = nil
            if other.selected == address { other.selected = nil }
        }
        addressTable[address] = session.id
        var events: [ICEEvent] = [.checkValidated(session.id, address, nominated: nominated)]
        if nominated, session.selected != address {
            let old = session.selected
            session.selected = address
            events.append(.pathChanged(session.id, old: old, new: address))
        }
        return events
    }

    static func checkCredentials(localUfrag: String, localPassword: String, remoteUfrag: String) throws(ICEError) {
        // RFC 8839 §5.4: ice-ufrag 4–256 ice-chars, ice-pwd 22–256 ice-chars.
        guard (4...256).contains(localUfrag.utf8.count), (22...256).contains(localPassword.utf8.count),
              (1...256).contains(remoteUfrag.utf8.count),
              [localUfrag, localPassword, remoteUfrag].allSatisfy({ $0.utf8.allSatisfy(isICEChar) })
        else { throw .invalidCredentials }
    }

    private static func isICEChar(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "/"): true
        default: false
        }
    }
}
