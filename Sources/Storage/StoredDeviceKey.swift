/// One device of one account: the unit that owns an outbox, a processed-event namespace and a
/// delivery cursor.
///
/// Named `StoredDeviceKey` (not `DeviceKey`) so that modules importing both `CallCore` and
/// `Storage` do not need to qualify `CallCore.DeviceKey`.
public struct StoredDeviceKey: Hashable, Sendable {
    public var account: String
    public var device: String

    public init(account: String, device: String) {
        self.account = account
        self.device = device
    }
}
