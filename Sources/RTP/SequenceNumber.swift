/// True when 16-bit sequence number `a` is newer than `b` in modular order
/// (RFC 3550 §A.1 style: a forward distance below half the space). A distance of exactly
/// 0x8000 is ambiguous; it is broken by numeric order so the relation stays antisymmetric
/// (same rule as libwebrtc's `IsNewerSequenceNumber`).
@inline(__always)
public func isNewer(_ a: UInt16, _ b: UInt16) -> Bool {
    let forward = a &- b
    if forward == 0x8000 { return a > b }
    return forward != 0 && forward < 0x8000
}

/// Same relation for 32-bit RTP timestamps.
@inline(__always)
public func isNewer(_ a: UInt32, _ b: UInt32) -> Bool {
    let forward = a &- b
    if forward == 0x8000_0000 { return a > b }
    return forward != 0 && forward < 0x8000_0000
}

/// Extends 16-bit sequence numbers to a monotonic-ish Int64 count across wraps.
///
/// Each input is placed at the nearest position to the previously unwrapped value (forward
/// if `isNewer`, else backward), so reordered packets map below the newest one and a wrap
/// from 65535 to 0 continues at 65536. The first value unwraps to itself; values before
/// it may unwrap negative.
public struct SequenceNumberUnwrapper: Equatable, Sendable {
    private var last: Int64?

    public init() {}

    /// The most recently unwrapped value.
    public var lastUnwrapped: Int64? { last }

    /// Unwraps `sequenceNumber` and remembers it as the reference for the next call.
    public mutating func unwrap(_ sequenceNumber: UInt16) -> Int64 {
        let value = peek(sequenceNumber)
        last = value
        return value
    }

    /// Unwraps without updating the reference.
    public func peek(_ sequenceNumber: UInt16) -> Int64 {
        guard let last else { return Int64(sequenceNumber) }
        let lastLow = UInt16(truncatingIfNeeded: last)
        let forward = Int64(sequenceNumber &- lastLow)
        return isNewer(sequenceNumber, lastLow) || forward == 0 ? last + forward : last + forward - 65536
    }
}
