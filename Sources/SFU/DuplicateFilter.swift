/// Tells a copy of an already received packet from a new one, for streams without a
/// `NackGenerator` (audio): a 64-packet window behind the highest sequence number, like
/// SRTP's replay list (RFC 3711 §3.3.2). A copy forwarded again would reach every
/// subscriber with a (SSRC, sequence number) it already had, and its libsrtp would drop it
/// as a replay after the transport counted the bytes (phantom loss; see `ReplayTests`).
struct DuplicateFilter: Equatable, Sendable {
    /// 64 packets: 1.28 s of Opus at 50 packets/s; a packet later than that missed the
    /// receiver's playout anyway.
    static let window: UInt16 = 64
    /// A packet further behind than this restarts the window (the publisher restarted its
    /// numbering): RFC 3550 §A.1 MAX_DROPOUT.
    static let restartDistance: UInt16 = 3000

    private var highest: UInt16 = 0
    /// Bit i: `highest - i` was received.
    private var seen: UInt64 = 0
    private var started = false

    /// Records an arrival; false for a duplicate or a packet older than the window.
    mutating func accept(_ sequenceNumber: UInt16) -> Bool {
        guard started else {
            started = true
            highest = sequenceNumber
            seen = 1
            return true
        }
        let ahead = sequenceNumber &- highest
        if ahead != 0, ahead < 0x8000 {
            seen = ahead >= Self.window ? 1 : (seen << UInt64(ahead)) | 1
            highest = sequenceNumber
            return true
        }
        let behind = highest &- sequenceNumber
        if behind < Self.window {
            let bit: UInt64 = 1 << UInt64(behind)
            guard seen & bit == 0 else { return false }
            seen |= bit
            return true
        }
        if behind > Self.restartDistance {
            highest = sequenceNumber
            seen = 1
            return true
        }
        return false
    }
}
