/// Where ``JSONWriter``'s escaper and number writer put bytes: an `[UInt8]` (the memos and
/// frame splices that keep their bytes) or a ``JSONByteBuffer`` (the writer's own buffer).
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

/// A growable byte buffer on memory of its own, for ``JSONWriter``: a put is a bounds
/// check and a store or `memcpy`, where `Array.append(contentsOf:)` of a short run cost ~115
/// instructions (uniqueness and capacity checks, the generic copy's set-up) and a writer
/// makes ~20 such appends per object (callgrind, docs/benchmarks.md "A JSON writer on its
/// own buffer").
///
/// Noncopyable, so that the memory has one owner and is freed once (`deinit`).
struct JSONByteBuffer: ~Copyable, JSONByteSink {
    private var base: UnsafeMutablePointer<UInt8>
    private(set) var count = 0
    private var capacity: Int

    init(capacity: Int) {
        self.capacity = Swift.max(capacity, 16)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    @inline(__always)
    mutating func reserve(_ extra: Int) {
        if count + extra > capacity { grow(to: count + extra) }
    }

    @inline(never)
    private mutating func grow(to needed: Int) {
        let larger = Swift.max(needed, 2 * capacity)
        let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: larger)
        moved.initialize(from: base, count: count)
        base.deallocate()
        base = moved
        capacity = larger
    }

    @inline(__always)
    mutating func put(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    @inline(__always)
    mutating func put(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress else { return }
        reserve(bytes.count)
        (base + count).initialize(from: source, count: bytes.count)
        count += bytes.count
    }

    /// `"text":` for a key that needs no escape: one capacity check for the five parts.
    @inline(__always)
    mutating func putKey(_ key: UnsafeBufferPointer<UInt8>, comma: Bool) {
        let n = key.count
        reserve(n + 4)
        var at = count
        if comma { base[at] = UInt8(ascii: ","); at += 1 }
        base[at] = UInt8(ascii: "\"")
        if let source = key.baseAddress { (base + at + 1).initialize(from: source, count: n) }
        base[at + 1 + n] = UInt8(ascii: "\"")
        base[at + 2 + n] = UInt8(ascii: ":")
        count = at + 3 + n
    }

    /// The bytes written so far, as an array (one copy).
    func array() -> [UInt8] {
        [UInt8](UnsafeBufferPointer(start: base, count: count))
    }

    /// The bytes written so far, as a string (one copy; the bytes are valid UTF-8, see
    /// ``JSONWriter/finishFrame()``).
    func string() -> String {
        String(decoding: UnsafeBufferPointer(start: base, count: count), as: UTF8.self)
    }
}
