/// A binary min-heap of (deadline, key) pairs: the next GLib timeout of each WebSocket
/// context (keepalive pings, close timeouts) for ``ReadyDispatcher``. Entries are never
/// removed from the middle: the owner keeps each key's current deadline and ignores popped
/// entries that no longer match it (lazy deletion), so re-arming costs O(log n).
struct DeadlineHeap {
    struct Entry: Equatable {
        let deadline: Int64
        let key: UInt64
    }

    private(set) var entries: [Entry] = []

    var count: Int { entries.count }
    var isEmpty: Bool { entries.isEmpty }
    /// The earliest deadline, nil when empty.
    var earliest: Int64? { entries.first?.deadline }

    mutating func push(deadline: Int64, key: UInt64) {
        entries.append(Entry(deadline: deadline, key: key))
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].deadline < entries[parent].deadline else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the earliest entry if its deadline is at or before `now`.
    mutating func popDue(now: Int64) -> Entry? {
        guard let first = entries.first, first.deadline <= now else { return nil }
        let last = entries.removeLast()
        guard !entries.isEmpty else { return first }
        entries[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < entries.count && entries[left].deadline < entries[smallest].deadline { smallest = left }
            if right < entries.count && entries[right].deadline < entries[smallest].deadline { smallest = right }
            if smallest == parent { break }
            entries.swapAt(parent, smallest)
            parent = smallest
        }
        return first
    }

    /// Rebuilds the heap from `live` (key → current deadline), dropping stale entries.
    mutating func rebuild(_ live: [(key: UInt64, deadline: Int64)]) {
        entries.removeAll(keepingCapacity: true)
        for item in live { push(deadline: item.deadline, key: item.key) }
    }
}
