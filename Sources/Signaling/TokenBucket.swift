/// Per-device command rate limit: a token bucket refilled continuously.
///
/// Pure: the caller passes the monotonic time in milliseconds.
public struct TokenBucket: Sendable, Equatable {
    public let ratePerSecond: Double
    public let burst: Double
    public private(set) var tokens: Double
    public private(set) var lastRefillMs: Int64

    public init(ratePerSecond: Double, burst: Double, now: Int64) {
        self.ratePerSecond = ratePerSecond
        self.burst = burst
        self.tokens = burst
        self.lastRefillMs = now
    }

    /// Takes one token if available.
    public mutating func take(now: Int64) -> Bool {
        if now > lastRefillMs {
            tokens = min(burst, tokens + Double(now - lastRefillMs) * ratePerSecond / 1000)
            lastRefillMs = now
        }
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
