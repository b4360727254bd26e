/// NTP timestamps for RTCP sender reports (RFC 3550 §4): seconds since 1900 in the high 32 bits,
/// fraction in the low 32. Pure: the caller passes the wall clock.
public enum NTPTime {
    /// Seconds from 1900-01-01 to the Unix epoch (RFC 868).
    static let unixOffsetSeconds: UInt64 = 2_208_988_800

    public static func timestamp(unixMicroseconds: Int64) -> UInt64 {
        let micros = UInt64(max(0, unixMicroseconds))
        let seconds = micros / 1_000_000 + unixOffsetSeconds
        let fraction = ((micros % 1_000_000) << 32) / 1_000_000
        return seconds << 32 | fraction
    }

    /// The middle 32 bits (RFC 3550 §6.4.1 LSR), in 1/65536 s.
    public static func middle32(_ timestamp: UInt64) -> UInt32 { UInt32(truncatingIfNeeded: timestamp >> 16) }

    /// Round-trip time from a report block (RFC 3550 §6.4.1): arrival − LSR − DLSR, all in
    /// 1/65536 s; nil when the block carries no LSR or the result is negative (clock skew).
    public static func roundTripMilliseconds(arrivalMiddle32: UInt32, lastSenderReport: UInt32,
                                             delaySinceLastSenderReport: UInt32) -> Double? {
        guard lastSenderReport != 0 else { return nil }
        let rtt = Int64(arrivalMiddle32 &- lastSenderReport) - Int64(delaySinceLastSenderReport)
        guard rtt >= 0, rtt < 1 << 31 else { return nil }
        return Double(rtt) * 1000 / 65536
    }
}
