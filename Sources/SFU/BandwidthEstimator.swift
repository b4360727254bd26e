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
    private var sendUnwrapper = SequenceNumberUnwrapper()
    /// Send history: a ring indexed by the unwrapped transport-wide sequence number, allocated
    /// at the first send, so recording a packet never allocates. 2048 entries (32 KB): the
    /// full `sendHistory` (2 s) up to 1,024 packets/s (≈ 10 Mbit/s in 1,200-byte packets),
    /// and 0.8 s at 2,500 packets/s (nine top simulcast layers) — still several feedback
    /// intervals (50–100 ms) plus an RTT; feedback naming an overwritten packet is ignored.
    /// 4096 cost 32 KB more per subscriber, against the 500 KB per participant target.
    private static let historySize = 2048
    private var history: [Sent] = []
    private var lastSendTime: Int64 = .min
    private var referenceUnwrapped: Int64?
    private var lastReferenceRaw: UInt32 = 0
    private var detector = DelayTrendDetector()
    /// (arrival on the receiver clock, bytes) of acknowledged packets, arrival order.
    private var delivered: [(arrival: Int64, size: Int)] = []
    /// Smoothed acknowledged rate (libwebrtc `BitrateEstimator`), fed from `delivered`.
    private var acknowledged = AcknowledgedRate()
    private var lossReceived = 0
    private var lossLost = 0
    private var lastLossDecrease: Int64?
    private var lastLossUpdate: Int64?
    private var lossWindowStart: Int64?
    private var lastOveruse: Int64?
    /// Queuing delay of the latest acknowledged packets over the path's base delay.
    private var queueDelay = QueueDelay()
    /// The newest acknowledged packets, for the growing-queue test (`QueueOnset`).
    private var queueOnset = QueueOnset()
    /// Growing queues acted on (`QueueOnset`): the router re-evaluates layers at once when
    /// this changes.
    public private(set) var queueOnsets = 0
    /// The drain rate the latest growing-queue cut read, bit/s.
    public private(set) var lastQueueOnsetBps: Double?
    /// Growing-queue cuts undone because no standing queue followed (`queueOnsetConfirmation`).
    public private(set) var queueOnsetReverts = 0
    /// The latest growing-queue cut until a standing queue confirms it: when, and the
    /// delay-based estimate and link capacity before it.
    private var provisionalCut: (at: Int64, estimate: Double, capacity: Double?)?
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
    private var lastQueueOnsetCut: Int64?
    /// Per-packet outcomes of the last `fastLossWindow` of feedback (the loss-burst test).
    private var lossBurst = LossBurst()
    /// Loss bursts acted on (for stats and tests).
    public private(set) var lossBursts = 0
    private var lastFeedback: Int64?
    private var lastDelayUpdate: Int64?
    private var lastDelayDecrease: Int64?
    /// Delivered rate at the last over-use: GCC's link capacity estimate.
    private var linkCapacity: Double?
    private var probes: [Int: Probe] = [:]
    /// Latest probe result, bit/s (for stats and tests).
    public private(set) var lastProbeBps: Double?

    /// Delay-based estimate; nil until the first transport-cc feedback.
    public private(set) var delayBasedBps: Double?
    /// Loss-based estimate; nil until the first loss sample (transport-cc or RR).
    public private(set) var lossBasedBps: Double?
    /// Latest REMB, bit/s.
    public private(set) var rembBps: UInt64?
    /// Latest loss ratio (0…1) from transport-cc or receiver reports.
    public private(set) var lossRatio: Double?
    /// Delivered rate from the acknowledged packets of the last `deliveryWindow`, bit/s.
    public private(set) var deliveredBps: Double?
    /// Received rate over the last `recentWindow` of arrivals (at least 4 packets over
    /// ≥ 50 ms), bit/s: what an over-use or a loss burst cuts to.
    public private(set) var recentReceivedBps: Double?

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
        let parts = [delayBasedBps, lossBasedBps, rembBps.map { Double($0) }].compactMap { $0 }
        let value = parts.min() ?? Double(config.initialBps)
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
    }

    /// Consumes one transport-cc feedback about our packets.
    public mutating func transportFeedback(_ feedback: TransportFeedback, now: Int64) {
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
        for result in feedback.packetResults {
            let seq = sendUnwrapper.peek(result.sequenceNumber)
            guard var packet = sentPacket(seq) else { continue }
            if let arrival = result.arrivalMicros.map({ $0 + offset }) {
                guard !packet.acked else { continue }
                packet.acked = true
                if packet.reportedLost { lost -= 1 }  // reported lost before, arrived late
                received += 1
                detector.add(send: packet.sendTime, arrival: arrival)
                queueDelay.add(oneWayDelay: arrival - packet.sendTime, now: now)
                queueOnset.add(send: packet.sendTime, arrival: arrival, size: packet.size)
                delivered.append((arrival, packet.size))
                if let cluster = packet.probeCluster { probeAcked(cluster, packet, arrival: arrival) }
            } else if !packet.acked, !packet.reportedLost {
                packet.reportedLost = true
                lost += 1
            }
            history[Self.slot(seq)] = packet
        }
        lossBurst.add(received: received, lost: max(lost, 0), now: now, window: config.fastLossWindow)
        updateDeliveredRate(newFrom: deliveredBefore)
        if delayBasedBps == nil { delayBasedBps = Double(config.initialBps) }
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
    public mutating func probeCompleted(deliveredBps probe: Double, now: Int64) {
        guard detector.usage != .overusing else { return }
        let base = delayBasedBps ?? Double(config.initialBps)
        delayBasedBps = max(base, probe)
        if let loss = lossBasedBps { lossBasedBps = max(loss, probe) }
        linkCapacity = nil
    }

    // MARK: probes

    /// 5 packets: libwebrtc's `kMinProbePacketsSent`, fewer give a meaningless rate.
    public static let minProbePackets = 5

    private mutating func probeAcked(_ cluster: Int, _ packet: Sent, arrival: Int64) {
        guard var probe = probes[cluster] else {
            probes[cluster] = Probe(firstSend: packet.sendTime, lastSend: packet.sendTime, firstArrival: arrival, lastArrival: arrival,
                                    firstSize: packet.size, lastSize: packet.size, bytes: packet.size, count: 1)
            return
        }
        if packet.sendTime < probe.firstSend { probe.firstSend = packet.sendTime }
        if packet.sendTime >= probe.lastSend { probe.lastSend = packet.sendTime; probe.lastSize = packet.size }
        if arrival < probe.firstArrival { probe.firstArrival = arrival; probe.firstSize = packet.size }
        probe.lastArrival = max(probe.lastArrival, arrival)
        probe.bytes += packet.size
        probe.count += 1
        probes[cluster] = probe
    }

    /// libwebrtc `ProbeBitrateEstimator::HandleProbeAndEstimateBitrate`: send rate without the
    /// last packet, receive rate without the first; invalid when they differ more than 2×;
    /// min of both, and 95 % of the receive rate when it is below 90 % of the send rate (the
    /// probe saturated the link).
    private mutating func finishProbes(now: Int64) {
        // A cluster's stragglers acknowledged after its result, or a cluster that never
        // reached 5 acknowledged packets, is dropped 1 s after its last send.
        probes = probes.filter { $0.value.count >= Self.minProbePackets || now - $0.value.lastSend <= 1_000_000 }
        for (cluster, probe) in probes where probe.count >= Self.minProbePackets {
            probes[cluster] = nil
            let sendSpan = probe.lastSend - probe.firstSend
            let receiveSpan = probe.lastArrival - probe.firstArrival
            guard sendSpan > 0, receiveSpan > 0 else { continue }
            let sendRate = Double((probe.bytes - probe.lastSize) * 8) * 1_000_000 / Double(sendSpan)
            let receiveRate = Double((probe.bytes - probe.firstSize) * 8) * 1_000_000 / Double(receiveSpan)
            guard sendRate / receiveRate <= 2 else { continue }
            var result = min(sendRate, receiveRate)
            if receiveRate < 0.9 * sendRate { result = 0.95 * receiveRate }
            lastProbeBps = result
            probeCompleted(deliveredBps: result, now: now)
        }
    }

    // MARK: controllers

    /// `deliveredBps`: the smoothed acknowledged rate once it has a full window, before that
    /// the raw rate over `deliveryWindow`. `newFrom`: index of this feedback's first packet.
    private mutating func updateDeliveredRate(newFrom first: Int) {
        if first < delivered.count {
            // This feedback's packets in arrival order (reordering on the path reorders them).
            delivered[first...].sort { $0.arrival < $1.arrival }
            for index in first..<delivered.count { acknowledged.add(arrival: delivered[index].arrival, size: delivered[index].size) }
        }
        // The larger of the smoothed and the raw window: the smoothed one ignores a receiver's
        // stall (the raw window reads low), the raw one follows a probe's burst at once (the
        // smoothed one lags, and a decrease right after a probe would cut below the media).
        defer { if let smoothed = acknowledged.bps { deliveredBps = max(smoothed, deliveredBps ?? 0) } }
        guard let latest = delivered.last?.arrival else { return }
        delivered.removeAll { latest - $0.arrival > config.deliveryWindow }
        let recentWindow = config.recentWindow
        let recent = delivered.filter { latest - $0.arrival <= recentWindow }
        recentReceivedBps = Self.rate(of: recent)
        guard let first = delivered.first?.arrival, delivered.count >= 2 else { return }
        // Rate over the window, or over the span seen so far (at least 100 ms to avoid spikes).
        let span = max(latest - first, min(config.deliveryWindow, 100_000))
        let bytes = delivered.dropFirst().reduce(0) { $0 + $1.size }
        deliveredBps = Double(bytes * 8) * 1_000_000 / Double(span)
    }

    private mutating func updateDelayBased(now: Int64) {
        guard var estimate = delayBasedBps else { return }
        let dt = Double(min(max(now - (lastDelayUpdate ?? now), 0), 1_000_000)) / 1_000_000
        lastDelayUpdate = now
        // Over-use without a standing queue (`Config.minStandingQueue`) is the receiver's
        // timing, not the path: hold instead of cutting.
        let usage = detector.usage == .overusing && queueDelay.standing < config.minStandingQueue ? .underusing : detector.usage
        switch usage {
        case .overusing:
            lastOveruse = now
            // One decrease per 200 ms (≈ an RTT plus feedback interval) so the queue can drain.
            if lastDelayDecrease.map({ now - $0 >= 200_000 }) ?? true {
                // The recent rate only behind a standing queue (`Config.standingQueue`): a
                // loaded receiver's stalls also trip over-use, and its recent rate then reads
                // low (seen end to end: 95 kbit/s off a 200 kbit/s flow, video paused with no
                // congestion), while a stall never builds 150 ms of queue that stays.
                let queued = queueDelay.standing >= config.standingQueue
                let rate = (queued ? recentReceivedBps : nil) ?? deliveredBps ?? estimate
                estimate = min(estimate, config.decreaseFactor * rate)
                linkCapacity = rate
                lastDelayDecrease = now
            }
        case .underusing:
            break
        case .normal:
            if let capacity = linkCapacity, estimate > 1.5 * capacity || estimate < 0.5 * capacity {
                linkCapacity = nil  // far from the old capacity: the link changed
            }
            // Increase only while below 1.5 × delivered + 10 kbit/s, and never past it; an
            // estimate already above (after a probe) is kept, not pulled down
            // (libwebrtc `AimdRateControl::ChangeBitrate`).
            let limit = deliveredBps.map { 1.5 * $0 + 10_000 } ?? .infinity
            if estimate < limit {
                let increased: Double
                if linkCapacity != nil {
                    // Additive: one 1200-byte packet per response time (RTT 100 ms + 100 ms),
                    // GCC §5.5 / libwebrtc `AdditiveRateIncrease`.
                    increased = estimate + 1200 * 8 / 0.2 * dt
                } else {
                    increased = estimate * growth(config.increasePerSecond, dt)
                }
                estimate = min(increased, limit)
            }
        }
        delayBasedBps = min(max(estimate, Double(config.minBps)), Double(config.maxBps))
    }

    /// Bytes after the first packet over the span of their arrivals (the first packet's
    /// bytes arrived before the span began); nil for fewer than 4 packets or under 50 ms,
    /// too few to tell a rate from one frame's burst.
    static func rate<Packets: Collection>(of packets: Packets) -> Double? where Packets.Element == (arrival: Int64, size: Int) {
        guard packets.count >= 4, let first = packets.first?.arrival else { return nil }
        var last = first
        var bytes = 0
        for (index, packet) in packets.enumerated() {
            last = max(last, packet.arrival)
            if index > 0 { bytes += packet.size }
        }
        guard last - first >= 50_000 else { return nil }
        return Double(bytes * 8) * 1_000_000 / Double(last - first)
    }

    /// The growing-queue response (`QueueOnset`): a queue growing at ≥ 1 s per second of
    /// sending cuts the delay-based estimate at once to `decreaseFactor` × the rate the queue
    /// drains at, before it overflows. Never raises the estimate; idempotent while the queue
    /// keeps growing at the same capacity.
    private mutating func reactToQueueOnset(now: Int64) {
        queueOnset.trim()
        if let cut = provisionalCut {
            if queueDelay.standing >= config.minStandingQueue {
                provisionalCut = nil
            } else if now - cut.at >= Self.queueOnsetConfirmation {
                provisionalCut = nil
                delayBasedBps = max(delayBasedBps ?? cut.estimate, cut.estimate)
                linkCapacity = cut.capacity
                queueOnsetReverts += 1
            }
        }
        guard lastQueueOnsetCut.map({ now - $0 >= Self.queueOnsetInterval }) ?? true,
              let base = queueDelay.base, let rate = queueOnset.growingQueueRate(base: base),
              let current = delayBasedBps else { return }
        let cut = max(config.decreaseFactor * rate, Double(config.minBps))
        guard cut < current else { return }
        provisionalCut = (now, current, linkCapacity)
        lastQueueOnsetCut = now
        lastQueueOnsetBps = rate
        delayBasedBps = cut
        linkCapacity = rate
        lastOveruse = now
        lastDelayDecrease = now
        queueOnsets += 1
    }

    /// The loss-burst response: sustained heavy loss in the last `fastLossWindow` (see
    /// `LossBurst.isSustained`) sets the loss-based estimate to the recent received rate at
    /// once. Idempotent while the link stays saturated (the received rate is the capacity),
    /// so it cannot ratchet the estimate down feedback after feedback; never raises it.
    private mutating func reactToLossBurst(now: Int64) {
        guard lossBurst.isSustained(above: config.highLoss, minPackets: config.lossSamplePackets),
              let received = recentReceivedBps else { return }
        let current = lossBasedBps ?? Double(estimateBps)
        guard received < current else { return }
        lossBasedBps = max(received, Double(config.minBps))
        lossRatio = lossBurst.ratio
        lastLossDecrease = now
        lastLossUpdate = now
        lossBursts += 1
    }

    private mutating func lossSample(ratio: Double, now: Int64) {
        lossRatio = ratio
        var estimate = lossBasedBps ?? Double(estimateBps)
        let dt = Double(min(max(now - (lastLossUpdate ?? now), 0), 1_000_000)) / 1_000_000
        lastLossUpdate = now
        if ratio > config.highLoss {
            // Loss while the delay detector saw over-use in the last second is a queue
            // overflowing; the delay controller already backs off for it, and counting it twice
            // would drive the estimate far below the capacity it just measured.
            let explainedByDelay = lastOveruse.map { now - $0 <= 1_000_000 } ?? false
            if !explainedByDelay, lastLossDecrease.map({ now - $0 >= config.lossDecreaseInterval }) ?? true {
                estimate *= 1 - ratio / 2
                lastLossDecrease = now
            }
        } else if ratio < config.lowLoss {
            let ceiling = delayBasedBps ?? rembBps.map { Double($0) } ?? Double(config.maxBps)
            estimate = max(estimate, min(estimate * growth(config.increasePerSecond, dt) + 1000 * dt, ceiling))
        }
        lossBasedBps = min(max(estimate, Double(config.minBps)), Double(config.maxBps))
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
