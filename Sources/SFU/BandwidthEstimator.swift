import RTP

/// Downlink bandwidth estimate for one subscriber transport, send side (we are the sender).
///
/// Preferred input is transport-cc feedback about what we sent
/// (draft-holmer-rmcat-transport-wide-cc-extensions-01): `packetSent` records each
/// transport-wide sequence number with its send time and size, `transportFeedback` matches
/// the reported arrivals. Two controllers, as in GCC (draft-ietf-rmcat-gcc-02) and LiveKit's
/// send-side BWE, and the estimate is the smaller of them:
/// - **delay-based** (§5): a delay-gradient detector (`DelayTrendDetector`); over-use →
///   0.85 × the delivered rate; normal → multiplicative increase (8 %/s) far from the last
///   known capacity, additive (about one packet per response time) near it; under-use → hold.
///   Capped at 1.5 × the delivered rate (libwebrtc), so an idle sender cannot claim bandwidth
///   it never tested — growing past that needs probing (`probeCompleted`).
///   Behind a standing queue of ≥ 150 ms (`standingQueue`, `QueueDelay`) the decrease is
///   taken from the **recent** received rate (`recentWindow`, 250 ms of arrivals); an
///   over-use with < 30 ms of standing queue (`minStandingQueue`) is a loaded receiver's
///   stamping and only holds the estimate. A queue behind a bottleneck drains at the
///   bottleneck's rate, so the packets that show the delay rise arrive at about the
///   capacity, while a smoothed or 500 ms rate still reads the rate before the cap (seen
///   end to end: 1.5 Mbit/s into a 300 kbit/s cap read 1.2 Mbit/s, and the estimate
///   needed 5–7 s to leave the top layer).
///   **A queue growing fast** (`QueueOnset`: the newest queued packets' one-way delay grows
///   ≥ 50 ms while they arrive at ≤ half the rate they were sent) cuts at once to 0.85 × the
///   rate they arrive at — the bottleneck's — on the feedback that shows it, before a small
///   tail-drop queue overflows (1.5 Mbit/s into 300 kbit/s fills 30 kB in 0.2 s; the
///   gradient + standing-queue path fires only after it is full). At most one such cut per
///   second, undone unless a standing queue (≥ 30 ms) follows within 500 ms.
/// - **loss-based** (§6): loss > 10 % → × (1 − loss/2) (unless the delay detector saw
///   over-use in the last second: then the loss is the queue overflowing and the delay
///   controller already reacts); loss < 2 % → grow 8 %/s up to the delay-based estimate;
///   in between hold. Loss is sampled over ≥ 1 s and ≥ 20 packets.
///   **Sustained heavy loss** (`LossBurst`: the last `fastLossWindow` of feedback shows loss
///   significantly above 10 %, ≥ 20 packets) cuts the loss-based estimate at once to the
///   recent received rate — what the link actually delivered — instead of × (1 − loss/2)
///   per second: at 80 % loss (1.5 Mbit/s into a 300 kbit/s tail-drop queue) the slow
///   rule needs seconds, while the acknowledged rate *is* the capacity (libwebrtc's
///   `LossBasedBweV2` bounds its estimate by the acknowledged rate the same way; LiveKit's
///   stream allocator takes the received rate as the channel capacity on congestion).
///
/// Fallbacks for subscribers without transport-cc: REMB (the receiver's own estimate) caps
/// the result; receiver-report fraction lost feeds the loss-based controller.
///
/// Pure: every method takes `now` (monotonic µs).
public struct BandwidthEstimator: Sendable {

