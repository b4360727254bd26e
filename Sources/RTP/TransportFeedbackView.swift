/// A transport-cc feedback body (the FCI of RTCP RTPFB FMT 15,
/// draft-holmer-rmcat-transport-wide-cc-extensions-01 §3.1) read in place: validated whole on
/// init, then walked packet by packet (`next()`) with two cursors — one over the status
/// chunks, one over the receive deltas that follow them — so consuming feedback allocates
/// nothing (the `TransportFeedback` model builds a symbol and a delta array per feedback).
///
/// Same rules as `TransportFeedback.init(body:)`: a run-length chunk longer than the statuses
/// left is cut, trailing bytes after the last delta (zero padding) are ignored, a 2-bit
/// symbol 3 is refused. The view does not own the bytes: use it while they live.
public struct TransportFeedbackView {
    public let baseSequenceNumber: UInt16
    /// 24-bit reference time in 64 ms units.
    public let referenceTime: UInt32
    public let feedbackPacketCount: UInt8
    /// Number of packet statuses (sequence numbers) reported.
    public let packetStatusCount: Int

    private let body: UnsafeRawBufferPointer
    // Cursor state.
    private var index = 0
    private var chunkOffset = TransportFeedback.fixedBytes
    private var deltaOffset: Int
    private var chunk: UInt16 = 0
    private var chunkLeft = 0
    private var chunkPosition = 0
    private var time: Int64

    /// Reference time in µs (24-bit value × 64 ms).
    public var referenceTimeMicros: Int64 { Int64(referenceTime) * TransportFeedback.referenceTimeTickMicros }

    public init(body: UnsafeRawBufferPointer) throws(TransportFeedbackError) {
        guard body.count >= TransportFeedback.fixedBytes else { throw .truncated }
        baseSequenceNumber = UInt16(body[0]) << 8 | UInt16(body[1])
        packetStatusCount = Int(UInt16(body[2]) << 8 | UInt16(body[3]))
        referenceTime = UInt32(body[4]) << 16 | UInt32(body[5]) << 8 | UInt32(body[6])
        feedbackPacketCount = body[7]
        guard packetStatusCount > 0 else { throw .empty }
        self.body = body
        time = Int64(referenceTime) * TransportFeedback.referenceTimeTickMicros
        // Validation pass: the chunks, then the deltas they announce, must all be there.
        var offset = TransportFeedback.fixedBytes
        var seen = 0
        var deltaBytes = 0
        while seen < packetStatusCount {
            guard offset + 2 <= body.count else { throw .truncated }
            let chunk = UInt16(body[offset]) << 8 | UInt16(body[offset + 1])
            offset += 2
            let take = min(Self.symbols(in: chunk), packetStatusCount - seen)
            if chunk & 0x8000 == 0 {
                // A run: one symbol, `take` times.
                let symbol = Self.symbol(chunk, at: 0)
                guard symbol != 3 else { throw .reservedSymbol }
                deltaBytes += take * Self.deltaSize(symbol)
            } else {
                var position = 0
                while position < take {
                    let symbol = Self.symbol(chunk, at: position)
                    guard symbol != 3 else { throw .reservedSymbol }
                    deltaBytes += Self.deltaSize(symbol)
                    position += 1
                }
            }
            seen += take
        }
        guard offset + deltaBytes <= body.count else { throw .truncated }
        deltaOffset = offset
    }

    /// The next reported packet in sequence order (arrival accumulated from the deltas, µs on
    /// the receiver's clock counted from the reference time's zero), nil after the last.
    public mutating func next() -> TransportFeedback.PacketResult? {
        guard index < packetStatusCount else { return nil }
        while chunkLeft == 0 {
            // Validated on init: the chunks cover every status (an empty run is skipped).
            chunk = UInt16(body[chunkOffset]) << 8 | UInt16(body[chunkOffset + 1])
            chunkOffset += 2
            chunkLeft = min(Self.symbols(in: chunk), packetStatusCount - index)
            chunkPosition = 0
        }
        let symbol = Self.symbol(chunk, at: chunk & 0x8000 == 0 ? 0 : chunkPosition)
        chunkLeft -= 1
        chunkPosition += 1
        let sequence = baseSequenceNumber &+ UInt16(truncatingIfNeeded: index)
        index += 1
        switch symbol {
        case 1:
            time += Int64(body[deltaOffset]) * TransportFeedback.deltaTickMicros
            deltaOffset += 1
        case 2:
            let delta = Int16(bitPattern: UInt16(body[deltaOffset]) << 8 | UInt16(body[deltaOffset + 1]))
            time += Int64(delta) * TransportFeedback.deltaTickMicros
            deltaOffset += 2
        default:
            return TransportFeedback.PacketResult(sequenceNumber: sequence, arrivalMicros: nil)
        }
        return TransportFeedback.PacketResult(sequenceNumber: sequence, arrivalMicros: time)
    }

    /// Statuses a chunk carries: a run its length, a 1-bit vector 14, a 2-bit vector 7.
    private static func symbols(in chunk: UInt16) -> Int {
        if chunk & 0x8000 == 0 { return Int(chunk & 0x1FFF) }
        return chunk & 0x4000 == 0 ? 14 : 7
    }

    /// The raw symbol at `position` of a chunk (0 not received, 1 small, 2 large, 3 reserved).
    private static func symbol(_ chunk: UInt16, at position: Int) -> Int {
        if chunk & 0x8000 == 0 { return Int((chunk >> 13) & 0x3) }
        if chunk & 0x4000 == 0 { return Int((chunk >> (13 - position)) & 1) }
        return Int((chunk >> (12 - 2 * position)) & 0x3)
    }

    private static func deltaSize(_ symbol: Int) -> Int { symbol == 1 ? 1 : symbol == 2 ? 2 : 0 }
}
