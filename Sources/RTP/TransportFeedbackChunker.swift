/// Packs packet status symbols into packet chunks the way libwebrtc's
/// `TransportFeedback::LastChunk` does (modules/rtp_rtcp/source/rtcp_packet/transport_feedback.cc),
/// so what we send looks like what browsers are tested against:
/// - run-length chunk (draft -01 §3.1.3) while every symbol is the same (up to 8191);
/// - otherwise a 1-bit status vector of 14 symbols when no large delta is among them, or a
///   2-bit vector of 7 symbols (§3.1.4).
///
/// Incremental: `encodedChunkBytes` is known after every `add`, which is what the generator
/// needs to split feedback at a size limit.
public struct TransportFeedbackChunker: Equatable, Sendable {
    /// 13-bit run length field.
    static let maxRunLength = 0x1FFF
    /// 1-bit vector capacity.
    static let oneBitCapacity = 14
    /// 2-bit vector capacity.
    static let twoBitCapacity = 7

    /// Finished chunks (wire values).
    public private(set) var chunks: [UInt16] = []
    /// Symbols of the open chunk (only the first `oneBitCapacity` are stored; a run longer
    /// than that is all the same symbol, which `allSame` records).
    private var pending: [TransportFeedback.Symbol] = []
    private var pendingCount = 0
    private var allSame = true
    private var hasLarge = false

    public init() {}

    /// Status symbols added so far.
    public private(set) var symbolCount = 0

    /// Bytes the chunks take once the open chunk is closed.
    public var encodedChunkBytes: Int { 2 * (chunks.count + (pendingCount > 0 ? 1 : 0)) }

    /// Bytes the chunks would take after adding `symbol`.
    public func encodedChunkBytes(adding symbol: TransportFeedback.Symbol) -> Int {
        if pendingCount == 0 { return 2 * (chunks.count + 1) }
        return canAdd(symbol) ? encodedChunkBytes : encodedChunkBytes + 2
    }

    private func canAdd(_ symbol: TransportFeedback.Symbol) -> Bool {
        if pendingCount < Self.twoBitCapacity { return true }
        if pendingCount < Self.oneBitCapacity, !hasLarge, symbol != .largeDelta { return true }
        if pendingCount < Self.maxRunLength, allSame, pending.first == symbol { return true }
        return false
    }

    public mutating func add(_ symbol: TransportFeedback.Symbol) {
        if !canAdd(symbol) { chunks.append(emit()) }
        if pending.count < Self.oneBitCapacity { pending.append(symbol) }
        pendingCount += 1
        allSame = allSame && symbol == pending[0]
        hasLarge = hasLarge || symbol == .largeDelta
        symbolCount += 1
    }

    /// All chunks including the open one.
    public func finished() -> [UInt16] {
        guard pendingCount > 0 else { return chunks }
        let last: UInt16
        if allSame {
            last = runLength()
        } else if pendingCount <= Self.twoBitCapacity {
            last = twoBit(pendingCount)
        } else {
            last = oneBit()
        }
        return chunks + [last]
    }

    private mutating func emit() -> UInt16 {
        if allSame {
            defer { clear() }
            return runLength()
        }
        if pendingCount == Self.oneBitCapacity {
            defer { clear() }
            return oneBit()
        }
        let chunk = twoBit(Self.twoBitCapacity)
        pending.removeFirst(Self.twoBitCapacity)
        pendingCount -= Self.twoBitCapacity
        allSame = pending.allSatisfy { $0 == pending[0] }
        hasLarge = pending.contains(.largeDelta)
        return chunk
    }

    private mutating func clear() {
        pending.removeAll(keepingCapacity: true)
        pendingCount = 0
        allSame = true
        hasLarge = false
    }

    private func runLength() -> UInt16 {
        UInt16(pending[0].rawValue) << 13 | UInt16(pendingCount)
    }

    private func oneBit() -> UInt16 {
        var chunk: UInt16 = 0x8000
        for (index, symbol) in pending.prefix(pendingCount).enumerated() {
            chunk |= UInt16(symbol.rawValue) << (13 - index)
        }
        return chunk
    }

    private func twoBit(_ count: Int) -> UInt16 {
        var chunk: UInt16 = 0xC000
        for (index, symbol) in pending.prefix(count).enumerated() {
            chunk |= UInt16(symbol.rawValue) << (12 - 2 * index)
        }
        return chunk
    }
}
