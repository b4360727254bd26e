/// Tuning of the router. Every value has its reason next to it.
public struct RouterConfig: Equatable, Sendable {
    /// Minimum spacing of keyframe requests per publisher stream. 500 ms: a keyframe needs
    /// about an RTT plus encode time to arrive, so asking sooner only multiplies keyframes
    /// (bitrate spikes) for one loss; LiveKit's `pli_throttle` uses 500 ms for low layers.
    public var keyframeRequestInterval: Int64 = 500_000
    /// Report interval for participants with video in either direction: 1 s, libwebrtc's
    /// `kDefaultVideoReportInterval` (rtcp_sender.cc); RFC 4585 §3.5 lifts RFC 3550's 5 s minimum.
    public var videoReportInterval: Int64 = 1_000_000
    /// Audio-only participants: 5 s, libwebrtc's `kDefaultAudioReportInterval`.
    public var audioReportInterval: Int64 = 5_000_000
    /// Hold a new subscription until the signaling layer calls `Router.markNegotiated` (the
    /// subscriber answered the offer that carries it, protocol §9). A browser drops RTP for
    /// an m-line it has not applied yet without counting it anywhere but the transport, and
    /// transport-cc then reports it lost: 10–50 % fake loss seen with Chromium subscribers,
    /// which held the loss-based estimate below the top simulcast layer. Off: forward at
    /// once (pure router tests, peers that take unsignaled SSRCs).
    public var holdUntilNegotiated = false
    /// Seed for outgoing SSRC allocation (take it from a CSPRNG at startup; fixed in tests).
    public var ssrcSeed: UInt64

    public init(ssrcSeed: UInt64) { self.ssrcSeed = ssrcSeed }
}
