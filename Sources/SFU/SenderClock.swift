/// What a publisher's last sender report says about one of its streams (RFC 3550 §6.4.1):
/// the stream's RTP time `rtp` was the publisher's wall-clock instant `ntp`.
///
/// The SFU keeps the publisher's own mapping instead of re-anchoring each stream on the
/// SR's arrival time: two SRs of one publisher (its audio and its video, or two simulcast
/// layers) cross the network with different delays, and re-anchoring each on its own
/// arrival turned that difference into a skew between the streams' timelines — audio/video
/// sync on the subscriber then delayed one stream by the skew (libwebrtc's
/// `StreamSynchronization` raised video's minimum playout delay by 80 ms per second, up to
/// 0.9 s, in the Chromium cap test), and a layer switch jumped the output timestamps by
/// the difference in arrival delay instead of the difference in capture time.
struct SenderClock: Equatable {
    /// The SR's NTP timestamp (RFC 5905 §6).
    var ntp: NTPTime
    var rtp: UInt32

    /// The publisher's wall clock in µs since the Unix epoch.
    var senderMicros: Int64 { ntp.unixMicroseconds }

    /// `reference − rtp` for this stream: adding it to an RTP timestamp of the stream gives
    /// the publisher's capture clock in the stream's clock-rate units (mod 2^32), a timeline
    /// shared by every stream of the publisher with that clock rate — the layers of one
    /// simulcast track in particular.
    func referenceOffset(clockRate: UInt32) -> UInt32 {
        let seconds = UInt32(truncatingIfNeeded: ntp.raw >> 32)
        let fraction = (UInt64(ntp.raw & 0xFFFF_FFFF) * UInt64(clockRate)) >> 32
        let reference = seconds &* clockRate &+ UInt32(truncatingIfNeeded: fraction)
        return reference &- rtp
    }

    /// The stream's RTP time at `senderMicros` on the publisher's clock, extrapolated at the
    /// nominal clock rate (what the publisher's own next SR would say).
    func rtp(atSenderMicros micros: Int64, clockRate: UInt32) -> UInt32 {
        let elapsed = micros - senderMicros
        let advance = elapsed / 1_000_000 * Int64(clockRate) + elapsed % 1_000_000 * Int64(clockRate) / 1_000_000
        return rtp &+ UInt32(truncatingIfNeeded: advance)
    }
}

/// The publisher's wall clock on the router's clock: `router µs − publisher µs`, one value
/// for all of a publisher's streams so that their forwarded SRs keep the publisher's own
/// relation between them.
///
/// Each SR gives `arrival − sent`, the clocks' offset plus that SR's transit delay. The
/// estimate is the lower envelope of those samples (queueing only ever adds delay), allowed
/// to rise by `driftPerSecond` so two free-running clocks drifting apart are followed, and
/// reset when a sample is more than `stepThreshold` above it (the publisher's clock was
/// stepped back).
struct PublisherClockOffset: Equatable {
    /// 1 ms per second (1,000 ppm): ten times the drift of two ordinary crystal clocks.
    static let driftPerSecond: Int64 = 1_000
    /// 1 s: far above any transit delay a call survives, far below a clock step by NTP.
    static let stepThreshold: Int64 = 1_000_000

    private(set) var offset: Int64?
    private var updatedAt: Int64 = 0

    mutating func observe(arrival: Int64, senderMicros: Int64) {
        let sample = arrival - senderMicros
        if let current = offset, sample - current <= Self.stepThreshold {
            let allowed = current + max(arrival - updatedAt, 0) * Self.driftPerSecond / 1_000_000
            offset = min(sample, allowed)
        } else {
            offset = sample
        }
        updatedAt = arrival
    }
}
