/// Counters of a `Pacer` (cumulative): one set per worker (`Pacer.stats`) and one per lane,
/// i.e. per subscriber transport (`Pacer.laneStats(_:now:)`). docs/stats.md, "Pacer".
public struct PacerStats: Equatable, Sendable {
    /// Packets sent at once (the budget allowed them and nothing they must follow waited).
    public var sentAtOnce: UInt64 = 0
    /// Packets copied into the pool to wait.
    public var queued: UInt64 = 0
    /// Queued packets that left (`Pacer.release`).
    public var released: UInt64 = 0
    /// Releases at a rate raised by the queue-time limit.
    public var queueTimeRaises: UInt64 = 0
    /// Video packets dropped: those that found no room, the queued rest of their frame and
    /// the frame's later packets.
    public var droppedVideoPackets: UInt64 = 0
    /// Video frames dropped, by cause: the sum of the three below.
    public var droppedFrames: UInt64 = 0
    /// …because the worker's pool had no free slot (`PacerConfig.slotCount`).
    public var droppedFramesPoolFull: UInt64 = 0
    /// …because the lane held `PacerConfig.maxPacketsPerLane` packets.
    public var droppedFramesLaneFull: UInt64 = 0
    /// …because the packet did not fit a slot with its SRTP trailer room.
    public var droppedFramesOversized: UInt64 = 0
    /// Retransmissions dropped (pool or lane full, or oversized).
    public var droppedRetransmissions: UInt64 = 0
    /// Keyframe requests caused by dropped frames.
    public var keyframeRequests: UInt64 = 0
    /// Probe padding packets numbered on the lane (`Pacer.takeTransportSequence`).
    public var probePackets: UInt64 = 0
    /// Longest time a released packet waited, µs.
    public var maxQueueTime: Int64 = 0

    public init() {}
}

/// Why the pacer dropped a packet it could not queue.
public enum PacerDropCause: Equatable, Sendable {
    /// No free slot in the worker's pool.
    case poolFull
    /// The lane already holds `PacerConfig.maxPacketsPerLane` packets.
    case laneFull
    /// Larger than a slot minus the SRTP trailer room.
    case oversized
}

/// One lane's figures at a moment: its counters and its queue now.
public struct PacerLaneStats: Equatable, Sendable {
    public var counters: PacerStats
    /// Pacing rate, bit/s (0: unpaced, no estimate from feedback yet).
    public var rateBps: UInt64
    /// Packets and bytes waiting now.
    public var queuedPackets: Int
    public var queuedBytes: Int
    /// How long the oldest waiting packet has waited at `now`, µs (0: nothing waits).
    public var queueAge: Int64

    public init(counters: PacerStats, rateBps: UInt64, queuedPackets: Int, queuedBytes: Int, queueAge: Int64) {
        self.counters = counters
        self.rateBps = rateBps
        self.queuedPackets = queuedPackets
        self.queuedBytes = queuedBytes
        self.queueAge = queueAge
    }
}

extension PacerStats {
    /// Every cumulative counter, by name (`maxQueueTime`, a maximum, is not one; immutable,
    /// hence `nonisolated(unsafe)`: key paths are not `Sendable`): sums over
    /// workers and `/metrics` iterate this list; `PacerStatsTests` fails when a field is missing.
    nonisolated(unsafe) public static let fields: [(name: String, path: WritableKeyPath<PacerStats, UInt64>)] = [
        ("sentAtOnce", \.sentAtOnce), ("queued", \.queued), ("released", \.released), ("queueTimeRaises", \.queueTimeRaises),
        ("droppedVideoPackets", \.droppedVideoPackets), ("droppedFrames", \.droppedFrames),
        ("droppedFramesPoolFull", \.droppedFramesPoolFull), ("droppedFramesLaneFull", \.droppedFramesLaneFull),
        ("droppedFramesOversized", \.droppedFramesOversized), ("droppedRetransmissions", \.droppedRetransmissions),
        ("keyframeRequests", \.keyframeRequests), ("probePackets", \.probePackets),
    ]

    /// Field-wise sum (wrapping, like the counters); `maxQueueTime` the larger of the two.
    public static func + (a: PacerStats, b: PacerStats) -> PacerStats {
        var sum = PacerStats()
        for field in fields { sum[keyPath: field.path] = a[keyPath: field.path] &+ b[keyPath: field.path] }
        sum.maxQueueTime = max(a.maxQueueTime, b.maxQueueTime)
        return sum
    }
}
