import SplitMix

/// Latency samples of one stage in microseconds (client monotonic clock,
/// `g_get_monotonic_time`). Bounded: keeps at most ``capacity`` samples (reservoir beyond).
struct LatencyRecorder {
    /// 2,000,000 samples × 8 bytes = 16 MB worst case: a 20 s run at 1,000 setups/s records
    /// ~20,000 per stage; the cap only matters for hour-long runs.
    static let capacity = 2_000_000
    private(set) var samples: [Int64] = []
    private(set) var count = 0
    private var rng = SplitMix64(seed: 0x5EED)

    mutating func record(_ micros: Int64) {
        count += 1
        if samples.count < Self.capacity {
            samples.append(max(0, micros))
        } else {
            // Reservoir sampling (Vitter's algorithm R) keeps the sample uniform.
            let slot = Int(rng.next() % UInt64(count))
            if slot < Self.capacity { samples[slot] = max(0, micros) }
        }
    }

    /// Adds `other`'s samples as if they had been recorded here, after these. Exact while
    /// neither recorder reached ``capacity``; beyond it the merged reservoir counts each of
    /// `other`'s kept samples once (its skipped samples only raise ``count``).
    mutating func absorb(_ other: LatencyRecorder) {
        for sample in other.samples { record(sample) }
        count += other.count - other.samples.count
    }

    mutating func reset() {
        samples.removeAll(keepingCapacity: true)
        count = 0
    }

    /// p50/p95/p99/max in milliseconds (nearest-rank percentiles).
    func summary() -> LatencySummary {
        guard !samples.isEmpty else { return LatencySummary(count: 0, p50: 0, p95: 0, p99: 0, max: 0) }
        let sorted = samples.sorted()
        func rank(_ p: Double) -> Double {
            let index = min(sorted.count - 1, max(0, Int((p * Double(sorted.count)).rounded(.up)) - 1))
            return Double(sorted[index]) / 1000
        }
        return LatencySummary(count: count, p50: rank(0.50), p95: rank(0.95), p99: rank(0.99),
                              max: Double(sorted[sorted.count - 1]) / 1000)
    }
}

/// One stage's figures in milliseconds.
public struct LatencySummary: Codable, Equatable, Sendable {
    public var count: Int
    public var p50: Double
    public var p95: Double
    public var p99: Double
    public var max: Double
}
