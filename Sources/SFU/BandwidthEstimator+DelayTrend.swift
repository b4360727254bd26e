/// What the delay-gradient detector concludes (GCC, draft-ietf-rmcat-gcc-02 §5.4).
public enum BandwidthUsage: String, Equatable, Sendable {
    case normal, overusing, underusing
}

/// Delay-gradient over-use detector, a simplified port of libwebrtc's `InterArrival` +
/// `TrendlineEstimator` (modules/congestion_controller/goog_cc/trendline_estimator.cc):
/// packets sent within 5 ms form a group; for consecutive groups the one-way delay variation
/// is (arrival gap − send gap); its running sum, smoothed, is regressed over the last 20
/// groups, and the slope (scaled) is compared with an adaptive threshold. A growing queue
/// makes the slope positive → over-use.
struct DelayTrendDetector: Sendable {
    /// 5 ms: libwebrtc's `kTimestampGroupLengthUs`; a pacer burst counts as one group.
    static let groupLength: Int64 = 5_000
    /// 20 groups: `kDefaultTrendlineWindowSize`.
    static let window = 20
    /// 0.9: `kDefaultTrendlineSmoothingCoeff`.
    static let smoothing = 0.9
    /// 4: `kDefaultTrendlineThresholdGain` (slope × min(deltas, 60) × gain vs threshold).
    static let thresholdGain = 4.0
    /// 10 ms of continuous over-use before signalling (`kOverUsingTimeThreshold`).
    static let overuseTime = 10.0
    /// Adaptive threshold: 12.5 ms initial, k_up 0.0087, k_down 0.039, clamped to 6…600
    /// (`OveruseDetector`, GCC §5.4), so a competing TCP flow does not starve us.
    static let initialThreshold = 12.5
    static let kUp = 0.0087
    static let kDown = 0.039

    struct Group {
        var firstSend: Int64
        var lastSend: Int64
        var lastArrival: Int64
        var firstArrival: Int64
    }

    private var current: Group?
    private var previous: Group?
    private var firstArrival: Int64?
    private var accumulatedDelay = 0.0
    private var smoothedDelay = 0.0
    private var samples: [(x: Double, y: Double)] = []
    private var deltaCount = 0
    private var threshold = initialThreshold
    private var lastThresholdUpdate: Int64?
    private var overuseStart = 0.0
    private var overuseCount = 0
    private var previousTrend = 0.0
    private(set) var usage = BandwidthUsage.normal
    /// Last modified trend (for stats and tests).
    private(set) var trend = 0.0

    /// Feeds one received packet, in send order: send time (our clock) and arrival time
    /// (the receiver's clock; only differences matter).
    mutating func add(send: Int64, arrival: Int64) {
        guard var group = current else {
            current = Group(firstSend: send, lastSend: send, lastArrival: arrival, firstArrival: arrival)
            return
        }
        if (send - group.firstSend <= Self.groupLength && send >= group.firstSend) || Self.belongsToBurst(group, send: send, arrival: arrival) {
            group.lastSend = max(group.lastSend, send)
            group.lastArrival = max(group.lastArrival, arrival)
            current = group
            return
        }
        if send < group.firstSend { return }  // reordered across groups: ignore, as libwebrtc does
        if let previous {
            let sendDelta = Double(group.lastSend - previous.lastSend) / 1000
            let arrivalDelta = Double(group.lastArrival - previous.lastArrival) / 1000
            update(delayVariation: arrivalDelta - sendDelta, sendDelta: sendDelta, arrival: group.lastArrival)
        }
        previous = group
        current = Group(firstSend: send, lastSend: send, lastArrival: arrival, firstArrival: arrival)
    }

    /// libwebrtc `InterArrival::BelongsToBurst`: a packet that arrives within 5 ms of the
    /// group's last one, sooner after it than it was sent (negative propagation delta), joins
    /// the group whatever its send time. Such bunches are the receiver (or a hop) handing over
    /// packets held up by its own scheduling — a browser's network thread on a loaded host
    /// reads tens of ms of packets at once — not a queue on the path: counted as separate
    /// groups, the stall before the bunch reads as a delay increase and trips over-use.
    static func belongsToBurst(_ group: Group, send: Int64, arrival: Int64) -> Bool {
        let arrivalDelta = arrival - group.lastArrival
        let sendDelta = send - group.lastSend
        if sendDelta == 0 { return true }
        return arrivalDelta >= 0 && arrivalDelta <= burstDelta && arrivalDelta - sendDelta < 0
            && arrival - group.firstArrival < maxBurstDuration
    }

    /// 5 ms: libwebrtc's `kBurstDeltaThreshold`.
    static let burstDelta: Int64 = 5_000
    /// 100 ms: libwebrtc's `kMaxBurstDuration` (InterArrivalDelta): a group grows by bursts for
    /// at most this long, so a queue draining back to back still yields delay samples.
    static let maxBurstDuration: Int64 = 100_000

    private mutating func update(delayVariation: Double, sendDelta: Double, arrival: Int64) {
        deltaCount = min(deltaCount + 1, 1000)
        accumulatedDelay += delayVariation
        smoothedDelay = Self.smoothing * smoothedDelay + (1 - Self.smoothing) * accumulatedDelay
        let origin = firstArrival ?? arrival
        firstArrival = origin
        samples.append((Double(arrival - origin) / 1000, smoothedDelay))
        if samples.count > Self.window { samples.removeSubrange(0..<1) }
        guard samples.count == Self.window, let slope = Self.slope(samples) else { return }
        detect(slope: slope, sendDelta: sendDelta, now: arrival)
    }

    private static func slope(_ points: [(x: Double, y: Double)]) -> Double? {
        var sumX = 0.0, sumY = 0.0
        var index = 0
        while index < points.count { sumX += points[index].x; sumY += points[index].y; index += 1 }
        let meanX = sumX / Double(points.count)
        let meanY = sumY / Double(points.count)
        var numerator = 0.0
        var denominator = 0.0
        index = 0
        while index < points.count {
            let point = points[index]
            numerator += (point.x - meanX) * (point.y - meanY)
            denominator += (point.x - meanX) * (point.x - meanX)
            index += 1
        }
        return denominator == 0 ? nil : numerator / denominator
    }

    private mutating func detect(slope: Double, sendDelta: Double, now: Int64) {
        let modified = Double(min(deltaCount, 60)) * slope * Self.thresholdGain
        trend = modified
        if modified > threshold {
            overuseStart = overuseCount == 0 ? sendDelta / 2 : overuseStart + sendDelta
            overuseCount += 1
            if overuseStart > Self.overuseTime, overuseCount > 1, modified >= previousTrend {
                overuseStart = 0
                overuseCount = 0
                usage = .overusing
            }
        } else if modified < -threshold {
            overuseStart = 0
            overuseCount = 0
            usage = .underusing
        } else {
            overuseStart = 0
            overuseCount = 0
            usage = .normal
        }
        previousTrend = modified
        adaptThreshold(modified, now: now)
    }

    private mutating func adaptThreshold(_ modified: Double, now: Int64) {
        defer { lastThresholdUpdate = now }
        guard let last = lastThresholdUpdate else { return }
        // libwebrtc skips samples far above the threshold (a spike is not a new normal).
        guard abs(modified) <= threshold + 15 else { return }
        let k = abs(modified) < threshold ? Self.kDown : Self.kUp
        let dt = Double(min(now - last, 100_000)) / 1000
        threshold = min(max(threshold + k * (abs(modified) - threshold) * dt, 6), 600)
    }
}
