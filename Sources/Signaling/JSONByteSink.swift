import Storage

/// Where ``JSONWriter``'s escaper and number writer put bytes: an `[UInt8]` (the memos and
/// frame splices that keep their bytes) or a `GrowableBytes` (the writer's own buffer).
protocol JSONByteSink: ~Copyable {
    /// Room for `extra` more bytes, so that the puts after it need not grow the storage.
    mutating func reserve(_ extra: Int)
    mutating func put(_ byte: UInt8)
    mutating func put(_ bytes: UnsafeBufferPointer<UInt8>)
}

extension Array: JSONByteSink where Element == UInt8 {
    mutating func reserve(_ extra: Int) {
        // Geometric growth (an exact reserve per call would reallocate on every field).
        let needed = count + extra
        if capacity < needed { reserveCapacity(Swift.max(needed, 2 * capacity)) }
    }

    mutating func put(_ byte: UInt8) { append(byte) }
    mutating func put(_ bytes: UnsafeBufferPointer<UInt8>) { append(contentsOf: bytes) }
}

extension GrowableBytes: JSONByteSink {}
