/// In-memory index of the outbox log (schema 6): per device, its last assigned seq, its
/// acknowledged seq and where its unacknowledged entries are (log row and slot); per log row,
/// how many of its entries are still unacknowledged (the row is deleted at zero).
///
/// Derived state, never the source of truth: `SQLiteConnection` rebuilds it from `outbox_log`
/// and `outbox_cursors` whenever it may be stale (another connection committed, per
/// `PRAGMA data_version`, or a transaction or step that changed it was rolled back), so two
/// processes sharing the file still assign dense seqs under the write lock.
///
/// The log holds only unacknowledged entries (rows leave once all their entries are
/// acknowledged), so a rebuild reads a backlog, not history.
///
/// Devices are known lazily: a rebuild loads the cursors of the devices that have entries in
/// the log, and any other device's cursor is read the first time it is needed (``isKnown(_:)``,
/// ``loadCursor(_:last:acked:)``). A device with nothing pending is "settled"; its queue holds
/// nothing its cursor row does not (an acknowledgement writes `last_seq` and `acked_seq`), so
/// once more than ``settledLimit`` devices are settled the oldest are forgotten and read
/// again from their cursors when next used. Memory and rebuilds thus follow the devices
/// with something pending and the recently active ones, not every device ever seen.
final class OutboxIndex {
    struct Location {
        var seq: Int64
        var row: Int64
        var slot: Int32
    }

    struct Queue {
        /// Highest seq assigned (entries, or the cursor's recorded `last_seq`).
        var last: Int64 = 0
        /// Highest seq acknowledged (`outbox_cursors.acked_seq`).
        var acked: Int64 = 0
        /// Unacknowledged entries, ascending by seq.
        var pending: [Location] = []
        /// Next seq to hand out: seqs are never reused, not even after a trim.
        var lastSeq: Int64 { max(last, acked) }

        /// An entry appended with the next seq.
        mutating func append(_ location: Location) {
            last = location.seq
            pending.append(location)
        }
    }

    /// 65,536 settled devices kept (≈ 100 bytes each, ~6 MB): the devices of far more calls in
    /// progress than one hub handles, so a device in a call is read from its cursor once per
    /// call at most, while an index of every device ever seen is bounded.
    static let defaultSettledLimit = 65_536

    /// Devices whose cursor is known: those with entries pending, and settled ones.
    private(set) var queues: [StoredDeviceKey: Queue] = [:]
    /// Unacknowledged entries per log row.
    private(set) var unacked: [Int64: Int] = [:]
    /// Rows whose entries were all acknowledged (found by a rebuild, or acknowledged since
    /// and not yet deleted), to be deleted.
    private(set) var orphanRows: Set<Int64> = []
    /// How many settled devices (nothing pending) are kept before the oldest are forgotten.
    let settledLimit: Int
    /// Devices in the order they settled (a device may appear more than once; an entry whose
    /// device has something pending again, or was forgotten already, is skipped).
    private var settledOrder: [StoredDeviceKey] = []
    /// True during a rebuild: a device's cursor is loaded before its rows, so it looks settled
    /// until ``finishLoading()``; nothing may be forgotten in between.
    private var loading = false

    init(settledLimit: Int = OutboxIndex.defaultSettledLimit) {
        self.settledLimit = max(1, settledLimit)
    }

    /// True when `device`'s cursor is loaded; otherwise the caller reads it
    /// (``loadCursor(_:last:acked:)``, no row = 0, 0) before asking for its seqs.
    func isKnown(_ device: StoredDeviceKey) -> Bool { queues[device] != nil }

    /// The device's last assigned seq. Only for a known device (``isKnown(_:)``).
    func lastSeq(of device: StoredDeviceKey) -> Int64 { queues[device]?.lastSeq ?? 0 }

    /// The device's last assigned seq if its cursor is known (one lookup for both).
    func knownLastSeq(of device: StoredDeviceKey) -> Int64? { queues[device]?.lastSeq }

    /// The device's acknowledged seq. Only for a known device.
    func ackedSeq(of device: StoredDeviceKey) -> Int64 { queues[device]?.acked ?? 0 }

    /// Entries of `device` with seq > `seq`, ascending, at most `limit`.
    func pending(of device: StoredDeviceKey, after seq: Int64, limit: Int) -> ArraySlice<Location> {
        guard let pending = queues[device]?.pending, limit > 0 else { return [] }
        // Binary search for the first seq > `seq`.
        var low = 0, high = pending.count
        while low < high {
            let mid = (low + high) / 2
            if pending[mid].seq <= seq { low = mid + 1 } else { high = mid }
        }
        return pending[low..<min(pending.count, low + limit)]
    }

    // MARK: Building (rebuild from the database).

    /// The cursor row of `device` (0, 0 when it has none), from a rebuild or on first use.
    func loadCursor(_ device: StoredDeviceKey, last: Int64, acked: Int64) {
        let isNew = queues[device] == nil
        queues[device, default: Queue()].last = max(queues[device]?.last ?? 0, last)
        queues[device, default: Queue()].acked = acked
        if isNew { settled(device) }
    }

