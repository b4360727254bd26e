import CallCore

/// A WebSocket connection as the hub knows it: an opaque number the I/O layer chose.
public typealias ConnectionID = UInt64

/// The two clocks the hub is given (it never reads one itself).
public struct HubTime: Sendable, Equatable {
    /// Server wall clock, Unix ms: call deadlines, server times on the wire, token expiry.
    public var wall: Int64
    /// Monotonic ms: heartbeats, idle and hello timeouts, rate limits.
    public var mono: Int64

    public init(wall: Int64, mono: Int64) {
        self.wall = wall
        self.mono = mono
    }
}

/// What the I/O layer must do after a hub call (sans-I/O: the hub decides, the adapter acts).
public enum HubAction: Equatable, Sendable {
    /// A text frame (``WireText``: its UTF-8 bytes, as the hub wrote them and libsoup sends them).
    case send(ConnectionID, WireText)
    case close(ConnectionID, code: UInt16, reason: String)
    /// POST this JSON to the push webhook (with retries; docs/protocol.md §8).
    case push(PushRequest)
    /// A room / SFU command for the media coordinator (docs/protocol.md §9); it answers the
    /// device itself, asynchronously.
    case media(MediaRequest)
}

/// A room or SFU negotiation command from an authenticated device.
public struct MediaRequest: Equatable, Sendable {
    public var connection: ConnectionID
    public var device: DeviceKey
    public var eventID: String
    public var kind: CommandKind

    public init(connection: ConnectionID, device: DeviceKey, eventID: String, kind: CommandKind) {
        self.connection = connection
        self.device = device
        self.eventID = eventID
        self.kind = kind
    }
}

/// One push-hook notice.
public struct PushRequest: Equatable, Sendable {
    public var callID: String
    public var device: DeviceKey
    public var body: String

    public init(callID: String, device: DeviceKey, body: String) {
        self.callID = callID
        self.device = device
        self.body = body
    }
}

/// WebSocket close codes of protocol v1 (docs/protocol.md §1).
public enum CloseCode {
    public static let unauthorized: UInt16 = 4001
    public static let tokenExpired: UInt16 = 4002
    public static let replaced: UInt16 = 4003
    public static let idle: UInt16 = 4008
    public static let helloTimeout: UInt16 = 4009
    public static let protocolViolation: UInt16 = 4010
    public static let tooManyDevices: UInt16 = 4011
    public static let goingAway: UInt16 = 1001
}

/// Limits and timings of the IM channel. Defaults are documented in docs/protocol.md and
/// deploy/switchboard.conf.
public struct HubConfig: Sendable, Equatable {
    public var call: CallConfig
    /// 64 KiB: a Chromium offer is ~8 KiB; the frame cap bounds memory per connection.
    public var maxMessageBytes: Int
    /// The transport's own cap: 4 × the message limit, so a slightly oversized frame gets a
    /// typed `messageTooLarge` error while a flood cannot make libsoup buffer megabytes per
    /// connection.
    public var hardFrameLimit: Int { maxMessageBytes * 4 }
    /// 50/s with a burst of 100: a call setup needs ~15 commands; candidate trickles come in
    /// bursts of ~10. A runaway client is refused, not the server slowed.
    public var commandsPerSecond: Double
    public var commandBurst: Double
    /// 15 s / 45 s: three missed heartbeats close the connection; mobile NAT bindings
    /// survive 30 s idle at least.
    public var heartbeatIntervalMs: Int64
    public var idleTimeoutMs: Int64
    /// 10 s: TLS + WebSocket upgrade + hello on a slow mobile link takes < 3 s.
    public var helloTimeoutMs: Int64
    /// 16: phones, tablets, laptops and browser tabs of one person.
    public var maxDevicesPerAccount: Int
    /// 20: consecutive malformed frames before the connection is dropped as broken.
    public var maxMalformedStreak: Int
    /// 500: outbox entries read per query while replaying a backlog.
    public var backlogPageSize: Int
    /// Where 1:1 calls' media flows: server policy, or the caller's per-call choice.
    public var mediaPolicy: MediaPolicy

    public init(call: CallConfig = .default, maxMessageBytes: Int = 64 * 1024, commandsPerSecond: Double = 50,
                commandBurst: Double = 100, heartbeatIntervalMs: Int64 = 15_000, idleTimeoutMs: Int64 = 45_000,
                helloTimeoutMs: Int64 = 10_000, maxDevicesPerAccount: Int = 16, maxMalformedStreak: Int = 20,
                backlogPageSize: Int = 500, mediaPolicy: MediaPolicy = .clientChoice(default: .p2p)) {
        self.mediaPolicy = mediaPolicy
        self.call = call
        self.maxMessageBytes = maxMessageBytes
        self.commandsPerSecond = commandsPerSecond
        self.commandBurst = commandBurst
        self.heartbeatIntervalMs = heartbeatIntervalMs
        self.idleTimeoutMs = idleTimeoutMs
        self.helloTimeoutMs = helloTimeoutMs
        self.maxDevicesPerAccount = maxDevicesPerAccount
        self.maxMalformedStreak = maxMalformedStreak
        self.backlogPageSize = backlogPageSize
    }
}

/// Server policy for a 1:1 call's media path (docs/protocol.md §4, `media` on call.invite).
public enum MediaPolicy: Sendable, Equatable {
    /// Every call goes this way; an invite asking for the other is refused (`mediaNotAllowed`).
    case always(CallMedia)
    /// The caller chooses with `media`; without it, `default`.
    case clientChoice(default: CallMedia)
}
