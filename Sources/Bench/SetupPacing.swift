/// When a call pair starts its setups (``BenchPair``): the first after a phase, then at most
/// one per `interval` on average.
///
/// Why not all pairs at once, every `interval`: pairs that start together and complete a
/// setup well within the interval stay in step for the whole run, so at light load every
/// stage of every pair reaches the server in the same millisecond. With 5 pairs, 15
/// `call.ringing` and 10 candidates arrive as one burst each 112 ms, and the last frame of a
/// burst waits behind the others on the server (batches of 8–16 frames at 44 setups/s,
/// docs/benchmarks.md, "Call pairs out of step"). Callers of a real deployment place their
/// calls independently. So each pair starts at a random phase within the first interval,
/// and each gap is `interval` ± `jitterFraction / 2` of it (uniform), so that phases keep
/// drifting and no two pairs stay together or apart for the whole run; the mean gap is
/// still `interval`, so the offered rate at light load is what it was. `aligned` keeps the
/// old schedule (every pair at once, exact gaps): a worst case of synchronized callers.
///
/// Pure: the caller passes the random source.
struct SetupPacing: Equatable, Sendable {
    /// Mean gap between two setup starts of one pair (ms): ``BenchPair/minimumSetupIntervalMs(commandsPerSecond:)``.
    let intervalMs: Int64
    /// No phase and no jitter.
    let aligned: Bool
    /// 0.2: gaps of 0.9–1.1 intervals. The shortest gap asks a device for 100 % of the
    /// server's command rate (the interval is set at 90 %) for one setup, 5 commands, which
    /// the token bucket's burst (`limits.command_burst`, 100) absorbs; the phases move by
    /// ~6 ms (one standard deviation) per setup, so pairs that meet part within a few setups.
    static let jitterFraction = 0.2

    init(intervalMs: Int64, aligned: Bool = false) {
        self.intervalMs = max(0, intervalMs)
        self.aligned = aligned
    }

    /// The mean gap of each of `pairs` pairs that together offer `offeredRate` setups/s:
    /// `pairs / offeredRate` seconds, rounded to the millisecond, and never below
    /// `minimumMs` (``BenchPair/minimumSetupIntervalMs(commandsPerSecond:)``: faster, the
    /// server answers `rateLimited`). nil rate: `minimumMs`, the closed loop's pace.
    static func intervalMs(pairs: Int, offeredRate: Double?, minimumMs: Int64) -> Int64 {
        guard let offeredRate, offeredRate > 0, pairs > 0 else { return minimumMs }
        let interval = (Double(pairs) * 1000 / offeredRate).rounded()
        // Above a day per setup the run would see none: clamp before converting.
        return max(minimumMs, Int64(min(interval, 86_400_000)))
    }

    /// Setups/s that `pairs` pairs offer at a mean gap of `intervalMs`.
    static func rate(pairs: Int, intervalMs: Int64) -> Double {
        intervalMs > 0 ? Double(pairs) * 1000 / Double(intervalMs) : 0
    }

    /// Delay before the pair's first setup: uniform in [0, interval), or 0 when aligned.
    func firstDelayMs<R: RandomNumberGenerator>(using random: inout R) -> Int64 {
        guard !aligned, intervalMs > 0 else { return 0 }
        return Int64.random(in: 0 ..< intervalMs, using: &random)
    }

    /// Gap from one setup's start to the earliest start of the next: uniform in
    /// [interval − jitter/2, interval + jitter/2], or exactly the interval when aligned.
    func gapMs<R: RandomNumberGenerator>(using random: inout R) -> Int64 {
        let half = Int64((Double(intervalMs) * Self.jitterFraction / 2).rounded())
        guard !aligned, half > 0 else { return intervalMs }
        return intervalMs + Int64.random(in: -half ... half, using: &random)
    }
}
