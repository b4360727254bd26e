/// A first-in first-out queue of frames waiting for the hub (``SwitchboardServer``'s
/// `pendingFrames` and `pendingPings`): appends at the back, takes from the front in O(1).
///
/// An `Array` with `removeFirst(n)` moved every frame still waiting (and retained and
/// released its text) on every batch; under load, when hundreds of frames wait and a batch
/// takes a few dozen, that was O(waiting) per batch (0.5 % of the hub's CPU in the profile
/// of docs/benchmarks.md "Hub CPU per setup"). Here the front advances over a head index and
/// the storage is compacted only when the consumed part is at least half of it, so each
/// frame is moved at most a constant number of times on average.
struct FrameQueue<Element> {
    private var items: [Element] = []
    private var head = 0

    var isEmpty: Bool { head == items.count }
    var count: Int { items.count - head }

    mutating func append(_ element: Element) { items.append(element) }

    /// The `offset`-th waiting element (0 = the front). `offset` must be below `count`.
    subscript(offset: Int) -> Element { items[head + offset] }

    /// The first `n` waiting elements, front first.
    func prefix(_ n: Int) -> ArraySlice<Element> { items[head ..< head + min(n, count)] }

    /// Drops the first `n` waiting elements (at most `count`).
    mutating func removeFirst(_ n: Int) {
        head += min(n, count)
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64, head * 2 >= items.count {
            // 64: below that, moving the rest costs less than tracking it.
            items.removeFirst(head)
            head = 0
        }
    }
}