    public let config: Config
    var sendUnwrapper = SequenceNumberUnwrapper()
    /// Send history: a ring indexed by the unwrapped transport-wide sequence number, allocated
    /// at the first send, so recording a packet never allocates. 2048 entries (32 KB): the
    /// full `sendHistory` (2 s) up to 1,024 packets/s (≈ 10 Mbit/s in 1,200-byte packets),
    /// and 0.8 s at 2,500 packets/s (nine top simulcast layers) — still several feedback
    /// intervals (50–100 ms) plus an RTT; feedback naming an overwritten packet is ignored.
    /// 4096 cost 32 KB more per subscriber, against the 500 KB per participant target.
    private static let historySize = 2048
    var history: [Sent] = []
    var lastSendTime: Int64 = .min
    var referenceUnwrapped: Int64?
    var lastReferenceRaw: UInt32 = 0
    var detector = DelayTrendDetector()
    /// (arrival on the receiver clock, bytes) of acknowledged packets, arrival order.
    var delivered: [(arrival: Int64, size: Int)] = []
    /// Smoothed acknowledged rate (libwebrtc `BitrateEstimator`), fed from `delivered`.
    var acknowledged = AcknowledgedRate()
    var lossReceived = 0
    var lossLost = 0
    var lastLossDecrease: Int64?
    var lastLossUpdate: Int64?
    var lossWindowStart: Int64?
    var lastOveruse: Int64?
    /// Queuing delay of the latest acknowledged packets over the path's base delay.
    var queueDelay = QueueDelay()
    /// The newest acknowledged packets, for the growing-queue test (`QueueOnset`).
    var queueOnset = QueueOnset()
    /// Growing queues acted on (`QueueOnset`): the router re-evaluates layers at once when
    /// this changes.
    public internal(set) var queueOnsets = 0
    /// The drain rate the latest growing-queue cut read, bit/s.
    public internal(set) var lastQueueOnsetBps: Double?
    /// Growing-queue cuts undone because no standing queue followed (`queueOnsetConfirmation`).
    public internal(set) var queueOnsetReverts = 0
    /// The latest growing-queue cut until a standing queue confirms it: when, and the
    /// delay-based estimate and link capacity before it.
    var provisionalCut: (at: Int64, estimate: Double, capacity: Double?)?
    /// 500 ms for a growing-queue cut to be confirmed by a standing queue (≥ `minStandingQueue`
    /// over `QueueDelay.standingWindow`): a real bottleneck that filled for ≥ 150 ms drains for
    /// at least as long again even once the sender backs off, so its smallest delay over 200 ms
    /// stays ≥ 30 ms; a receiver that read slowly for a moment (a starved browser on a
    /// loaded host) is back at the base delay. Unconfirmed, the cut is undone — the layer
    /// switch it caused stays, but the estimate is not stuck near a rate the link never had
    /// (seen end to end at load 17: one such cut to 30 kbit/s, then 15 s below 100 kbit/s).
    static let queueOnsetConfirmation: Int64 = 500_000
    /// 1 s between growing-queue cuts: the rule is for the first reaction to a new
    /// bottleneck; once the sender backs off, the queue drains for up to its length (0.8 s for
    /// NetEmu's 30 kB at 300 kbit/s), and a loaded receiver's stamps during the drain can pass
    /// the test again with a lower rate (seen end to end at load 9: five cuts in 1 s, the last
    /// reading 160k of a 300k link, which paused the video). Later cuts are the slow path's.
    static let queueOnsetInterval: Int64 = 1_000_000
    var lastQueueOnsetCut: Int64?
    /// Per-packet outcomes of the last `fastLossWindow` of feedback (the loss-burst test).
    var lossBurst = LossBurst()
    /// Loss bursts acted on (for stats and tests).
    public internal(set) var lossBursts = 0
    /// Over-uses that held instead of cutting because the delay was not rising
    /// (`Config.minOveruseGrowth`; for stats and tests).
    public internal(set) var overuseHolds = 0
    var lastFeedback: Int64?
    var lastDelayUpdate: Int64?
    var lastDelayDecrease: Int64?
    /// Delivered rate at the last over-use: GCC's link capacity estimate.
    var linkCapacity: Double?
    var probes = ProbeClusters()
    /// Latest valid probe result, bit/s (for stats and tests).
    public internal(set) var lastProbeBps: Double?
    /// The latest probe the estimate accepted, and when: growth toward it is not capped by
    /// the delivered rate (`probeConfirmedHold`).
    var probeConfirmed: (bps: Double, at: Int64)?

