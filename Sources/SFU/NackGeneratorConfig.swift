/// Tuning of a `NackGenerator` (times in µs). Every value has its reason next to it.
public struct NackGeneratorConfig: Equatable, Sendable {
    /// Give up on a packet when a NACK sent now could not bring it back before it is this old
    /// (age + RTT > maxAge): the receiver's playout has moved past it.
    public var maxAge: Int64
    /// NACKs per missing packet. 10: libwebrtc `kMaxNackRetries` and mediasoup
    /// `MaxNackRetries`; at 10% uplink loss the residual after n tries is 0.1^n, so the age
    /// bound, not the count, is what normally ends a packet's retries.
    public var maxRetries = 10
    /// Shortest wait after a gap before the first NACK. 10 ms: one tick of reordering that
    /// any path shows (interleaved pacer bursts); under that a NACK is almost always needless.
    public var minReorderWait: Int64 = 10_000
    /// Longest wait before the first NACK. 150 ms: wait + RTT must stay well inside `maxAge`
    /// and the receiver's jitter buffer (100–200 ms under jitter); longer reordering than
    /// this is rarer than loss, so asking is cheaper than waiting.
    public var maxReorderWait: Int64 = 150_000
    /// Wait at least this many times the RFC 3550 interarrival jitter. 3: for delay jitter
    /// uniform in ±d the §A.8 estimate converges to about 2d/3, and reordering spans up to 2d,
    /// so 3 × jitter covers the whole reorder window (50 ± 30 ms → J ≈ 20 ms → 60 ms).
    public var jitterMultiplier: Int64 = 3
    /// The wait also covers the latest reordering actually seen (latest 32 samples within
    /// 10 s) plus this share of it (1/4): a measured bound beats a model of it.
    public var observedReorderMarginDivisor: Int64 = 4
    /// Minimum spacing of NACKs for one packet. 20 ms: one tick; a repair needs an RTT and
    /// may be as late as the reorder wait, so the real spacing is max(RTT + wait, this).
    public var minRetryInterval: Int64 = 20_000
    /// RTT assumed until one is measured: 100 ms, libwebrtc's `kDefaultRtt` and mediasoup's.
    public var defaultRTT: Int64 = 100_000
    /// A sequence jump larger than this (either direction) restarts tracking instead of
    /// NACKing the whole gap. 1000: mediasoup `MaxNackPackets`; such a gap is an outage or a
    /// new source, repaired by a keyframe, not by retransmissions.
    public var restartGap: Int64 = 1000
    /// Missing packets tracked at most (oldest dropped first). 1000: same bound as above.
    public var maxMissing = 1000
    /// Sequence numbers per NACK packet at most. 200: worst case 200 FCI entries = 812 bytes,
    /// so the NACK fits one datagram with SRTCP and other feedback under a 1200-byte MTU.
    public var maxPerNACK = 200

    public init(maxAge: Int64) { self.maxAge = maxAge }

    /// Video: 1 s, the retransmission cache age (docs/rtcp.md): Chrome's video jitter buffer
    /// waits for NACKed packets up to about that long before it requests a keyframe.
    public static let video = NackGeneratorConfig(maxAge: 1_000_000)
    /// Audio: 300 ms. NetEq's playout delay under jitter stays around 40–200 ms; an audio
    /// packet older than that has been concealed already, so its repair is useless.
    public static let audio = NackGeneratorConfig(maxAge: 300_000)

    public static func forKind(_ kind: MediaKind) -> NackGeneratorConfig {
        kind == .video ? video : audio
    }
}
