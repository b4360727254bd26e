/// A handful of (fd, poll events) pairs, one per fd, the events of a repeated fd OR-ed
/// together: what a ``ContextCell`` wants polled, what epoll has registered for it, and what
/// epoll reported since its last round.
///
/// A cell holds a few connections, so a few fds: a small array searched linearly, not a
/// dictionary hashed per fd. Building and diffing `[fd: events]` dictionaries on every round
/// was ~2 % of the signaling server's instructions (docs/benchmarks.md, "Binds without
/// SQLite's copies, moves into the commit, unchanged context rounds").
struct FDEvents: Equatable {
    /// fd << 32 | events, in insertion order until ``sort()``.
    private var packed: [UInt64] = []

    var isEmpty: Bool { packed.isEmpty }

    /// Adds `events` to those of `fd`.
    mutating func insert(_ fd: Int32, _ events: UInt32) {
        let key = Self.key(fd)
        if let i = packed.firstIndex(where: { $0 & Self.fdMask == key }) {
            packed[i] |= UInt64(events)
        } else {
            packed.append(key | UInt64(events))
        }
    }

    /// The events of `fd`, nil if it is not in the set.
    func events(of fd: Int32) -> UInt32? {
        let key = Self.key(fd)
        return packed.first { $0 & Self.fdMask == key }.map { UInt32(truncatingIfNeeded: $0) }
    }

    mutating func remove(_ fd: Int32) {
        let key = Self.key(fd)
        packed.removeAll { $0 & Self.fdMask == key }
    }

    /// Empties the set, keeping its storage for the next round.
    mutating func removeAll() { packed.removeAll(keepingCapacity: true) }

    /// Orders the pairs by fd, so that two sets with the same pairs compare equal.
    mutating func sort() { packed.sort() }

    /// The pairs, in the set's order.
    var pairs: [(fd: Int32, events: UInt32)] {
        packed.map { (Int32(bitPattern: UInt32(truncatingIfNeeded: $0 >> 32)), UInt32(truncatingIfNeeded: $0)) }
    }

    private static let fdMask: UInt64 = 0xFFFF_FFFF_0000_0000

    private static func key(_ fd: Int32) -> UInt64 { UInt64(UInt32(bitPattern: fd)) << 32 }
}
