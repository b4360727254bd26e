#if canImport(Glibc)
import Glibc
#endif

/// A datagram waiting for its departure time.
struct DelayedDatagram {
    let deliverAt: UInt64
    /// Tie-breaker: equal times leave in arrival order.
    let sequence: UInt64
    let direction: Direction
    var fd: Int32
    let destination: sockaddr_in
    let bytes: [UInt8]
}

/// Binary min-heap on (deliverAt, sequence): the relay's timer heap.
struct DelayQueue {
    private var heap: [DelayedDatagram] = []
    private(set) var bytes = 0

    var count: Int { heap.count }
    var next: UInt64? { heap.first?.deliverAt }

    private func less(_ a: Int, _ b: Int) -> Bool {
        let x = heap[a], y = heap[b]
        return x.deliverAt != y.deliverAt ? x.deliverAt < y.deliverAt : x.sequence < y.sequence
    }

    mutating func push(_ item: DelayedDatagram) {
        heap.append(item)
        bytes += item.bytes.count
        var i = heap.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard less(i, parent) else { break }
            heap.swapAt(i, parent)
            i = parent
        }
    }

    /// Removes and returns the earliest item if it is due at `now`.
    mutating func popDue(_ now: UInt64) -> DelayedDatagram? {
        guard let first = heap.first, first.deliverAt <= now else { return nil }
        heap.swapAt(0, heap.count - 1)
        let item = heap.removeLast()
        bytes -= item.bytes.count
        var i = 0
        while true {
            let l = 2 * i + 1, r = l + 1
            var m = i
            if l < heap.count, less(l, m) { m = l }
            if r < heap.count, less(r, m) { m = r }
            if m == i { break }
            heap.swapAt(i, m)
            i = m
        }
        return item
    }

    /// Datagrams waiting to leave through `old` leave through `new` instead (a NAT rebinding:
    /// what is still in flight goes out from the new binding). The heap order is unchanged.
    mutating func replaceSocket(_ old: Int32, with new: Int32) {
        for index in heap.indices where heap[index].fd == old { heap[index].fd = new }
    }

    mutating func removeAll() {
        heap.removeAll()
        bytes = 0
    }
}
