/// Bandwidth state of one participant's transport (issue 4), owned by its `ParticipantState`:
/// - as a **subscriber**: the send-side downlink estimate (`BandwidthEstimator`), the bytes
///   we send it, and the running bandwidth probe (Router+Bandwidth.swift, Router+Probe.swift);
/// - as a **publisher** that only speaks REMB: the receive-side estimate we send it
///   (Router+REMB.swift).
struct DownlinkState {
    var estimator = BandwidthEstimator()
    /// Everything we send this subscriber (forwards, resends, probe padding), for the padding
    /// rate of a probe (probe target − what already flows).
    var sent = BitrateMeter()
    /// What we send it without probe padding: what a probe tops up. The padding of the
    /// previous probe stays in `sent` for its 1 s window, and topping `sent` up to the next
    /// probe's target sent too little padding — a probe 0.7 s after the last one
    /// (exponential probing) measured little more than the previous one.
    var media = BitrateMeter()
    var transportFeedbacks: UInt64 = 0
    var malformedTransportFeedback: UInt64 = 0
    var rembReceived: UInt64 = 0
    var receiverReports: UInt64 = 0
    var probe: ProbeBurst?
    var nextProbeCluster = 0
    var probesStarted: UInt64 = 0
    var paddingPackets: UInt64 = 0
    var paddingBytes: UInt64 = 0
    /// Publisher side: what we tell a REMB-only publisher it may send.
    var receiveEstimate = ReceiveSideEstimate()
    var rembSent: UInt64 = 0

    /// A packet sent (not probe padding): both meters and, with its transport-wide number,
    /// the estimator's send history. One method so that `Router.recordSent` accesses the
    /// participant's `downlink` once per forward instead of three times (each access to it is
    /// a dynamic exclusivity check: it is stored on a class).
    mutating func recordSent(size: Int, transportSequenceNumber: UInt16?, now: Int64) {
        sent.add(bytes: size, now: now)
        media.add(bytes: size, now: now)
        guard let sequence = transportSequenceNumber else { return }
        let cluster = probe.flatMap { now < $0.end ? $0.cluster : nil }
        estimator.packetSent(transportSequenceNumber: sequence, size: size, now: now, probeCluster: cluster)
    }

    /// True when the estimate rests on something the subscriber told us: transport-cc
    /// feedback, a REMB, or (only for a subscriber without transport-cc) receiver reports.
    /// Without any, the estimate is just the start value, and acting on it would pin every
    /// such subscriber to a low layer; it then simply gets its requested maximum.
    func hasSignal(transportCCNegotiated: Bool) -> Bool {
        transportFeedbacks > 0 || rembReceived > 0 || (!transportCCNegotiated && receiverReports > 0)
    }
}

/// A bandwidth probe towards one subscriber: for `duration` everything sent to it belongs to
/// probe cluster `cluster`, and padding tops what already flows up to `targetBps`.
struct ProbeBurst {
    let cluster: Int
    let targetBps: UInt64
    /// Padding rate fixed at the start: target − the rate already sent.
    let paddingBps: UInt64
    let start: Int64
    let end: Int64
    /// Hard bound on the padding bytes of this probe.
    let budgetBytes: Int
    /// Outgoing media SSRC of the subscription the padding goes on, and the subscriber's RTX
    /// payload type for it (nil: padding on the media SSRC itself).
    let ssrc: UInt32
    let rtxPayloadType: UInt8?
    var paddingBytes = 0
    var packets = 0
}

/// Layer choice of one subscription to a video track.
struct SubscriptionLayerState {
    var selector = LayerSelector()
    /// The largest layer the subscriber asked for (`Router.setMaxLayer`); clamped to the
    /// track's layers when used.
    var maxLayer = Int.max
    /// The largest picture the subscriber renders (`Router.setMaxSize`), nil = any.
    var maxSize: (width: Int, height: Int)?
    /// `Router.setTargetLayer` fixed the layer by hand: the selector leaves it alone.
    var pinned = false
    var lastReason: LayerSelector.Reason?
    var lastChangeAt: Int64?
}

/// Receive-side estimate for a publisher without transport-cc, sent to it as REMB once per
/// report interval (Router+REMB.swift). GCC's loss-based rules (draft-ietf-rmcat-gcc-02 §6)
/// applied to what we receive, per receiver-report period:
/// - loss > 10 %: incoming rate × (1 − loss/2);
/// - loss < 2 %: previous × 1.08 per second (at least the incoming rate), never above
///   1.5 × incoming + 10 kbit/s — libwebrtc `AimdRateControl`'s increase and its limit over
///   the acknowledged rate; the first estimate is that limit;
/// - in between: hold (previous, else the incoming rate).
/// Clamped to [30 kbit/s, 20 Mbit/s] (`BandwidthEstimator.Config` bounds).
struct ReceiveSideEstimate {
    private(set) var bps: Double?
    private var lastUpdate: Int64?

    mutating func update(incomingBps: UInt64, fractionLost: Double, now: Int64) -> UInt64 {
        let config = BandwidthEstimator.Config()
        let incoming = Double(incomingBps)
        let dt = Double(min(max(now - (lastUpdate ?? now), 0), 1_000_000)) / 1_000_000
        lastUpdate = now
        var value: Double
        if fractionLost > config.highLoss {
            value = incoming * (1 - fractionLost / 2)
        } else if fractionLost < config.lowLoss {
            let limit = 1.5 * incoming + 10_000
            value = bps.map { min(max($0 * growth(config.increasePerSecond, dt), incoming), limit) } ?? limit
        } else {
            value = bps ?? incoming
        }
        value = min(max(value, Double(config.minBps)), Double(config.maxBps))
        bps = value
        return UInt64(value)
    }
}
