import Foundation

/// One message queued for a device. `seq` is per-device, strictly increasing, starting at 1,
/// and never reused (not even after entries are acknowledged and trimmed).
public struct OutboxEntry: Sendable, Equatable {
    public var device: StoredDeviceKey
    public var seq: Int64
    /// Opaque serialized message (JSON).
    public var payload: Data
    public var createdAt: Int64

    public init(device: StoredDeviceKey, seq: Int64, payload: Data, createdAt: Int64) {
        self.device = device
        self.seq = seq
        self.payload = payload
        self.createdAt = createdAt
    }
}
