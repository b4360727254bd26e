#if canImport(Glibc)
import Glibc
#endif

/// One buffer per parameter of a prepared statement, into which ``SQLiteStatement`` copies a
/// text or blob value before binding it `SQLITE_STATIC`: SQLite then reads the value from
/// here when the statement steps, instead of taking a copy of its own with `sqlite3Malloc`
/// at every bind and freeing it at the next reset (`SQLITE_TRANSIENT`).
///
/// A buffer grows (doubling, from ``smallest``) and is reused for every later bind of the
/// same parameter, so a statement that runs thousands of times per second allocates only
/// while its values still grow. Noncopyable: it owns the buffers and frees them once.
struct BindArena: ~Copyable {
    /// 64 bytes: the smallest buffer; most bound values (account, device and event IDs,
    /// payload hashes) are shorter, so a parameter's first bind allocates once.
    static let smallest = 64
    /// 256 KB: values above this are not copied here (the caller binds them
    /// `SQLITE_TRANSIENT`), so that one outsized value (a call state with a very long SDP
    /// history) does not stay allocated with the statement for the connection's lifetime.
    /// Call states and outbox records are a few KB.
    static let largestKept = 256 * 1024

    private var buffers: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    private var capacities: UnsafeMutablePointer<Int>
    /// Parameters are numbered 1...count, as in SQLite.
    let count: Int

    init(parameters: Int) {
        count = max(0, parameters)
        buffers = .allocate(capacity: count + 1)
        buffers.initialize(repeating: nil, count: count + 1)
        capacities = .allocate(capacity: count + 1)
        capacities.initialize(repeating: 0, count: count + 1)
    }

    deinit {
        for i in 0 ... count { free(buffers[i]) }
        buffers.deallocate()
        capacities.deallocate()
    }

    /// Copies `bytes` into parameter `parameter`'s buffer and returns where they are, or nil
    /// when the value is not kept here (an unknown parameter index, an empty value, one over
    /// ``largestKept``, or no memory): the caller then binds it transient.
    ///
    /// The previous value of the same parameter is overwritten (or its buffer freed when it
    /// grows): the caller must bind the returned pointer right away, replacing SQLite's
    /// pointer to that previous value before the statement steps again.
    mutating func copy(_ bytes: UnsafeRawBufferPointer, parameter: Int) -> UnsafeRawPointer? {
        guard parameter >= 1, parameter <= count, let source = bytes.baseAddress,
              bytes.count > 0, bytes.count <= Self.largestKept else { return nil }
        if capacities[parameter] < bytes.count {
            var capacity = max(Self.smallest, capacities[parameter])
            while capacity < bytes.count { capacity *= 2 }
            // realloc would copy the old contents, which are about to be overwritten.
            free(buffers[parameter])
            buffers[parameter] = malloc(capacity)
            capacities[parameter] = buffers[parameter] == nil ? 0 : capacity
        }
        guard let target = buffers[parameter] else { return nil }
        target.copyMemory(from: source, byteCount: bytes.count)
        return UnsafeRawPointer(target)
    }
}
