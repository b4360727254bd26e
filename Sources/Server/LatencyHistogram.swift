/// A cumulative histogram with fixed bucket bounds, in the Prometheus text exposition's
/// `histogram` form (https://prometheus.io/docs/instrumenting/exposition_formats/): the
/// count per bound never decreases, so a scraper takes differences between two scrapes and
/// gets the distribution of that interval, which a ring of recent samples cannot give.
/// Fixed memory and O(buckets) per sample, cheap enough for every frame on the hub's loop.
struct LatencyHistogram: Equatable {
    /// Upper bounds (inclusive), ascending; a last implicit `+Inf` bucket catches the rest.
    let bounds: [Int64]
    private(set) var counts: [Int64]
    private(set) var sum: Int64 = 0
    private(set) var count: Int64 = 0
    /// Largest sample since the start (a stall shows here even when it is rarer than 1 %).
    private(set) var max: Int64 = 0

    /// Microsecond bounds from 50 µs to 1 s: the hub's frame costs are ~0.1 ms, issue 2's
    /// target is 5 ms at p99, and the stalls being looked for were tens of ms.
    static let microsecondBounds: [Int64] = [50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000,
                                              50_000, 100_000, 250_000, 1_000_000]
    /// Frame-count bounds for batch sizes (1 … 256, the old count cap).
    static let countBounds: [Int64] = [1, 2, 4, 8, 16, 32, 64, 128, 256]

    /// `bounds` must be ascending; an unsorted list is sorted (a programming slip must not
    /// put samples in the wrong bucket).
    init(bounds: [Int64]) {
        self.bounds = bounds.sorted()
        counts = [Int64](repeating: 0, count: bounds.count + 1)
    }

    mutating func record(_ value: Int64) {
        var index = 0
        while index < bounds.count, value > bounds[index] { index += 1 }
        counts[index] += 1
        sum += value
        count += 1
        if value > max { max = value }
    }

    /// The cumulative count of samples ≤ each bound, then the total (`+Inf`).
    var cumulative: [Int64] {
        var running: Int64 = 0
        return counts.map { running += $0; return running }
    }

    /// The smallest bound that at least `p` of the samples are at or under (nil when empty);
    /// past the last bound, the largest sample.
    func upperBound(atQuantile p: Double) -> Int64? {
        guard count > 0 else { return nil }
        let needed = Int64((Double(count) * p).rounded(.up))
        for (index, total) in cumulative.enumerated() where total >= Swift.max(1, needed) {
            return index < bounds.count ? bounds[index] : max
        }
        return max
    }

    /// Prometheus text lines for metric `name` (with `# HELP` and `# TYPE`).
    func exposition(name: String, help: String) -> [String] {
        var lines = ["# HELP \(name) \(help)", "# TYPE \(name) histogram"]
        for (index, total) in cumulative.enumerated() {
            let le = index < bounds.count ? String(bounds[index]) : "+Inf"
            lines.append("\(name)_bucket{le=\"\(le)\"} \(total)")
        }
        lines.append("\(name)_sum \(sum)")
        lines.append("\(name)_count \(count)")
        lines.append("# HELP \(name)_max Largest sample since the start.")
        lines.append("# TYPE \(name)_max gauge")
        lines.append("\(name)_max \(max)")
        return lines
    }
}
