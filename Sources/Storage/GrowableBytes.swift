import Foundation

/// A growable byte buffer on memory of its own, for the writers that build a record or a
/// frame piece by piece (Signaling's `JSONWriter`, ``CompactWriter``): a put is a bounds
/// check and a store or `memcpy`, where `Array.append(contentsOf:)` of a short run cost ~115
/// instructions (uniqueness and capacity checks, the generic copy's set-up) and a writer
/// makes ~20 such appends per object (callgrind, docs/benchmarks.md "Writers on buffers of
/// their own").
///
/// Noncopyable, so that the memory has one owner and is freed once (`deinit`).
package struct GrowableBytes: ~Copyable {
    // `@usableFromInline` and the puts `@inlinable`: the writers live in other modules, and
    // a put that is a call across modules would cost what the buffer is there to save.
    @usableFromInline var base: UnsafeMutablePointer<UInt8>
    @usableFromInline var capacity: Int
    @usableFromInline var written = 0

    package init(capacity: Int) {
        self.capacity = Swift.max(capacity, 16)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    @inlinable @inline(__always)
    package mutating func reserve(_ extra: Int) {
        if written + extra > capacity { grow(to: written + extra) }
    }

    @usableFromInline @inline(never)
    mutating func grow(to needed: Int) {
        let larger = Swift.max(needed, 2 * capacity)
        let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: larger)
        moved.initialize(from: base, count: written)
        base.deallocate()
        base = moved
        capacity = larger
    }

    @inlinable @inline(__always)
    package mutating func put(_ byte: UInt8) {
        reserve(1)
        base[written] = byte
        written += 1
    }

    @inlinable @inline(__always)
    package mutating func put(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress else { return }
        reserve(bytes.count)
        (base + written).initialize(from: source, count: bytes.count)
        written += bytes.count
    }

    /// `,"key":` (the comma if asked) for a JSON key that needs no escape: one capacity
    /// check for the five parts.
    @inlinable @inline(__always)
    package mutating func putJSONKey(_ key: UnsafeBufferPointer<UInt8>, comma: Bool) {
        let n = key.count
        reserve(n + 4)
        var at = written
        if comma { base[at] = UInt8(ascii: ","); at += 1 }
        base[at] = UInt8(ascii: "\"")
        if let source = key.baseAddress { (base + at + 1).initialize(from: source, count: n) }
        base[at + 1 + n] = UInt8(ascii: "\"")
        base[at + 2 + n] = UInt8(ascii: ":")
        written = at + 3 + n
    }

    /// The bytes written so far, as an array (one copy).
    package func array() -> [UInt8] {
        [UInt8](UnsafeBufferPointer(start: base, count: written))
    }

    /// The bytes written so far, as a string (one copy, with UTF-8 validation).
    package func string() -> String {
        String(decoding: UnsafeBufferPointer(start: base, count: written), as: UTF8.self)
    }

    /// The bytes written so far, as `Data` (one copy).
    package func data() -> Data {
        Data(bytes: base, count: written)
    }
}
