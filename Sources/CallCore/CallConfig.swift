/// Server-side call timing and limits. All durations are milliseconds.
///
/// Every deadline derived from these is an absolute server wall-clock time (Unix epoch ms)
/// stored in ``CallState/deadlines``, so it survives a restart (call-design §4 case 14).
public struct CallConfig: Codable, Sendable, Equatable {
    /// 60 s: ring timeout of RingRTC and matrix-js-sdk; after it the call ends `noAnswer`.
    public var ringTimeout: Int64
    /// 90 s: Matrix VoIP (MSC2746) recommends an invite lifetime of 90 s; must be ≥ ring
    /// timeout. A backstop: the call ends `expired` if it still rings at that age.
    public var inviteLifetime: Int64
    /// 30 s: from accepted answer to media flowing; ICE + DTLS usually finish in < 5 s, 30 s
    /// leaves room for TURN fallback on bad networks before we call it `connectFailed`.
    public var connectTimeout: Int64
    /// 30 s: ICE restart window after media loss, as RingRTC's reconnect grace; after it the
    /// call ends `mediaLost`.
    public var reconnectTimeout: Int64
    /// 5 s: an invite older than `inviteLifetime − deliveryGrace` is delivered as ended, so a
    /// device never starts ringing a call that expires while the UI comes up (call-design §4
    /// case 5).
    public var deliveryGrace: Int64
    /// 30: candidates buffered per call and device before the offer/answer, as RingRTC keeps
    /// (call-design §4 case 6). Typical gathering yields < 10 per device.
    public var candidateBufferLimit: Int
    /// 24 h: how long a terminal call stays stored as a tombstone so that a late invite or
    /// retry can never ring again (call-design §1); covers the longest client offline retry.
    public var tombstoneRetention: Int64

    public init(
        ringTimeout: Int64 = 60_000,
        inviteLifetime: Int64 = 90_000,
        connectTimeout: Int64 = 30_000,
        reconnectTimeout: Int64 = 30_000,
        deliveryGrace: Int64 = 5_000,
        candidateBufferLimit: Int = 30,
        tombstoneRetention: Int64 = 86_400_000
    ) {
        self.ringTimeout = ringTimeout
        self.inviteLifetime = inviteLifetime
        self.connectTimeout = connectTimeout
        self.reconnectTimeout = reconnectTimeout
        self.deliveryGrace = deliveryGrace
        self.candidateBufferLimit = candidateBufferLimit
        self.tombstoneRetention = tombstoneRetention
    }

    public static let `default` = CallConfig()

    /// Checks the relations the reducer relies on; a config file with bad values gets a typed
    /// error instead of a call model that can never ring.
    public func validate() throws(CallConfigError) {
        if ringTimeout <= 0 || inviteLifetime <= 0 || connectTimeout <= 0 || reconnectTimeout <= 0 {
            throw .nonPositiveDuration
        }
        if inviteLifetime < ringTimeout { throw .lifetimeShorterThanRing }
        if deliveryGrace < 0 || deliveryGrace >= inviteLifetime { throw .graceOutOfRange }
        if candidateBufferLimit < 1 { throw .candidateLimitTooSmall }
        if tombstoneRetention < inviteLifetime { throw .retentionTooShort }
    }
}

/// Why a ``CallConfig`` is unusable.
public enum CallConfigError: String, Error, Equatable, Codable, Sendable {
    case nonPositiveDuration
    case lifetimeShorterThanRing
    case graceOutOfRange
    case candidateLimitTooSmall
    case retentionTooShort
}
