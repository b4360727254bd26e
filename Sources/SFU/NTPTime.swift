/// A 64-bit NTP timestamp (RFC 5905 §6: seconds since 1900 in the high 32 bits, fraction in
/// the low 32), as carried in RTCP SRs (RFC 3550 §4). The router never reads a clock: the
/// caller passes the wall clock in.
public struct NTPTime: Equatable, Hashable, Sendable {
    public var raw: UInt64

    public init(raw: UInt64) { self.raw = raw }

    /// Seconds between 1900-01-01 and 1970-01-01 (RFC 868).
    public static let unixEpochOffset: UInt64 = 2_208_988_800

    /// From microseconds since the Unix epoch (e.g. `clock_gettime(CLOCK_REALTIME)`).
    public init(unixMicroseconds: Int64) {
        let micros = UInt64(max(unixMicroseconds, 0))
        let seconds = micros / 1_000_000 + Self.unixEpochOffset
        let fraction = (micros % 1_000_000) << 32 / 1_000_000
        raw = seconds << 32 | fraction
    }

    /// Microseconds since the Unix epoch (negative before 1970: a sender's NTP field is
    /// whatever its clock says).
    public var unixMicroseconds: Int64 {
        let seconds = Int64(raw >> 32) - Int64(Self.unixEpochOffset)
        let fraction = Int64(((raw & 0xFFFF_FFFF) * 1_000_000 + (1 << 31)) >> 32)   // rounded: round trip with init(unixMicroseconds:)
        return seconds * 1_000_000 + fraction
    }

    /// The middle 32 bits (16.16 fixed point), as used by LSR and for RTT (RFC 3550 §6.4.1).
    public var middle32: UInt32 { UInt32(truncatingIfNeeded: raw >> 16) }

    /// Adds microseconds.
    public func adding(microseconds: Int64) -> NTPTime {
        let delta = (Int64(microseconds) << 32) / 1_000_000
        return NTPTime(raw: UInt64(bitPattern: Int64(bitPattern: raw) &+ delta))
    }
}

/// Conversions between µs and the 1/65536 s units of DLSR / RTT (RFC 3550 §6.4.1).
enum CompactNTP {
    static func fromMicroseconds(_ micros: Int64) -> UInt32 {
        UInt32(truncatingIfNeeded: max(micros, 0) * 65536 / 1_000_000)
    }

    static func toMicroseconds(_ units: UInt32) -> Int64 {
        Int64(units) * 1_000_000 / 65536
    }
}
