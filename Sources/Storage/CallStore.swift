import Foundation

/// Durable store for call signaling. Dialect-free: implementations (SQLite now, PostgreSQL
/// later) keep their SQL to themselves. All blobs are opaque; the store does not know the
/// call model.
public protocol CallStore: AnyObject {
    func loadCall(_ callID: String) throws -> StoredCall?
    /// Non-terminal calls with this participant, ordered by call ID.
    func activeCalls(involving account: String) throws -> [StoredCall]
    func processedEvent(account: String, device: String, eventID: String) throws -> ProcessedEvent?
    /// One transaction: conditional call write on revision, eventID record, outbox appends,
    /// deadlines. Throws `revisionConflict` (or `duplicateEvent`) and writes nothing if a check
    /// fails. Returns the outbox entries as stored, with their seqs, in `step.outbox` order.
    @discardableResult func commit(_ step: StepCommit) throws -> [OutboxEntry]
    /// Entries with seq > `seq`, ascending, at most `limit`.
    func outbox(for device: StoredDeviceKey, after seq: Int64, limit: Int) throws -> [OutboxEntry]
    /// Highest seq ever assigned to the device (0 if none), including trimmed entries.
    func lastSeq(for device: StoredDeviceKey) throws -> Int64
    /// Client cursor confirmation: entries with seq <= `seq` are trimmed. `seq` is clamped to
    /// `lastSeq`, so acknowledging the future cannot swallow later entries.
    func acknowledge(device: StoredDeviceKey, upTo seq: Int64) throws
    /// Records (or refreshes) a device of an account, for ringing offline devices.
    func registerDevice(_ device: StoredDeviceKey, now: Int64) throws
    /// Device IDs registered for the account, sorted.
    func devices(of account: String) throws -> [String]
    /// Deadlines with dueAt <= now, earliest first (ties by callID, kind), at most `limit`.
    func dueDeadlines(atOrBefore now: Int64, limit: Int) throws -> [Deadline]
    /// The earliest deadline, if any.
    func nextDeadline() throws -> Deadline?
    /// All deadlines, earliest first.
    func allDeadlines() throws -> [Deadline]
    /// Retention: delete terminal calls (tombstones) updated before `terminalCallsUpdatedBefore`
    /// (with their participants and deadlines), processed events older than
    /// `eventsProcessedBefore`, and outbox entries already acknowledged; returns counts.
    func purge(terminalCallsUpdatedBefore: Int64, eventsProcessedBefore: Int64) throws -> PurgeCounts
    /// Group commit: every `commit` inside `body` becomes durable together when `body`
    /// returns (one transaction), or none does if the final commit fails. A step refused
    /// inside (`revisionConflict`, `duplicateEvent`) writes nothing and the batch goes on; a
    /// step that fails after it started writing (an I/O error, a full disk) fails the whole
    /// batch: later steps throw that error without writing, and `batch` rolls back and
    /// throws it. Callers must not let anything leave the process (acks, deliveries) until
    /// `batch` has returned.
    func batch<T>(_ body: () throws -> T) throws -> T
}
