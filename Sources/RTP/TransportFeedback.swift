/// Transport-wide congestion control feedback, the FCI of RTCP RTPFB FMT 15
/// (draft-holmer-rmcat-transport-wide-cc-extensions-01 §3.1):
///
///     | base sequence number          | packet status count           |
///     | reference time (24 bit, 64 ms)                | fb pkt. count |
///     | packet chunk | packet chunk | ... | recv delta | recv delta | ... | zero padding |
///
/// One entry per transport-wide sequence number from `baseSequenceNumber` on (wrapping at
/// 65535): `nil` when not received, else the receive delta in 250 µs ticks relative to the
/// previous received packet (the first one relative to the reference time). A delta in
/// 0...255 is sent as a small (1-byte) delta, anything else as a large (2-byte, signed) one —
/// the rule libwebrtc applies, so parsing a large-coded delta that would fit one byte and
/// serializing it again yields a small one (the model round-trips, not every byte).
public struct TransportFeedback: Equatable, Sendable {
    /// Receive delta unit (draft §3.1.5).
    public static let deltaTickMicros: Int64 = 250
    /// Reference time unit (draft §3.1).
    public static let referenceTimeTickMicros: Int64 = 64_000
    /// Fixed fields before the chunks: base seq, status count, reference time, fb count.
    public static let fixedBytes = 8

    /// Packet status symbol (draft §3.1.1). A 1-bit vector carries only the first two.
    public enum Symbol: UInt8, Equatable, Sendable {
        case notReceived = 0
        case smallDelta = 1
        case largeDelta = 2
    }

    public var baseSequenceNumber: UInt16
    /// 24-bit reference time in 64 ms units (wraps; only differences between feedbacks count).
    public var referenceTime: UInt32
    /// Incremented per feedback packet sent, so the sender can tell lost feedback.
    public var feedbackPacketCount: UInt8
    /// Per sequence number: `nil` = not received, else the receive delta in 250 µs ticks.
    public var receiveDeltas: [Int16?]

    public init(baseSequenceNumber: UInt16, referenceTime: UInt32, feedbackPacketCount: UInt8, receiveDeltas: [Int16?]) {
        self.baseSequenceNumber = baseSequenceNumber
        self.referenceTime = referenceTime
        self.feedbackPacketCount = feedbackPacketCount
        self.receiveDeltas = receiveDeltas
    }

    /// The symbol that codes `delta`.
    public static func symbol(for delta: Int16?) -> Symbol {
        guard let delta else { return .notReceived }
        return (0...255).contains(delta) ? .smallDelta : .largeDelta
    }

    /// Reference time in µs (24-bit value × 64 ms).
    public var referenceTimeMicros: Int64 { Int64(referenceTime) * Self.referenceTimeTickMicros }

    /// One reported packet: its sequence number and, when received, its arrival time in µs
    /// on the receiver's clock, counted from the reference time's zero.
    public struct PacketResult: Equatable, Sendable {
        public var sequenceNumber: UInt16
        public var arrivalMicros: Int64?
        public init(sequenceNumber: UInt16, arrivalMicros: Int64?) {
            self.sequenceNumber = sequenceNumber
            self.arrivalMicros = arrivalMicros
        }
    }

    /// Every reported packet in sequence order, arrival times accumulated from the deltas.
    public var packetResults: [PacketResult] {
        var time = referenceTimeMicros
        var results: [PacketResult] = []
        results.reserveCapacity(receiveDeltas.count)
        for (index, delta) in receiveDeltas.enumerated() {
            let seq = baseSequenceNumber &+ UInt16(truncatingIfNeeded: index)
            if let delta {
                time += Int64(delta) * Self.deltaTickMicros
                results.append(PacketResult(sequenceNumber: seq, arrivalMicros: time))
            } else {
                results.append(PacketResult(sequenceNumber: seq, arrivalMicros: nil))
            }
        }
        return results
    }
}

