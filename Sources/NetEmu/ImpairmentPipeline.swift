/// The per-direction path model: pure, with `now` passed in (nanoseconds, any monotonic
/// origin). The relay's thread owns one per direction; tests can drive it directly.
///
/// Order, as on a real path: random loss, Gilbert–Elliott loss, the bottleneck (token bucket +
/// FIFO, tail drop), then propagation delay with jitter. Without reordering, a packet's
/// departure is clamped to the latest departure scheduled so far, so order is kept and each
/// packet is delayed at least as long as the previous one would still wait.
public struct ImpairmentPipeline: Sendable {
    /// The outcome for one datagram.
    public enum Decision: Sendable, Equatable {
        case drop(DropReason)
        /// Leave at `atNs`; `overtakes` when an earlier arrival leaves later.
        case deliver(atNs: UInt64, overtakes: Bool)
    }

    public private(set) var impairment: Impairment
    private var rng: SeededRandom
    /// Gilbert–Elliott state: true = bad.
    public private(set) var inBadState = false
    // Token bucket: `tokens` bytes available at time `tokensAt` (may lie in the future while a
    // backlog drains).
    private var tokens: Double = 0
    private var tokensAt: UInt64 = 0
    /// Departure times and sizes of packets still in the bottleneck queue (FIFO).
    private var queue: [(departNs: UInt64, size: Int)] = []
    private var queueHead = 0
    public private(set) var queuedBytes = 0
    private var latestDelivery: UInt64 = 0

    public init(impairment: Impairment = .none, seed: UInt64) {
        self.impairment = impairment
        self.rng = SeededRandom(seed: seed)
        tokens = Double(impairment.rate?.burstBytes ?? 0)
    }

    /// Changes the model in place. Packets already scheduled keep their times; a new loss model
    /// starts in the good state; a new rate cap starts with a full bucket.
    public mutating func update(_ new: Impairment, now: UInt64) {
        if new.burstLoss != impairment.burstLoss { inBadState = false }
        if new.rate != impairment.rate {
            if new.rate == nil {
                queue.removeAll(keepingCapacity: true)
                queueHead = 0
                queuedBytes = 0
            }
            tokens = Double(new.rate?.burstBytes ?? 0)
            tokensAt = max(tokensAt, now)
        }
        impairment = new
    }

    /// Decides the fate of one datagram of `size` bytes arriving at `now`.
    public mutating func admit(size: Int, now: UInt64) -> Decision {
        if rng.chance(impairment.loss) { return .drop(.randomLoss) }
        if let ge = impairment.burstLoss {
            if inBadState {
                if rng.chance(ge.badToGood) { inBadState = false }
            } else if rng.chance(ge.goodToBad) {
                inBadState = true
            }
            if rng.chance(inBadState ? ge.lossInBad : ge.lossInGood) { return .drop(.burstLoss) }
        }
        var leave = now
        if let rate = impairment.rate {
            guard let depart = bottleneck(rate, size: size, now: now) else { return .drop(.queueFull) }
            leave = depart
        }
        var delay = impairment.delayMs * 1e6
        if impairment.jitterMs > 0 {
            let j = impairment.jitterMs * 1e6
            switch impairment.jitterDistribution {
            case .uniform: delay += (rng.unit() * 2 - 1) * j
            case .normal: delay += min(max(rng.gaussian(), -3), 3) * j
            }
        }
        var deliver = leave &+ UInt64(max(delay, 0).rounded())
        if !impairment.allowReordering { deliver = max(deliver, latestDelivery) }
        let overtakes = deliver < latestDelivery
        latestDelivery = max(latestDelivery, deliver)
        return .deliver(atNs: deliver, overtakes: overtakes)
    }

    /// Token bucket + FIFO. Returns the time the packet leaves the bottleneck, or nil when the
    /// queue would overflow (nothing changes then).
    private mutating func bottleneck(_ rate: RateCap, size: Int, now: UInt64) -> UInt64? {
        while queueHead < queue.count, queue[queueHead].departNs <= now {
            queuedBytes -= queue[queueHead].size
            queueHead += 1
        }
        // 1024: compact the FIFO's consumed prefix now and then instead of on every packet.
        if queueHead > 1024, queueHead * 2 > queue.count {
            queue.removeFirst(queueHead)
            queueHead = 0
        }
        let bytesPerNs = rate.bitsPerSecond / 8e9
        let base = max(now, tokensAt)
        var available = tokens
        if base > tokensAt {
            available = min(Double(rate.burstBytes), tokens + Double(base - tokensAt) * bytesPerNs)
        }
        let depart: UInt64
        let remaining: Double
        if available >= Double(size) {
            depart = base
            remaining = available - Double(size)
        } else {
            depart = base + UInt64(((Double(size) - available) / bytesPerNs).rounded(.up))
            remaining = 0
        }
        if depart > now {
            guard queuedBytes + size <= rate.queueLimitBytes else { return nil }
            queue.append((depart, size))
            queuedBytes += size
        }
        tokens = remaining
        tokensAt = depart
        return depart
    }
}
