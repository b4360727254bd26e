/// The last N command handling times (µs), for percentiles on /metrics. A ring buffer: fixed
/// memory whatever the load.
struct LatencyWindow {
    /// 4096: enough samples for a stable p99 over the last seconds at benchmark rates.
    static let capacity = 4096
    private var samples = [Int64](repeating: 0, count: capacity)
    private var count = 0
    private var next = 0
    private(set) var total: Int64 = 0

    mutating func record(_ micros: Int64) {
        samples[next] = micros
        next = (next + 1) % Self.capacity
        count = min(count + 1, Self.capacity)
        total += 1
    }

    func percentile(_ p: Double) -> Int64? {
        guard count > 0 else { return nil }
        let sorted = samples[0..<count].sorted()
        let index = min(count - 1, Int((Double(count) * p).rounded(.up)) - 1)
        return sorted[max(0, index)]
    }
}
