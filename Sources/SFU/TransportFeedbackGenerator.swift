import RTP

/// Receive side of transport-wide congestion control towards one publisher transport
/// (draft-holmer-rmcat-transport-wide-cc-extensions-01 §3.1): remembers the arrival time of
/// each transport-wide sequence number and periodically reports them, so the publisher's
/// send-side estimator (GCC in the browser) adapts its sending rate.
///
/// Modelled on libwebrtc's `RemoteEstimatorProxy` (modules/remote_bitrate_estimator/
/// remote_estimator_proxy.cc) and pion/interceptor's `twcc.Recorder`:
/// - each feedback covers every sequence number from the first not yet reported up to the
///   highest received one; missing numbers are reported "not received", packets after the
///   last received one wait for the next feedback (they may still arrive);
/// - the reference time is the first received packet's arrival rounded down to 64 ms; deltas
///   accumulate in whole 250 µs ticks so rounding never drifts;
/// - a packet that arrives after its number was already reported (reordering beyond one
///   interval) moves the window back so it is reported again, as libwebrtc does (the sender
///   takes the latest report of a number);
/// - a feedback larger than `maxPacketBytes`, or one whose delta leaves Int16 (a gap > 8 s),
///   is split into several packets with consecutive feedback packet counts.
///
/// Pure: times are monotonic µs passed in.
public struct TransportFeedbackGenerator: Sendable {
    public struct Config: Equatable, Sendable {
        /// 100 ms: libwebrtc's default feedback interval (`send_interval_ms`, adapted between 50
        /// and 250 ms to spend ~5 % of the bitrate) and pion's `twcc.SenderInterceptor` default.
        /// Shorter reacts faster but costs uplink; longer delays the browser's overuse detection.
        public var interval: Int64 = 100_000
        /// 1200 B per RTCP packet: the payload budget WebRTC stacks use for RTP/RTCP
        /// (libwebrtc's default max packet size), leaving room for IP/UDP/SRTCP overhead.
        public var maxPacketBytes = 1200
        /// 500 ms: arrivals kept after being reported so a late packet can be re-reported
        /// (libwebrtc's `kBackWindow`).
        public var backWindow: Int64 = 500_000
        /// 8192 numbers: the widest range reported per interval; anything older is dropped
        /// unreported (a sequence jump or a stall, not real traffic: 8192 packets per 100 ms is
        /// ~80 Mbit/s of 1200-byte packets).
        public var maxRange: Int64 = 8192

        public init() {}
    }

    public let config: Config
    private var unwrapper = SequenceNumberUnwrapper()
    /// Unwrapped sequence number → arrival µs.
    private var arrivals: [Int64: Int64] = [:]
    /// First number not yet reported.
    private var nextToReport: Int64?
    private var highestReceived: Int64?
    private var lastSent: Int64?
    private var feedbackCount: UInt8 = 0
    /// Every number below this was reported and forgotten.
    private var forgottenBelow: Int64?

    public init(config: Config = Config()) {
        self.config = config
    }

    /// Packets remembered (for tests and stats).
    public var storedPackets: Int { arrivals.count }

    /// Records one packet's transport-wide sequence number and its arrival time.
    public mutating func record(sequenceNumber: UInt16, arrival: Int64) {
        let seq = unwrapper.unwrap(sequenceNumber)
        // Older than what we still remember: its neighbours' arrivals are gone, so reporting
        // it again would report them lost (libwebrtc clamps to its oldest stored number too).
        if let forgotten = forgottenBelow, seq < forgotten { return }
        if arrivals[seq] == nil { arrivals[seq] = arrival }
        if highestReceived.map({ seq > $0 }) ?? true { highestReceived = seq }
        if let next = nextToReport {
            if seq < next, next - seq <= config.maxRange { nextToReport = seq }
        } else {
            nextToReport = seq
        }
    }

    /// True when a feedback is due at `now` (one interval after the previous one).
    public func isDue(now: Int64) -> Bool {
        guard let lastSent else { return true }
        return now - lastSent >= config.interval
    }

