/// Per-packet loss over the last few feedbacks, for `BandwidthEstimator`'s fast response to
/// a saturated link (a tail-drop queue overflowing). The regular loss sample spans ≥ 1 s so
/// random loss does not move the estimate; this window is short (300 ms) and therefore
/// asks for *significant* loss: the ratio minus two standard errors (binomial,
/// √(p(1 − p)/n)) must still exceed the high-loss threshold (10 %). 5 % random loss over
/// 20 packets reads ≥ 35 % (7 lost: what 20 packets need to pass) with probability
/// 3 × 10⁻⁵; a
/// 1.5 Mbit/s layer into a 300 kbit/s cap loses ≈ 80 % and passes on its first feedback,
/// 500 kbit/s into it (40 %) passes with 20 packets.
///
/// Pure: `now` is the feedback's arrival (µs).
struct LossBurst: Sendable {
    /// (feedback time, received, lost) per feedback, oldest first.
    private var entries: [(at: Int64, received: Int, lost: Int)] = []
    private var received = 0
    private var lost = 0

    /// Adds one feedback's counts and drops feedbacks older than `window`.
    mutating func add(received newReceived: Int, lost newLost: Int, now: Int64, window: Int64) {
        if newReceived + newLost > 0 {
            entries.append((now, newReceived, newLost))
            received += newReceived
            lost += newLost
        }
        var stale = 0
        while stale < entries.count, now - entries[stale].at > window {
            received -= entries[stale].received
            lost -= entries[stale].lost
            stale += 1
        }
        if stale > 0 { entries.removeSubrange(0..<stale) }
    }

    var packets: Int { received + lost }

    /// Loss ratio over the window (0 when empty).
    var ratio: Double { packets > 0 ? Double(lost) / Double(packets) : 0 }

    /// True when the window holds at least `minPackets` and its loss ratio is above
    /// `threshold` by more than two standard errors.
    func isSustained(above threshold: Double, minPackets: Int) -> Bool {
        let n = Double(packets)
        guard packets >= minPackets, n > 0 else { return false }
        let p = ratio
        return p - 2 * (p * (1 - p) / n).squareRoot() > threshold
    }
}

/// Queuing delay on the path, from transport-cc: each acknowledged packet's one-way delay
/// (arrival on the receiver's clock − our send time; the clocks' offset cancels) minus the
/// smallest such delay of the last 10 s (the base: propagation with an empty queue).
/// `standing` is the *smallest* queuing delay over the last 200 ms: a bottleneck's queue
/// keeps every packet waiting, while a receiver stall or a keyframe burst delays some
/// packets and not the ones around them.
///
/// Pure: `now` is the feedback's arrival (µs).
struct QueueDelay: Sendable {
    /// 10 s of base delay, kept as two 5 s epochs (the minimum of the current and the
    /// previous): a route change or clock drift is forgotten within 10 s.
    static let baseEpoch: Int64 = 5_000_000
    static let standingWindow: Int64 = 200_000

    private var epochStart: Int64?
    private var currentMin = Int64.max
    private var previousMin = Int64.max
    /// (feedback time, queuing delay) of recent packets.
    private var recent: [(at: Int64, delay: Int64)] = []

    mutating func add(oneWayDelay: Int64, now: Int64) {
        if epochStart == nil || now - (epochStart ?? now) >= Self.baseEpoch {
            epochStart = now
            previousMin = currentMin
            currentMin = .max
        }
        currentMin = min(currentMin, oneWayDelay)
        let base = min(currentMin, previousMin)
        recent.append((now, oneWayDelay - base))
        // Oldest first (feedback times only grow): drop the leading stale ones in place.
        var stale = 0
        while stale < recent.count, now - recent[stale].at > Self.standingWindow { stale += 1 }
        if stale > 0 { recent.removeSubrange(0..<stale) }
    }

    /// The path's base one-way delay (smallest of the last 5–10 s, µs; receiver clock minus
    /// ours), nil before the first packet.
    var base: Int64? {
        let value = min(currentMin, previousMin)
        return value == .max ? nil : value
    }

    /// Smallest queuing delay over the last `standingWindow` (µs), 0 when none.
    var standing: Int64 {
        guard !recent.isEmpty else { return 0 }
        var smallest = Int64.max
        var index = 0
        while index < recent.count { smallest = min(smallest, recent[index].delay); index += 1 }
        return smallest
    }
}
