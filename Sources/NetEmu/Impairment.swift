/// Which way a datagram travels through the relay.
///
/// The relay sits between a "client" (whoever sends to the relay's port first, e.g. a peer that
/// was given the relay's address as the server candidate) and the configured target.
public enum Direction: Int, Sendable, CaseIterable, CustomStringConvertible {
    /// Client → target (a publisher's uplink when the relay stands in for the server).
    case uplink = 0
    /// Target → client (a subscriber's downlink when the relay stands in for the server).
    case downlink = 1

    public var description: String { self == .uplink ? "uplink" : "downlink" }
}

/// Shape of the jitter added to the fixed delay.
public enum JitterDistribution: Sendable, Equatable {
    /// Uniform in [−jitter, +jitter].
    case uniform
    /// Normal with standard deviation = jitter, clipped to ±3σ (netem's "normal" table is
    /// likewise bounded) so one draw can not hold a packet for seconds.
    case normal
}

/// Two-state Markov loss model (Gilbert–Elliott). Per packet, the state first moves
/// (good→bad with `goodToBad`, bad→good with `badToGood`), then the packet is lost with the
/// state's loss probability. With `lossInBad` = 1 and `lossInGood` = 0 the mean burst length is
/// 1 / `badToGood` and the long-run loss is goodToBad / (goodToBad + badToGood).
/// See RFC 3611 §4.7.2 (burst metrics) and netem's `loss gemodel`.
public struct GilbertElliott: Sendable, Equatable {
    public var goodToBad: Double
    public var badToGood: Double
    public var lossInBad: Double
    public var lossInGood: Double

    public init(goodToBad: Double, badToGood: Double, lossInBad: Double = 1, lossInGood: Double = 0) {
        self.goodToBad = goodToBad
        self.badToGood = badToGood
        self.lossInBad = lossInBad
        self.lossInGood = lossInGood
    }

    /// Long-run fraction of packets lost.
    public var stationaryLoss: Double {
        let sum = goodToBad + badToGood
        guard sum > 0 else { return lossInGood }
        let pBad = goodToBad / sum
        return pBad * lossInBad + (1 - pBad) * lossInGood
    }
}

/// A bottleneck link: token bucket refilled at `bitsPerSecond`, `burstBytes` deep, in front of a
/// FIFO of at most `queueLimitBytes`. Packets that find no tokens wait in the FIFO (queueing
/// delay grows while the offered rate is above the cap); packets that would overflow it are
/// dropped (tail drop, like `tc tbf limit`). Worst queueing delay = queueLimitBytes × 8 / rate.
public struct RateCap: Sendable, Equatable {
    public var bitsPerSecond: Double
    /// 1500 bytes: one MTU-sized packet may pass without waiting, like tbf's minimum burst.
    public var burstBytes: Int
    /// 30,000 bytes: 0.8 s of queue at 300 kbit/s, about what a home router's buffer holds.
    public var queueLimitBytes: Int

    public init(bitsPerSecond: Double, burstBytes: Int = 1500, queueLimitBytes: Int = 30_000) {
        self.bitsPerSecond = bitsPerSecond
        self.burstBytes = burstBytes
        self.queueLimitBytes = queueLimitBytes
    }

    /// Longest time a packet can wait in the queue, in milliseconds.
    public var maxQueueDelayMs: Double { Double(queueLimitBytes) * 8 / bitsPerSecond * 1000 }
}

/// What the relay does to one direction. Applied in the order of a real path: loss on the wire
/// (random, then bursty), the bottleneck (rate cap), then propagation delay with jitter.
public struct Impairment: Sendable, Equatable {
    /// Independent random loss probability, 0…1.
    public var loss: Double
    /// Bursty loss; applied in addition to `loss`.
    public var burstLoss: GilbertElliott?
    /// Fixed one-way delay, milliseconds.
    public var delayMs: Double
    /// Jitter around `delayMs`, milliseconds (see `jitterDistribution`). Delay never goes below 0.
    public var jitterMs: Double
    public var jitterDistribution: JitterDistribution
    /// When false, packets keep FIFO order: each is delayed at least as much as the one before
    /// it left (like netem with `rate` or a single queue). When true, jitter may reorder.
    public var allowReordering: Bool
    public var rate: RateCap?
    /// When true, only RTP/RTCP (first byte 128–191, RFC 7983 §7) is impaired; STUN and DTLS
    /// pass at once, so ICE and the handshake finish without retransmission timers and a test
    /// measures media repair alone. Off by default: a real path treats all datagrams alike.
    public var mediaOnly: Bool

    public init(loss: Double = 0, burstLoss: GilbertElliott? = nil, delayMs: Double = 0, jitterMs: Double = 0,
                jitterDistribution: JitterDistribution = .uniform, allowReordering: Bool = true, rate: RateCap? = nil,
                mediaOnly: Bool = false) {
        self.loss = loss
        self.burstLoss = burstLoss
        self.delayMs = delayMs
        self.jitterMs = jitterMs
        self.jitterDistribution = jitterDistribution
        self.allowReordering = allowReordering
        self.rate = rate
        self.mediaOnly = mediaOnly
    }

    /// A clean path.
    public static let none = Impairment()

    /// Throws `NetEmuError.badImpairment(field)` for probabilities outside 0…1, negative or
    /// non-finite times, or a rate cap that is not positive.
    public func validate() throws(NetEmuError) {
        func probability(_ p: Double, _ field: String) throws(NetEmuError) {
            guard p.isFinite, p >= 0, p <= 1 else { throw .badImpairment(field) }
        }
        try probability(loss, "loss")
        if let ge = burstLoss {
            try probability(ge.goodToBad, "burstLoss.goodToBad")
            try probability(ge.badToGood, "burstLoss.badToGood")
            try probability(ge.lossInBad, "burstLoss.lossInBad")
            try probability(ge.lossInGood, "burstLoss.lossInGood")
        }
        // 60 s: far beyond any path a test models; keeps the timer arithmetic in range.
        guard delayMs.isFinite, delayMs >= 0, delayMs <= 60_000 else { throw .badImpairment("delayMs") }
        guard jitterMs.isFinite, jitterMs >= 0, jitterMs <= 60_000 else { throw .badImpairment("jitterMs") }
        if let rate {
            guard rate.bitsPerSecond.isFinite, rate.bitsPerSecond >= 1 else { throw .badImpairment("rate.bitsPerSecond") }
            guard rate.burstBytes >= 0 else { throw .badImpairment("rate.burstBytes") }
            guard rate.queueLimitBytes >= 0 else { throw .badImpairment("rate.queueLimitBytes") }
        }
    }
}