    /// Adds a stored row's entries; call after every cursor was loaded. Entries at or below
    /// the device's acknowledged seq are skipped (a row left with none becomes an orphan).
    func loadRow(_ row: Int64, _ record: OutboxLogRecord) {
        var count = 0
        for (slot, entry) in record.entries.enumerated() {
            var queue = queues[entry.device, default: Queue()]
            queue.last = max(queue.last, entry.seq)
            if entry.seq > queue.acked {
                queue.pending.append(Location(seq: entry.seq, row: row, slot: Int32(slot)))
                count += 1
            }
            queues[entry.device] = queue
        }
        if count > 0 { unacked[row] = count } else { orphanRows.insert(row) }
    }

    /// Starts a rebuild: cursors first (``loadCursor(_:last:acked:)``), then rows
    /// (``loadRow(_:_:)``), then ``finishLoading()``.
    func beginLoading() { loading = true }

    /// Sorts every queue by seq once all rows are loaded (rows come in id order, which need
    /// not be seq order after a migration), and forgets settled devices beyond the limit.
    func finishLoading() {
        for (device, queue) in queues where !queue.pending.isEmpty {
            queues[device]?.pending.sort { $0.seq < $1.seq }
        }
        loading = false
        if settledOrder.count > 2 * settledLimit { sweepSettled() }
    }

    /// `device` has nothing pending now: remember the order, and forget the oldest settled
    /// devices once there are more than ``settledLimit``.
    private func settled(_ device: StoredDeviceKey) {
        settledOrder.append(device)
        if !loading, settledOrder.count > 2 * settledLimit { sweepSettled() }
    }

    /// Keeps the `settledLimit` most recently settled devices and forgets the rest. The order
    /// list comes out with one entry per settled device (at most `settledLimit`), so the next
    /// sweep is at least `settledLimit` settles away: O(1) per settle, amortized.
    private func sweepSettled() {
        var seen = Set<StoredDeviceKey>()
        var kept: [StoredDeviceKey] = []
        for device in settledOrder.reversed() where queues[device]?.pending.isEmpty == true {
            if seen.insert(device).inserted { kept.append(device) }
        }
        kept.reverse()
        let excess = kept.count - settledLimit
        if excess > 0 {
            for device in kept.prefix(excess) { queues[device] = nil }
            kept.removeFirst(excess)
        }
        settledOrder = kept
    }

    // MARK: Changes (after the matching SQL succeeded).

    /// Records a newly appended row.
    func appended(row: Int64, _ record: OutboxLogRecord) {
        for (slot, entry) in record.entries.enumerated() {
            // One lookup per entry, the queue modified in place.
            queues[entry.device, default: Queue()].append(Location(seq: entry.seq, row: row, slot: Int32(slot)))
        }
        unacked[row] = record.entries.count
    }

    /// Entries up to `seq` acknowledged (`seq` already clamped); returns the rows left with
    /// no unacknowledged entry, which the caller deletes (now or, through
    /// ``deferDeletion(of:)``, later).
    func acknowledged(_ device: StoredDeviceKey, upTo seq: Int64) -> [Int64] {
        // The queue is changed in place (`values[slot]`): copied out and written back, its
        // `pending` array was shared with the dictionary's copy when trimmed, so every
        // acknowledgement copied it.
        guard let slot = queues.index(forKey: device) else { return [] }
        var emptied: [Int64] = []
        if Self.trim(&queues.values[slot], upTo: seq, unacked: &unacked, emptied: &emptied) { settled(device) }
        return emptied
    }

    /// Acknowledges `queue` up to `seq`: the rows whose last unacknowledged entry it held go
    /// to `emptied`. True when the queue is left with nothing pending (and `seq` moved it).
    private static func trim(_ queue: inout Queue, upTo seq: Int64, unacked: inout [Int64: Int], emptied: inout [Int64]) -> Bool {
        guard seq > queue.acked else { return false }
        queue.acked = seq
        var trimmed = 0
        while trimmed < queue.pending.count, queue.pending[trimmed].seq <= seq {
            let row = queue.pending[trimmed].row
            let left = (unacked[row] ?? 1) - 1
            if left <= 0 {
                unacked[row] = nil
                emptied.append(row)
            } else {
                unacked[row] = left
            }
            trimmed += 1
        }
        queue.pending.removeFirst(trimmed)
        return queue.pending.isEmpty
    }

    /// Rows left with no unacknowledged entry (from ``acknowledged(_:upTo:)``), deleted
    /// later in a group (`SQLiteCallStore.deleteAcknowledgedRowsIfMany`) or by purge.
    func deferDeletion(of rows: [Int64]) { orphanRows.formUnion(rows) }

    /// A row deleted as an orphan.
    func removedOrphan(_ row: Int64) { orphanRows.remove(row) }
}
