/// Tuning of `BandwidthEstimator`. Every value has its reason next to it.
extension BandwidthEstimator {
    public struct Config: Equatable, Sendable {
        /// 300 kbit/s: libwebrtc's default start bitrate (`kDefaultStartBitrateBps`).
        public var initialBps: UInt64 = 300_000
        /// 30 kbit/s floor: enough for Opus audio plus RTCP; libwebrtc's congestion controller
        /// minimum is 5 kbit/s, but the SFU never wants to pause audio.
        public var minBps: UInt64 = 30_000
        /// 20 Mbit/s ceiling: above any simulcast ladder a browser sends.
        public var maxBps: UInt64 = 20_000_000
        /// 0.85: GCC's β (§5.5) and libwebrtc's `kDefaultBackoffFactor`.
        public var decreaseFactor = 0.85
        /// 8 %/s: GCC's multiplicative increase η (§5.5, libwebrtc `AimdRateControl`).
        public var increasePerSecond = 1.08
        /// 2 % / 10 %: GCC §6 loss thresholds (libwebrtc `kDefaultLowLossThreshold`,
        /// `kDefaultHighLossThreshold`).
        public var lowLoss = 0.02
        public var highLoss = 0.10
        /// A loss sample spans at least 20 packets (libwebrtc `kLimitNumPackets`) and 1 s: at
        /// ~100 packets/s a 20-packet sample of 5 % random loss reads > 10 % one time in four
        /// (binomial), which would ratchet the estimate down on loss that is not congestion.
        public var lossSamplePackets = 20
        public var lossSampleInterval: Int64 = 1_000_000
        /// 300 ms between loss-based decreases (libwebrtc `kBweDecreaseInterval`), so one burst
        /// of loss reported in several feedbacks halves once, not repeatedly.
        public var lossDecreaseInterval: Int64 = 300_000
        /// 500 ms window for the delivered (acknowledged) rate.
        public var deliveryWindow: Int64 = 500_000
        /// 2 s of send history kept to match feedback; older feedback is ignored.
        public var sendHistory: Int64 = 2_000_000
        /// 250 ms of arrivals for the recent received rate an over-use or a loss burst cuts
        /// to: longer than one 100 ms feedback interval plus a frame interval (a 300 kbit/s
        /// link delivers a 6 kB frame in 160 ms), short against the 0.8 s a bottleneck
        /// queue takes to fill, so it reads the drain rate and not the rate before the cap.
        public var recentWindow: Int64 = 250_000
        /// 300 ms of feedback for the loss-burst test (three feedback intervals): short enough
        /// to act on the first feedbacks that show a tail-drop queue, long enough for 20
        /// packets at the lowest layer plus audio (≈ 75 packets/s).
        public var fastLossWindow: Int64 = 300_000
        /// 150 ms of standing queue (the smallest queuing delay over the last 200 ms of
        /// acknowledged packets, above the path's base delay) before an over-use cuts to the
        /// recent received rate: more than a loaded browser's network-thread stall or a
        /// keyframe burst adds, less than a fifth of a home router's 0.8 s buffer.
        public var standingQueue: Int64 = 150_000
        /// 30 ms of standing queue for an over-use to count at all: a loaded browser stamps
        /// packets in bunches after stalls, which trips the delay-gradient detector, but the
        /// smallest delay over 200 ms stays near the base because some packets in any 200 ms
        /// were not held (seen end to end at load 11: over-use with no queue at the relay cut
        /// a 200 kbit/s subscriber below its lowest layer, and its video paused for 25 s);
        /// a real bottleneck keeps every packet waiting.
        public var minStandingQueue: Int64 = 30_000
        /// 5 ms of one-way delay growth across the last 250 ms of acknowledged packets
        /// (`QueueOnset.delayGrowth`, newest third against oldest) for an over-use to cut:
        /// below it the link delivers what we send, or its queue drains, and a cut to
        /// 0.85 × the acknowledged rate would put the estimate below what is being delivered.
        /// libwebrtc's AIMD does not cut while the trend is normal or falling either; here
        /// the trendline (20 groups, ≈ 0.5–1 s) still says over-use while a queue left by a
        /// cap drains (seen end to end: five cuts while a 300 kbit/s queue drained, the last
        /// reading 160k; a cut 7 s into the cap to 180k, below layer 0 + audio, paused the
        /// video). 5 ms over the ≈ 170 ms between the thirds is a sender ≈ 3 % above the
        /// capacity; anything slower is left to the loss-based controller.
        public var minOveruseGrowth: Int64 = 5_000

        public init() {}
    }
}