extension TransportFeedback {
    /// Parses the FCI (everything after the media SSRC, as in `RTCPTransportFeedback.body`).
    /// Trailing bytes after the last receive delta (zero padding) are ignored, as libwebrtc does.
    public init(body: [UInt8]) throws(TransportFeedbackError) {
        guard body.count >= Self.fixedBytes else { throw .truncated }
        let base = UInt16(body[0]) << 8 | UInt16(body[1])
        let count = Int(UInt16(body[2]) << 8 | UInt16(body[3]))
        let reference = UInt32(body[4]) << 16 | UInt32(body[5]) << 8 | UInt32(body[6])
        let fbCount = body[7]
        guard count > 0 else { throw .empty }

        var symbols: [Symbol] = []
        symbols.reserveCapacity(count)
        var offset = Self.fixedBytes
        while symbols.count < count {
            guard offset + 2 <= body.count else { throw .truncated }
            let chunk = UInt16(body[offset]) << 8 | UInt16(body[offset + 1])
            offset += 2
            let remaining = count - symbols.count
            if chunk & 0x8000 == 0 {
                // Run length chunk (§3.1.3): T=0, 2-bit symbol, 13-bit length.
                let raw = UInt8((chunk >> 13) & 0x3)
                guard let symbol = Symbol(rawValue: raw) else { throw .reservedSymbol }
                let run = min(Int(chunk & 0x1FFF), remaining)
                symbols.append(contentsOf: repeatElement(symbol, count: run))
            } else if chunk & 0x4000 == 0 {
                // 1-bit status vector (§3.1.4): 14 symbols, 0 = not received, 1 = small delta.
                for index in 0..<min(14, remaining) {
                    symbols.append((chunk >> (13 - index)) & 1 == 1 ? .smallDelta : .notReceived)
                }
            } else {
                // 2-bit status vector: 7 symbols.
                for index in 0..<min(7, remaining) {
                    let raw = UInt8((chunk >> (12 - 2 * index)) & 0x3)
                    guard let symbol = Symbol(rawValue: raw) else { throw .reservedSymbol }
                    symbols.append(symbol)
                }
            }
        }

        var deltas: [Int16?] = []
        deltas.reserveCapacity(count)
        for symbol in symbols {
            switch symbol {
            case .notReceived:
                deltas.append(nil)
            case .smallDelta:
                guard offset + 1 <= body.count else { throw .truncated }
                deltas.append(Int16(body[offset]))
                offset += 1
            case .largeDelta:
                guard offset + 2 <= body.count else { throw .truncated }
                deltas.append(Int16(bitPattern: UInt16(body[offset]) << 8 | UInt16(body[offset + 1])))
                offset += 2
            }
        }
        self.init(baseSequenceNumber: base, referenceTime: reference, feedbackPacketCount: fbCount, receiveDeltas: deltas)
    }

    /// Serializes the FCI without padding (the RTCP writer pads to 32 bits).
    public func encodedBody() throws(TransportFeedbackError) -> [UInt8] {
        guard !receiveDeltas.isEmpty else { throw .empty }
        guard receiveDeltas.count <= 0xFFFF, referenceTime <= 0xFF_FFFF else { throw .invalidField }
        var chunker = TransportFeedbackChunker()
        var deltaBytes: [UInt8] = []
        for delta in receiveDeltas {
            let symbol = Self.symbol(for: delta)
            chunker.add(symbol)
            switch symbol {
            case .notReceived: break
            case .smallDelta: deltaBytes.append(UInt8(truncatingIfNeeded: delta ?? 0))
            case .largeDelta:
                let bits = UInt16(bitPattern: delta ?? 0)
                deltaBytes.append(UInt8(truncatingIfNeeded: bits >> 8))
                deltaBytes.append(UInt8(truncatingIfNeeded: bits))
            }
        }
        let count = UInt16(receiveDeltas.count)
        var bytes: [UInt8] = [
            UInt8(baseSequenceNumber >> 8), UInt8(truncatingIfNeeded: baseSequenceNumber),
            UInt8(count >> 8), UInt8(truncatingIfNeeded: count),
            UInt8(truncatingIfNeeded: referenceTime >> 16), UInt8(truncatingIfNeeded: referenceTime >> 8),
            UInt8(truncatingIfNeeded: referenceTime), feedbackPacketCount,
        ]
        for chunk in chunker.finished() {
            bytes.append(UInt8(chunk >> 8))
            bytes.append(UInt8(truncatingIfNeeded: chunk))
        }
        bytes.append(contentsOf: deltaBytes)
        return bytes
    }
}
