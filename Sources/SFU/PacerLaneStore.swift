/// The lanes of a `Pacer`, indexed by `ParticipantID.raw`, in memory the pacer manages
/// itself instead of an `Array` stored on the class.
///
/// Every forward reads and writes its lane several times (`transportSequence(of:)`, then
/// `admit`: the dropping state, the queue, the rate, the budget, the number). As an `Array`
/// in a `var` of a class, each of those accesses paid a dynamic exclusivity check
/// (`swift_beginAccess`/`swift_endAccess`), a uniqueness check before writes and a bounds
/// check: ≈ 860 instructions per forward under callgrind, 8 % of the server's user-space
/// instructions per forward (docs/benchmarks.md, "Forwarding (SFU)"). Here the pacer holds a
/// `let` of this struct, so an access is a load or a store. Loop thread only, like the pacer.
struct PacerLaneStore {
    private struct Header {
        var base: UnsafeMutablePointer<Pacer.Lane>
        var count: Int
        var capacity: Int
    }

    private let header: UnsafeMutablePointer<Header>

    /// Room for `capacity` lanes before the first reallocation.
    init(capacity: Int) {
        let capacity = max(capacity, 1)
        header = .allocate(capacity: 1)
        header.initialize(to: Header(base: .allocate(capacity: capacity), count: 0, capacity: capacity))
    }

    /// Frees the lanes; call once, from the pacer's `deinit`.
    func deallocate() {
        header.pointee.base.deinitialize(count: header.pointee.count)
        header.pointee.base.deallocate()
        header.deinitialize(count: 1)
        header.deallocate()
    }

    var count: Int { header.pointee.count }

    /// Lane `index` (< `count`: the pacer's `lane(_:)` grows the store first).
    subscript(index: Int) -> Pacer.Lane {
        unsafeAddress { UnsafePointer(header.pointee.base + index) }
        nonmutating unsafeMutableAddress { header.pointee.base + index }
    }

    /// Adds a lane at the end, doubling the memory when full (once per new highest id).
    func append(_ lane: Pacer.Lane) {
        if header.pointee.count == header.pointee.capacity {
            let capacity = header.pointee.capacity * 2
            let base = UnsafeMutablePointer<Pacer.Lane>.allocate(capacity: capacity)
            base.moveInitialize(from: header.pointee.base, count: header.pointee.count)
            header.pointee.base.deallocate()
            header.pointee.base = base
            header.pointee.capacity = capacity
        }
        (header.pointee.base + header.pointee.count).initialize(to: lane)
        header.pointee.count += 1
    }
}
