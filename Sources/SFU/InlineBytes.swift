/// Up to 16 bytes stored inline (no heap), for short header extension values such as a
/// subscriber's mid that must travel inside a plain `Forward` value.
public struct InlineBytes16: Equatable, Sendable {
    private var low: UInt64 = 0
    private var high: UInt64 = 0
    public fileprivate(set) var count: Int = 0

    public init() {}

    /// Nil when longer than 16 bytes (the RFC 8285 one-byte form limit).
    public init?(_ bytes: some Collection<UInt8>) {
        guard bytes.count <= 16 else { return nil }
        for (index, byte) in bytes.enumerated() {
            if index < 8 { low |= UInt64(byte) << (8 * UInt64(index)) } else { high |= UInt64(byte) << (8 * UInt64(index - 8)) }
        }
        count = bytes.count
    }

    public subscript(index: Int) -> UInt8 {
        index < 8 ? UInt8(truncatingIfNeeded: low >> (8 * UInt64(index))) : UInt8(truncatingIfNeeded: high >> (8 * UInt64(index - 8)))
    }
}

extension InlineBytes16 {
    /// 16 zero bytes.
    static var zeros16: InlineBytes16 {
        var value = InlineBytes16()
        value.count = 16
        return value
    }

    /// Sets byte `index` (0–15); ignored outside the stored count.
    mutating func set(_ index: Int, _ value: UInt8) {
        guard index >= 0, index < count else { return }
        if index < 8 {
            let shift = 8 * UInt64(index)
            low = low & ~(0xFF << shift) | UInt64(value) << shift
        } else {
            let shift = 8 * UInt64(index - 8)
            high = high & ~(0xFF << shift) | UInt64(value) << shift
        }
    }
}
