/// The most recent `capacity` samples of a stream, without shifting on every append (a
/// synthetic peer decodes 50 frames/s per remote SSRC; the load tester runs many peers).
struct SampleRing {
    private var storage: [Int16]
    private var next = 0
    private var filled = 0

    init(capacity: Int) { storage = [Int16](repeating: 0, count: max(1, capacity)) }

    mutating func append<S: Sequence>(contentsOf samples: S) where S.Element == Int16 {
        for sample in samples {
            storage[next] = sample
            next = (next + 1) % storage.count
            filled = min(filled + 1, storage.count)
        }
    }

    /// The stored samples, oldest first.
    var samples: [Int16] {
        guard filled == storage.count else { return Array(storage[0..<filled]) }
        return Array(storage[next...] + storage[..<next])
    }
}
