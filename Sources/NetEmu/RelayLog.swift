/// Why the relay dropped a datagram.
public enum DropReason: Sendable, Equatable, CustomStringConvertible {
    /// Independent random loss (`Impairment.loss`).
    case randomLoss
    /// Gilbert–Elliott loss (`Impairment.burstLoss`).
    case burstLoss
    /// The rate cap's queue was full (tail drop).
    case queueFull
    /// The relay's own bound on delayed packets was reached (memory bound, not a path model).
    case relayBacklog
    /// No mapping could be made for a new client (mapping limit reached or socket failure).
    case noMapping

    public var description: String {
        switch self {
        case .randomLoss: "random-loss"
        case .burstLoss: "burst-loss"
        case .queueFull: "queue-full"
        case .relayBacklog: "relay-backlog"
        case .noMapping: "no-mapping"
        }
    }
}

/// What the relay did with one datagram, decided when it arrived.
public enum RelayAction: Sendable, Equatable {
    /// Sent on at once.
    case forwarded
    /// Held for this many milliseconds, leaving in arrival order.
    case delayed(ms: Double)
    /// Held for this many milliseconds and scheduled to leave before a datagram of the same
    /// direction that arrived earlier (it overtakes it).
    case reordered(ms: Double)
    case dropped(DropReason)

    public var isDropped: Bool { if case .dropped = self { true } else { false } }
}

/// The cleartext RTP header fields of a datagram (SRTP leaves them readable), so a stats test
/// can tell exactly which packets of which stream the relay dropped or delayed.
public struct RTPTag: Sendable, Equatable {
    public let ssrc: UInt32
    public let sequence: UInt16
    public let payloadType: UInt8
    public let timestamp: UInt32
    public let marker: Bool

    /// Recognises RTP by RFC 7983 §7 (first byte 128–191) and RFC 5761 §4 (payload type not in
    /// 64–95, which is RTCP's range); nil for STUN, DTLS, RTCP and anything shorter than a
    /// 12-byte RTP header.
    public init?(datagram bytes: [UInt8]) {
        guard bytes.count >= 12, (128...191).contains(bytes[0]) else { return nil }
        let pt = bytes[1] & 0x7F
        guard !(64...95).contains(pt) else { return nil }
        payloadType = pt
        marker = bytes[1] & 0x80 != 0
        sequence = UInt16(bytes[2]) << 8 | UInt16(bytes[3])
        timestamp = bytes[4..<8].reduce(0) { $0 << 8 | UInt32($1) }
        ssrc = bytes[8..<12].reduce(0) { $0 << 8 | UInt32($1) }
    }
}

/// One datagram as seen by the relay: ground truth for stats tests.
public struct RelayLogEntry: Sendable, Equatable {
    /// Per-direction arrival index, 0-based, counting every datagram that reached the relay.
    public let index: UInt64
    public let direction: Direction
    /// The client's UDP port (the mapping this datagram belongs to).
    public let clientPort: UInt16
    public let size: Int
    /// Arrival time, nanoseconds since the relay was created (`ImpairmentRelay.createdAtNs`).
    public let arrivalNs: UInt64
    public let action: RelayAction
    /// Set when the datagram is RTP (or SRTP).
    public let rtp: RTPTag?
}

/// Totals for one direction. Kept in full even when the log ring has wrapped.
public struct DirectionCounters: Sendable, Equatable {
    public var received: UInt64 = 0
    public var receivedBytes: UInt64 = 0
    /// Datagrams actually written to the socket (immediately or after their delay).
    public var sent: UInt64 = 0
    public var sentBytes: UInt64 = 0
    public var forwardedImmediately: UInt64 = 0
    public var delayed: UInt64 = 0
    public var reordered: UInt64 = 0
    public var droppedRandom: UInt64 = 0
    public var droppedBurst: UInt64 = 0
    public var droppedQueueFull: UInt64 = 0
    public var droppedRelayBacklog: UInt64 = 0
    public var droppedNoMapping: UInt64 = 0
    /// sendto(2) failures (e.g. ECONNREFUSED from an earlier ICMP on loopback).
    public var sendErrors: UInt64 = 0

    public var dropped: UInt64 { droppedRandom + droppedBurst + droppedQueueFull + droppedRelayBacklog + droppedNoMapping }

    public init() {}

    mutating func count(_ action: RelayAction) {
        switch action {
        case .forwarded: forwardedImmediately += 1
        case .delayed: delayed += 1
        case .reordered: delayed += 1; reordered += 1
        case .dropped(.randomLoss): droppedRandom += 1
        case .dropped(.burstLoss): droppedBurst += 1
        case .dropped(.queueFull): droppedQueueFull += 1
        case .dropped(.relayBacklog): droppedRelayBacklog += 1
        case .dropped(.noMapping): droppedNoMapping += 1
        }
    }
}

/// Counters for both directions.
public struct RelayCounters: Sendable, Equatable {
    public var uplink = DirectionCounters()
    public var downlink = DirectionCounters()
    public init() {}
    public subscript(direction: Direction) -> DirectionCounters {
        get { direction == .uplink ? uplink : downlink }
        set { if direction == .uplink { uplink = newValue } else { downlink = newValue } }
    }
}

/// Bounded log: keeps the newest `capacity` entries (ring buffer) so a long run cannot grow
/// memory without limit; `overwritten` says how many older entries were lost.
struct RelayLogRing {
    let capacity: Int
    private(set) var entries: [RelayLogEntry] = []
    private var head = 0
    private(set) var overwritten: UInt64 = 0

    init(capacity: Int) { self.capacity = max(capacity, 0) }

    mutating func append(_ entry: RelayLogEntry) {
        guard capacity > 0 else { overwritten += 1; return }
        if entries.count < capacity {
            entries.append(entry)
        } else {
            entries[head] = entry
            head = (head + 1) % capacity
            overwritten += 1
        }
    }

    /// Oldest first.
    var ordered: [RelayLogEntry] { Array(entries[head...] + entries[..<head]) }

    mutating func removeAll() {
        entries.removeAll(keepingCapacity: true)
        head = 0
    }
}
