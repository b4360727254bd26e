/// Tuning of the send-side `Pacer` (docs/rtcp.md, "Pacing"). Every default is libwebrtc's
/// (`PacingController`, `TaskQueuePacedSender`) unless its comment says otherwise.
public struct PacerConfig: Equatable, Sendable {
    /// 2.5: libwebrtc's `kDefaultPaceMultiplier`. The pacer sends at 2.5 × the downlink
    /// estimate: fast enough that an encoder's rate overshoot (a keyframe is 5–10 × a delta
    /// frame) leaves within a few hundred ms instead of piling up at the SFU, slow enough
    /// that a burst reaches the bottleneck spread over time rather than as one wall of
    /// packets within a millisecond.
    public var pacingFactor: Double = 2.5
    /// 40 ms: libwebrtc's `kDefaultBurstInterval` (`send_burst_interval`). A lane may run this
    /// far ahead of its rate: at 750 kbit/s (2.5 × 300 kbit/s) that is 3.75 kB, three packets,
    /// so small frames (audio-rate video, a delta frame) still leave at once, with no added
    /// delay, while a 50 kB keyframe is spread over ≈ 0.5 s.
    public var burstInterval: Int64 = 40_000
    /// 500 ms: libwebrtc's `kMaxDebtInTime`. Packets sent past the budget (audio, which never
    /// waits) raise the debt at most this far, so a long audio-only stretch cannot block the
    /// video that follows for seconds.
    public var maxDebtInterval: Int64 = 500_000
    /// 2 s: libwebrtc's `kMaxExpectedQueueLength` (`queue_time_limit`). When the queue would
    /// not drain within this time at the pacing rate, the rate is raised so that it does: an
    /// estimate that is far too low must not hold media back without bound (the receiver's
    /// jitter buffer gives up on frames older than that anyway).
    public var maxQueueTime: Int64 = 2_000_000
    /// 5 ms: libwebrtc's `kMinPacketLimit` / the periodic process interval of its paced
    /// sender. While anything is queued the media loop wakes this often to release packets.
    public var processInterval: Int64 = 5_000
    /// Packet slots of the pool shared by every lane of one pacer (one media worker). 512
    /// slots of ≈ 1.2 kB packets hold ≈ 600 kB: eleven 55 kB bursts (the largest seen at a
    /// 300 kbit/s subscriber: a top-layer keyframe of an up-switch) queued at once on one
    /// worker. Memory is `slotCount × slotSize` per worker (1 MB with 2 kB slots), allocated
    /// once, independent of the number of participants.
    public var slotCount: Int = 512
    /// Bytes per slot: a forwarded packet plus the room its SRTP tag needs (the media loop
    /// uses its scratch size, 2 kB).
    public var slotSize: Int = 2_048
    /// Room left in a slot after the packet for SRTP's authentication tag (protected in place
    /// at egress): 64 > the 16-byte GCM tag or the 10-byte HMAC-SHA1-80 tag plus an MKI.
    public var trailerRoom: Int = 64
    /// 128: a quarter of the pool per lane, so one subscriber behind a collapsed link cannot
    /// take the slots the other subscribers' bursts need (≈ 150 kB: more than two
    /// keyframes; beyond that its video is dropped frame by frame).
    public var maxPacketsPerLane: Int = 128
    /// 75 kbit/s floor of the pacing rate: 2.5 × the estimator's 30 kbit/s floor
    /// (`BandwidthEstimatorConfig.minBps`).
    public var minRateBps: UInt64 = 75_000

    public init() {}
}