    /// Delay-based estimate; nil until the first transport-cc feedback.
    public internal(set) var delayBasedBps: Double?
    /// Loss-based estimate; nil until the first loss sample (transport-cc or RR).
    public internal(set) var lossBasedBps: Double?
    /// Latest REMB, bit/s.
    public internal(set) var rembBps: UInt64?
    /// Latest loss ratio (0…1) from transport-cc or receiver reports.
    public internal(set) var lossRatio: Double?
    /// Delivered rate from the acknowledged packets of the last `deliveryWindow`, bit/s.
    public internal(set) var deliveredBps: Double?
    /// Received rate over the last `recentWindow` of arrivals (at least 4 packets over
    /// ≥ 50 ms), bit/s: what an over-use or a loss burst cuts to.
    public internal(set) var recentReceivedBps: Double?

    public init(config: Config = Config()) {
        self.config = config
    }

    /// A standing queue (≥ `minStandingQueue` over 200 ms, `QueueDelay`) on the path right now:
    /// the link is full, so a probe would only overflow it (the router then does not probe).
    public var queueStanding: Bool { queueDelay.standing >= config.minStandingQueue }

    /// What the delay-gradient detector concludes right now.
    public var usage: BandwidthUsage { detector.usage }

    /// Current estimate, bit/s: the smallest available of delay-based, loss-based and REMB,
    /// `initialBps` before any input, clamped to [minBps, maxBps].
    public var estimateBps: UInt64 {
        var value = Double.infinity
        if let delay = delayBasedBps { value = min(value, delay) }
        if let loss = lossBasedBps { value = min(value, loss) }
        if let remb = rembBps { value = min(value, Double(remb)) }
        if value == .infinity { value = Double(config.initialBps) }
        return UInt64(min(max(value, Double(config.minBps)), Double(config.maxBps)))
    }

    /// 1 s without transport-cc feedback (ten missed 100 ms feedbacks) means the downlink or
    /// its return path is broken or badly congested: from then on −20 % per second, as
    /// libwebrtc's `SendSideBandwidthEstimation` does on feedback timeout.
    public static let feedbackTimeout: Int64 = 1_000_000

    /// The estimate at `now`: `estimateBps`, decayed when transport-cc feedback has stopped
    /// arriving (see `feedbackTimeout`). Pure: does not change the state.
    public func estimate(now: Int64) -> UInt64 {
        let base = estimateBps
        guard let last = lastFeedback, now - last > Self.feedbackTimeout else { return base }
        let seconds = min((now - last - Self.feedbackTimeout) / 1_000_000 + 1, 30)
        var value = Double(base)
        for _ in 0..<seconds { value *= 0.8 }
        return max(UInt64(value), config.minBps)
    }

    // MARK: inputs

    /// Records a packet we sent on this transport with its transport-wide sequence number.
    /// - Parameter probeCluster: set on packets sent back to back as a bandwidth probe
    ///   (padding or RTX at a target rate); at least `minProbePackets` of one cluster must be
    ///   acknowledged for a result.
    public mutating func packetSent(transportSequenceNumber: UInt16, size: Int, now: Int64, probeCluster: Int? = nil) {
        let seq = sendUnwrapper.unwrap(transportSequenceNumber)
        if history.isEmpty { history = Array(repeating: .empty, count: Self.historySize) }
        history[Self.slot(seq)] = Sent(sequence: seq, sendTime: now, size: size, probeCluster: probeCluster)
        lastSendTime = max(lastSendTime, now)
        if let probeCluster { probes.sent(cluster: probeCluster % 65535, size: size, now: now) }
    }

