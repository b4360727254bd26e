/// Rate of the packets a receiver acknowledged (transport-cc), smoothed as libwebrtc's
/// `BitrateEstimator` (modules/congestion_controller/goog_cc/bitrate_estimator.cc) does:
/// bytes are summed over 150 ms windows of arrival time (500 ms for the first), and each
/// window's rate updates the estimate by a Bayesian step whose sample variance grows with the
/// sample's distance from the estimate. A far-off window (a receiver that stalled and then
/// acknowledged a bunch, a feedback lost) moves the estimate a little; a lasting change
/// (a capped link) moves it within a second or two.
///
/// Why it matters: an over-use sets the delay-based estimate to 0.85 × this rate (GCC §5.5);
/// a raw 500 ms window read 50 kbit/s off a 120 kbit/s flow on a loaded test host and the
/// estimate fell below the lowest layer (video paused) with no congestion at all.
///
/// Pure: arrival times are passed in (µs, receiver clock).
struct AcknowledgedRate: Sendable {
    /// 150 ms / 500 ms: libwebrtc `kRateWindowMs` / `kInitialRateWindowMs`.
    static let window: Int64 = 150_000
    static let initialWindow: Int64 = 500_000
    /// 10: libwebrtc's `uncertainty_scale`.
    static let uncertaintyScale = 10.0
    /// 5 (kbit/s)²: the variance added per update (process noise), libwebrtc's constant.
    static let processNoise = 5.0

    private var previousArrival: Int64?
    private var windowElapsed: Int64 = 0
    private var windowBytes = 0
    /// kbit/s and its variance; nil before the first full window.
    private var estimateKbps: Double?
    private var variance = 50.0

    /// Current estimate, bit/s.
    var bps: Double? { estimateKbps.map { $0 * 1000 } }

    /// One acknowledged packet, in arrival order.
    mutating func add(arrival: Int64, size: Int) {
        let window = estimateKbps == nil ? Self.initialWindow : Self.window
        if let previous = previousArrival, arrival < previous {
            // Out of order across feedbacks: restart the window (libwebrtc does the same).
            previousArrival = nil
            windowBytes = 0
            windowElapsed = 0
        }
        if let previous = previousArrival {
            windowElapsed += arrival - previous
            if arrival - previous > window {
                // A gap longer than a window: nothing was acknowledged in between.
                windowBytes = 0
                windowElapsed %= window
            }
        }
        previousArrival = arrival
        if windowElapsed >= window {
            let sample = Double(windowBytes * 8) * 1000 / Double(window)  // kbit/s
            windowElapsed -= window
            windowBytes = 0
            update(sampleKbps: sample)
        }
        windowBytes += size
    }

    private mutating func update(sampleKbps sample: Double) {
        guard let estimate = estimateKbps, estimate > 0 else {
            estimateKbps = sample
            return
        }
        let uncertainty = Self.uncertaintyScale * abs(estimate - sample) / estimate
        let sampleVariance = uncertainty * uncertainty
        let predicted = variance + Self.processNoise
        estimateKbps = (sampleVariance * estimate + predicted * sample) / (sampleVariance + predicted)
        variance = sampleVariance * predicted / (sampleVariance + predicted)
    }
}
