/// Rows removed by `CallStore.purge`.
public struct PurgeCounts: Sendable, Equatable {
    /// Terminal calls (tombstones) deleted, with their participants and deadlines.
    public var calls: Int
    /// Processed-event (idempotency) records deleted.
    public var events: Int
    /// Outbox entries deleted because the device had acknowledged them.
    public var outboxEntries: Int
    /// Shared outbox payloads deleted because no entry references them any more.
    public var outboxPayloads: Int

    public init(calls: Int = 0, events: Int = 0, outboxEntries: Int = 0, outboxPayloads: Int = 0) {
        self.calls = calls
        self.events = events
        self.outboxEntries = outboxEntries
        self.outboxPayloads = outboxPayloads
    }
}
