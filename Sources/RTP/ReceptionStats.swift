/// Per-source reception statistics for receiver reports: sequence tracking per RFC 3550
/// §A.1, loss per §A.3 and interarrival jitter per §A.8. Pure value type; arrival times are
/// passed in by the caller.
///
/// Simplification: the §A.1 probation period (MIN_SEQUENTIAL) is skipped — the first
/// packet starts the sequence. In the SFU, SRTP authentication already proves the source.
public struct ReceptionStats: Equatable, Sendable {
    /// RFC 3550 §A.1 MAX_DROPOUT: a forward jump below this is a (lossy) in-order packet.
    public static let maxDropout: UInt16 = 3000
    /// RFC 3550 §A.1 MAX_MISORDER: a backward step up to this is a reordered packet.
    public static let maxMisorder: UInt16 = 100
    private static let sequenceModulo: UInt32 = 1 << 16

    private var started = false
    private var maxSequence: UInt16 = 0
    /// Shifted count of sequence number cycles (multiple of 65536).
    private var cycles: UInt32 = 0
    private var baseSequence: UInt32 = 0
    /// Last "bad" sequence number + 1 (§A.1); 65537 = none.
    private var badSequence: UInt32 = sequenceModulo + 1
    /// Packets accepted.
    public private(set) var received: UInt32 = 0
    private var expectedPrior: UInt32 = 0
    private var receivedPrior: UInt32 = 0
    private var lastTransit: UInt32?
    /// Jitter scaled by 16 (§A.8 integer form).
    private var jitterQ4: UInt32 = 0

    public init() {}

    /// Extended highest sequence number received (cycles << 16 | max).
    public var extendedHighestSequenceNumber: UInt32 { cycles &+ UInt32(maxSequence) }

    /// Packets expected so far (§A.3).
    public var expected: UInt32 { started ? extendedHighestSequenceNumber &- baseSequence &+ 1 : 0 }

    /// Cumulative packets lost (§A.3); negative when duplicates outnumber losses.
    public var cumulativeLost: Int64 { Int64(expected) - Int64(received) }

    /// Interarrival jitter in RTP timestamp units (§A.8).
    public var jitter: UInt32 { jitterQ4 >> 4 }

    /// Records one packet.
    /// - Parameters:
    ///   - seq: RTP sequence number.
    ///   - rtpTimestamp: RTP timestamp of the packet.
    ///   - arrival: arrival time in **microseconds** on any monotonic clock.
    ///   - clockRate: RTP clock rate in Hz (48000 Opus, 90000 video).
    /// - Returns: false when the packet was not counted (§A.1 large jump awaiting
    ///   confirmation, or the first half of a source restart).
    @discardableResult
    public mutating func record(seq: UInt16, rtpTimestamp: UInt32, arrival: Int64, clockRate: Int) -> Bool {
        guard started else {
            start(seq)
            received = 1
            updateJitter(rtpTimestamp: rtpTimestamp, arrival: arrival, clockRate: clockRate)
            return true
        }
        let delta = seq &- maxSequence
        if delta < Self.maxDropout {
            if seq < maxSequence { cycles &+= Self.sequenceModulo }  // wrapped
            maxSequence = seq
        } else if UInt32(delta) <= Self.sequenceModulo - UInt32(Self.maxMisorder) {
            // Very large jump: accept only if two sequential packets agree (§A.1 restart).
            if UInt32(seq) == badSequence {
                start(seq)
                lastTransit = nil
            } else {
                badSequence = (UInt32(seq) + 1) & (Self.sequenceModulo - 1)
                return false
            }
        }
        // else: duplicate or reordered packet, counted but does not move max.
        received &+= 1
        updateJitter(rtpTimestamp: rtpTimestamp, arrival: arrival, clockRate: clockRate)
        return true
    }

    /// Builds the report block for this source and starts a new reporting interval
    /// (fraction lost is relative to the previous call, §A.3 — hence `mutating`).
    /// - Parameters:
    ///   - lastSenderReport: middle 32 bits of the last SR NTP timestamp (0 if none).
    ///   - delaySinceLastSenderReport: in 1/65536 s (0 if none).
    public mutating func makeReportBlock(ssrc: UInt32, lastSenderReport: UInt32 = 0, delaySinceLastSenderReport: UInt32 = 0) -> RTCPReportBlock {
        let expectedNow = expected
        let expectedInterval = expectedNow &- expectedPrior
        expectedPrior = expectedNow
        let receivedInterval = received &- receivedPrior
        receivedPrior = received
        let lostInterval = Int64(expectedInterval) - Int64(receivedInterval)
        let fraction: UInt8 = expectedInterval == 0 || lostInterval <= 0
            ? 0 : UInt8(truncatingIfNeeded: min((lostInterval << 8) / Int64(expectedInterval), 255))
        let lost = Int32(min(max(cumulativeLost, -0x80_0000), 0x7F_FFFF))
        return RTCPReportBlock(
            ssrc: ssrc, fractionLost: fraction, cumulativeLost: lost,
            extendedHighestSequenceNumber: extendedHighestSequenceNumber, jitter: jitter,
            lastSenderReport: lastSenderReport, delaySinceLastSenderReport: delaySinceLastSenderReport)
    }

    private mutating func start(_ seq: UInt16) {
        started = true
        baseSequence = UInt32(seq)
        maxSequence = seq
        badSequence = Self.sequenceModulo + 1
        cycles = 0
        received = 0
        receivedPrior = 0
        expectedPrior = 0
    }

    /// §A.8: J += (|D| - J) / 16, in the scaled integer form `jitter += d - ((jitter + 8) >> 4)`.
    private mutating func updateJitter(rtpTimestamp: UInt32, arrival: Int64, clockRate: Int) {
        guard clockRate > 0 else { return }
        // Arrival converted to timestamp units; split to avoid overflow of arrival × rate.
        let rate = Int64(clockRate)
        let units = (arrival / 1_000_000) &* rate &+ (arrival % 1_000_000) &* rate / 1_000_000
        let transit = UInt32(truncatingIfNeeded: units) &- rtpTimestamp
        defer { lastTransit = transit }
        guard let lastTransit else { return }
        let d = Int32(bitPattern: transit &- lastTransit).magnitude
        jitterQ4 = jitterQ4 &+ d &- ((jitterQ4 &+ 8) >> 4)
    }
}