    /// Consumes one transport-cc feedback about our packets (the model: encoded and read
    /// back through `TransportFeedbackView`, one code path; for tests and tools).
    public mutating func transportFeedback(_ feedback: TransportFeedback, now: Int64) {
        guard let body = try? feedback.encodedBody() else { return }
        body.withUnsafeBytes { raw in
            guard let view = try? TransportFeedbackView(body: raw) else { return }
            transportFeedback(view, now: now)
        }
    }

    /// Consumes one transport-cc feedback about our packets, read in place. Allocates nothing
    /// once the send history exists and the windows have reached their steady size
    /// (`BandwidthEstimatorAllocationTests`).
    public mutating func transportFeedback(_ feedback: TransportFeedbackView, now: Int64) {
        lastFeedback = now
        // Receiver clock: the 24-bit reference time unwrapped across feedbacks (64 ms units).
        let raw = feedback.referenceTime & 0xFF_FFFF
        var step = Int64(raw) - Int64(lastReferenceRaw)
        if step > 0x7F_FFFF { step -= 0x100_0000 } else if step < -0x80_0000 { step += 0x100_0000 }
        let reference = (referenceUnwrapped ?? Int64(raw)) + (referenceUnwrapped == nil ? 0 : step)
        referenceUnwrapped = reference
        lastReferenceRaw = raw
        let offset = reference * TransportFeedback.referenceTimeTickMicros - feedback.referenceTimeMicros

        var received = 0
        var lost = 0
        let deliveredBefore = delivered.count
        var results = feedback
        while let result = results.next() {
            let seq = sendUnwrapper.peek(result.sequenceNumber)
            guard var packet = sentPacket(seq) else { continue }
            if let arrival = result.arrivalMicros.map({ $0 + offset }) {
                guard !packet.acked else { continue }
                packet.acked = true
                if packet.reportedLost { lost -= 1 }  // reported lost before, arrived late
                if let cluster = packet.probeCluster {
                    probes.received(cluster: cluster, size: packet.size, arrival: arrival, wasReportedLost: packet.reportedLost)
                }
                received += 1
                detector.add(send: packet.sendTime, arrival: arrival)
                queueDelay.add(oneWayDelay: arrival - packet.sendTime, now: now)
                queueOnset.add(send: packet.sendTime, arrival: arrival, size: packet.size)
                delivered.append((arrival, packet.size))
            } else if !packet.acked, !packet.reportedLost {
                packet.reportedLost = true
                lost += 1
                if let cluster = packet.probeCluster { probes.lost(cluster: cluster) }
            }
            history[Self.slot(seq)] = packet
        }
        lossBurst.add(received: received, lost: max(lost, 0), now: now, window: config.fastLossWindow)
        updateDeliveredRate(newFrom: deliveredBefore)
        if delayBasedBps == nil { delayBasedBps = Double(config.initialBps) }
        queueOnset.trim()
        updateDelayBased(now: now)
        reactToQueueOnset(now: now)
        reactToLossBurst(now: now)
        finishProbes(now: now)
        if lossWindowStart == nil { lossWindowStart = now }
        lossReceived += received
        lossLost += lost
        let total = lossReceived + lossLost
        if total >= config.lossSamplePackets, now - (lastLossUpdate ?? lossWindowStart ?? now) >= config.lossSampleInterval {
            lossSample(ratio: Double(max(lossLost, 0)) / Double(total), now: now)
            lossReceived = 0
            lossLost = 0
        }
    }

    /// A REMB from the subscriber (draft-alvestrand-rmcat-remb-03): caps the estimate.
    public mutating func remb(bitrate: UInt64, now: Int64) {
        rembBps = bitrate
    }

    /// Fraction lost (of 256) from a receiver report block about our stream (RFC 3550
    /// §6.4.1). Used only while no transport-cc feedback arrives: with transport-cc the loss
    /// is known per packet.
    public mutating func receiverReport(fractionLost: UInt8, now: Int64) {
        guard delayBasedBps == nil else { return }
        lossSample(ratio: Double(fractionLost) / 256, now: now)
    }

