/// Maps the sequence numbers of whichever source a subscriber currently receives onto one
/// continuous output sequence (simulcast layer / speaker switches in the SFU).
///
/// On a source switch the first packet of the new source gets `lastOutput + 1`; later
/// packets keep the source's spacing (gaps = real losses stay visible to the receiver's
/// NACK logic). All arithmetic is modulo 2^16.
public struct SequenceRewriter: Equatable, Sendable {
    private var source: UInt32?
    private var offset: UInt16 = 0
    private var highestOutput: UInt16?
    /// Output just before the current source started; late packets at or before it are dropped.
    private var switchFloor: UInt16?

    /// - Parameter firstOutput: output number for the very first packet (nil = keep the
    ///   source's own number, offset 0).
    public init(firstOutput: UInt16? = nil) {
        if let firstOutput { highestOutput = firstOutput &- 1 }
    }

    /// The highest sequence number emitted so far.
    public var lastOutput: UInt16? { highestOutput }

    /// Rewrites `sequenceNumber` from `source` (its SSRC). Returns nil for a packet that
    /// would land at or before the switch point (a late packet from before the switch,
    /// which would otherwise collide with numbers the subscriber already saw).
    public mutating func rewrite(_ sequenceNumber: UInt16, source ssrc: UInt32) -> UInt16? {
        if source != ssrc {
            source = ssrc
            if let highestOutput {
                offset = (highestOutput &+ 1) &- sequenceNumber
                switchFloor = highestOutput
            } else {
                offset = 0
            }
        }
        let output = sequenceNumber &+ offset
        if let switchFloor, !isNewer(output, switchFloor) { return nil }
        if let highest = highestOutput {
            if isNewer(output, highest) { highestOutput = output }
        } else {
            highestOutput = output
        }
        // Forget the floor once the stream is well past it, before modular comparison against
        // it would wrap (after 32768 packets everything would look "older"). 0x4000 packets
        // is over 5 minutes of 50 pps audio: no pre-switch packet arrives that late.
        if let switchFloor, let highestOutput, highestOutput &- switchFloor >= 0x4000 {
            self.switchFloor = nil
        }
        return output
    }
}

/// Maps RTP timestamps of the current source onto one continuous output timeline.
///
/// On a switch the caller says how far (in clock-rate units) the new source's first packet
/// should land after the last output timestamp — e.g. the wall-clock gap times the clock
/// rate, computed outside from packet arrival times (this type never reads a clock).
public struct TimestampRewriter: Equatable, Sendable {
    private var source: UInt32?
    private var offset: UInt32 = 0
    private var highestOutput: UInt32?

    public init() {}

    /// The highest timestamp emitted so far.
    public var lastOutput: UInt32? { highestOutput }

    /// Rewrites `timestamp` from `source`. `switchGap` is used only when `source` differs
    /// from the previous packet's source (960 = 20 ms at 48 kHz is a reasonable default for
    /// Opus when nothing better is known).
    public mutating func rewrite(_ timestamp: UInt32, source ssrc: UInt32, switchGap: UInt32 = 960) -> UInt32 {
        if source != ssrc {
            source = ssrc
            if let highestOutput {
                offset = (highestOutput &+ switchGap) &- timestamp
            } else {
                offset = 0
            }
        }
        let output = timestamp &+ offset
        if let highest = highestOutput {
            if isNewer(output, highest) { highestOutput = output }
        } else {
            highestOutput = output
        }
        return output
    }
}