    /// The feedback packets due at `now` (empty when not due or nothing new was received).
    public mutating func feedback(now: Int64) -> [TransportFeedback] {
        guard isDue(now: now) else { return [] }
        lastSent = now
        defer { forget(now: now) }
        guard var start = nextToReport, let end = highestReceived, start <= end else { return [] }
        if end - start + 1 > config.maxRange { start = end - config.maxRange + 1 }
        var packets: [TransportFeedback] = []
        while start <= end {
            guard let (packet, next) = build(from: start, through: end) else { break }
            packets.append(packet)
            start = next
        }
        nextToReport = end + 1
        return packets
    }

    /// Wraps `feedback(now:)` into RTCP packets. `senderSSRC` is our SSRC on that transport,
    /// `mediaSSRC` any SSRC of the publisher (receivers ignore it; libwebrtc puts the latest).
    public mutating func rtcpPackets(now: Int64, senderSSRC: UInt32, mediaSSRC: UInt32) -> [RTCPTransportFeedback] {
        feedback(now: now).compactMap { try? RTCPTransportFeedback(senderSSRC: senderSSRC, mediaSSRC: mediaSSRC, feedback: $0) }
    }

    /// One packet starting at `start` (skipping to the first received number for the
    /// reference time); returns it and the first number it did not cover.
    private mutating func build(from start: Int64, through end: Int64) -> (TransportFeedback, Int64)? {
        var first = start
        while first <= end, arrivals[first] == nil { first += 1 }
        guard first <= end, let firstArrival = arrivals[first] else { return nil }
        let referenceTicks = floorDiv(firstArrival, TransportFeedback.referenceTimeTickMicros)
        var last = referenceTicks * TransportFeedback.referenceTimeTickMicros
        let limit = config.maxPacketBytes - 12 - 3  // RTCP header + media SSRC, worst-case padding
        var chunker = TransportFeedbackChunker()
        var deltas: [Int16?] = []
        var deltaBytes = 0
        var seq = start
        var covered = start
        while seq <= end {
            guard let arrival = arrivals[seq] else { seq += 1; continue }
            let ticks = floorDiv(arrival - last, TransportFeedback.deltaTickMicros)
            guard let delta = Int16(exactly: ticks) else { break }
            let symbol = TransportFeedback.symbol(for: delta)
            var trial = chunker
            for _ in covered..<seq { trial.add(.notReceived) }
            trial.add(symbol)
            let size = TransportFeedback.fixedBytes + trial.encodedChunkBytes + deltaBytes + (symbol == .smallDelta ? 1 : 2)
            if size > limit || trial.symbolCount > 0xFFFF, !deltas.isEmpty { break }
            chunker = trial
            deltas.append(contentsOf: repeatElement(nil, count: Int(seq - covered)))
            deltas.append(delta)
            deltaBytes += symbol == .smallDelta ? 1 : 2
            last += Int64(delta) * TransportFeedback.deltaTickMicros
            seq += 1
            covered = seq
        }
        guard !deltas.isEmpty else { return nil }
        let packet = TransportFeedback(
            baseSequenceNumber: UInt16(truncatingIfNeeded: start),
            referenceTime: UInt32(truncatingIfNeeded: referenceTicks) & 0xFF_FFFF,
            feedbackPacketCount: feedbackCount, receiveDeltas: deltas)
        feedbackCount &+= 1
        return (packet, covered)
    }

    /// Drops arrivals already reported and older than the back window.
    private mutating func forget(now: Int64) {
        guard let next = nextToReport else { return }
        var dropped: Int64?
        arrivals = arrivals.filter { seq, arrival in
            let keep = seq >= next || now - arrival <= config.backWindow
            if !keep { dropped = max(dropped ?? seq, seq) }
            return keep
        }
        if arrivals.count > Int(config.maxRange) * 2, let high = highestReceived {
            arrivals = arrivals.filter { high - $0.key < config.maxRange }
            dropped = max(dropped ?? Int64.min, high - config.maxRange)
        }
        if let dropped { forgottenBelow = max(forgottenBelow ?? Int64.min, dropped + 1) }
    }
}

@inline(__always)
func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
    let q = a / b
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
}
