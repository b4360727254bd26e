import Foundation

/// Everything one step of the call state machine writes, applied atomically by
/// `CallStore.commit`.
public struct StepCommit: Sendable {
    public var callID: String
    /// Revision check, always applied inside the transaction:
    /// - `nil`: the call must not exist yet (an insert when `call` is set);
    /// - `n`: the call must exist with revision `n` (a conditional update when `call` is set).
    /// On mismatch the commit throws `revisionConflict` and writes nothing.
    public var expectedRevision: Int64?
    /// New state to write; nil = no call write (e.g. a rejected command that only records its
    /// eventID). Must have `callID == self.callID` and, for an update, a revision greater than
    /// `expectedRevision`.
    public var call: StoredCall?
    /// Idempotency record; a duplicate throws `duplicateEvent` and writes nothing.
    public var processedEvent: ProcessedEvent?
    /// Appended to each device's outbox in order; seqs are assigned inside the transaction.
    public var outbox: [(StoredDeviceKey, Data)]
    /// Upserted (replace the due time of an existing (callID, kind)). Applied after cancels.
    public var setDeadlines: [Deadline]
    /// Deleted if present. Applied before `setDeadlines`.
    public var cancelDeadlines: [(callID: String, kind: String)]
    /// Time of the step, stored as the outbox entries' `createdAt`.
    public var now: Int64
    /// Whether `call.descriptions` differs from what is stored, i.e. must be written. False
    /// leaves the stored descriptions as they are (most steps: ringing, candidates, hangup).
    /// Ignored for an insert, which always stores non-empty descriptions. True (the default)
    /// is always correct, only slower.
    public var descriptionsChanged: Bool

    public init(
        callID: String,
        expectedRevision: Int64?,
        call: StoredCall? = nil,
        processedEvent: ProcessedEvent? = nil,
        outbox: [(StoredDeviceKey, Data)] = [],
        setDeadlines: [Deadline] = [],
        cancelDeadlines: [(callID: String, kind: String)] = [],
        now: Int64,
        descriptionsChanged: Bool = true
    ) {
        self.callID = callID
        self.expectedRevision = expectedRevision
        self.call = call
        self.processedEvent = processedEvent
        self.outbox = outbox
        self.setDeadlines = setDeadlines
        self.cancelDeadlines = cancelDeadlines
        self.now = now
        self.descriptionsChanged = descriptionsChanged
    }
}