    /// Result of a probe cluster (packets sent back to back at a target rate, e.g. padding
    /// before a layer upgrade): if the receiver got them at `deliveredBps` without over-use,
    /// the delay-based estimate may jump there (libwebrtc `ProbeBitrateEstimator` →
    /// `AimdRateControl::SetEstimate`).
    ///
    /// Under over-use the probe still counts when no standing queue (≥ `minStandingQueue`)
    /// backs the over-use — the same rule `updateDelayBased` applies (a probe's own 300 ms
    /// burst trips the delay-gradient detector without leaving a queue) — or when it
    /// `saturated` the link (then its reading is 95 % of the rate the link delivered it at:
    /// the capacity). Seen end to end (BrowserSimulcastCapTests, cap run 1 on issue 4's
    /// branch): a growing-queue cut to 190k paused the video under a 300k cap; the
    /// paused-video probe read 269k and was dropped for the over-use its own burst caused,
    /// and the estimate crawled to 220k in 10 s with the video never resumed.
    /// An accepted probe also lifts the delivered-rate cap on growth (`probeConfirmed`).
    public mutating func probeCompleted(deliveredBps probe: Double, saturated: Bool = false, now: Int64) {
        let congested = detector.usage == .overusing && queueDelay.standing >= config.minStandingQueue
        guard !congested || saturated else { return }
        let base = delayBasedBps ?? Double(config.initialBps)
        delayBasedBps = max(base, probe)
        if let loss = lossBasedBps { lossBasedBps = max(loss, probe) }
        linkCapacity = nil
        probeConfirmed = (probe, now)
    }

    /// 5 s: a probe-confirmed rate stays a valid ceiling for growth (`updateDelayBased`) for
    /// the selector's 2 s upgrade hold plus a probe step and its feedback; after that the
    /// delivered rate alone bounds growth again (libwebrtc's 1.5 × acknowledged rule).
    static let probeConfirmedHold: Int64 = 5_000_000

    // MARK: probes

    /// The sender finished probe cluster `cluster` (no more packets will carry it): it is
    /// judged as soon as its packets are reported (`ProbeClusters`).
    public mutating func probeClusterEnded(_ cluster: Int) {
        probes.closed(cluster: cluster % 65535)
    }

    /// 5 packets: libwebrtc's `kMinProbePacketsSent`, fewer give a meaningless rate.
    public static let minProbePackets = ProbeClusters.minPackets

    /// Judges the clusters complete at `now` (`ProbeClusters`): a valid one may raise the
    /// estimate (`probeCompleted`).
    private mutating func finishProbes(now: Int64) {
        while let result = probes.takeFinished(now: now) {
            guard let bps = result.bps else { continue }
            lastProbeBps = bps
            probeCompleted(deliveredBps: bps, saturated: result.saturated, now: now)
        }
    }

    private static func slot(_ sequence: Int64) -> Int { Int(sequence & Int64(historySize - 1)) }

    /// The send record of `sequence`, nil when never sent, overwritten by a newer one, or
    /// older than `sendHistory` before the latest send (feedback that late is ignored).
    private func sentPacket(_ sequence: Int64) -> Sent? {
        guard !history.isEmpty else { return nil }
        let entry = history[Self.slot(sequence)]
        guard entry.holds(sequence), lastSendTime - entry.sendTime <= config.sendHistory else { return nil }
        return entry
    }
}

/// `factor^dt` for dt in 0…1 s, linearised (1 + (factor − 1)·dt): updates come every ~100 ms,
/// so the compounded growth is e^(0.08 t) ≈ 8.3 %/s instead of 8 %/s — no libm needed.
@inline(__always)
func growth(_ factor: Double, _ dt: Double) -> Double {
    1 + (factor - 1) * dt
}
