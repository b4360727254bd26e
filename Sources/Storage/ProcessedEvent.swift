import Foundation

/// Idempotency record: the result of handling one client event, keyed by
/// (account, device, eventID), so a retried event returns the stored result instead of
/// being applied twice.
public struct ProcessedEvent: Sendable, Equatable {
    public var account: String
    public var device: String
    public var eventID: String
    /// Hash of the event payload, so a reused eventID with a different payload can be told apart.
    public var payloadHash: String
    /// Opaque serialized result (JSON) returned to the client on replay.
    public var result: Data
    public var processedAt: Int64

    public init(
        account: String, device: String, eventID: String, payloadHash: String,
        result: Data, processedAt: Int64
    ) {
        self.account = account
        self.device = device
        self.eventID = eventID
        self.payloadHash = payloadHash
        self.result = result
        self.processedAt = processedAt
    }
}
