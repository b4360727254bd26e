import Foundation

/// One call as stored: an opaque state blob (the call model's JSON, which this module does not
/// interpret) plus the few columns the store needs to index and arbitrate on.
///
/// Timestamps are in whatever unit the caller uses consistently (the hub uses milliseconds
/// since the Unix epoch); the store only compares them.
public struct StoredCall: Sendable, Equatable {
    public var callID: String
    /// Optimistic-concurrency revision. A commit writes a call only if the stored revision
    /// equals `StepCommit.expectedRevision`; the new revision must be greater.
    public var revision: Int64
    /// Opaque serialized call state (JSON).
    public var state: Data
    /// Terminal calls are excluded from `activeCalls` and become purgeable tombstones.
    public var isTerminal: Bool
    /// Account IDs taking part; order is preserved, used by `activeCalls(involving:)`.
    public var participants: [String]
    public var createdAt: Int64
    public var updatedAt: Int64
    /// Opaque large part of the state that changes on few steps (the hub keeps the SDP
    /// offer/answer bodies here), stored in a row of its own so that the call row, rewritten
    /// on every step, stays small. Written only when ``StepCommit/descriptionsChanged``;
    /// empty = none (the row is deleted).
    public var descriptions: Data

    public init(
        callID: String, revision: Int64, state: Data, isTerminal: Bool,
        participants: [String], createdAt: Int64, updatedAt: Int64, descriptions: Data = Data()
    ) {
        self.callID = callID
        self.revision = revision
        self.state = state
        self.isTerminal = isTerminal
        self.participants = participants
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.descriptions = descriptions
    }
}
