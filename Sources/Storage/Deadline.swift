/// A timer attached to a call (e.g. kind "ring" for the ring timeout). At most one deadline per
/// (callID, kind): setting it again replaces the due time.
public struct Deadline: Sendable, Equatable, Hashable {
    public var callID: String
    public var kind: String
    public var dueAt: Int64

    public init(callID: String, kind: String, dueAt: Int64) {
        self.callID = callID
        self.kind = kind
        self.dueAt = dueAt
    }
}
