/// Rows removed by `CallStore.purge`.
public struct PurgeCounts: Sendable, Equatable {
    /// Terminal calls (tombstones) deleted, with their participants and deadlines.
    public var calls: Int
    /// Processed-event (idempotency) records deleted.
    public var events: Int
    /// Outbox log rows deleted because every device had acknowledged their entries and
    /// `acknowledge` had not deleted them already (schema 6; before: entries).
    public var outboxEntries: Int
    // Since schema 6 a payload shared by several devices lives in its step's log row and
    // leaves with it: there is no separate count of shared payloads.

    public init(calls: Int = 0, events: Int = 0, outboxEntries: Int = 0) {
        self.calls = calls
        self.events = events
        self.outboxEntries = outboxEntries
    }
}
