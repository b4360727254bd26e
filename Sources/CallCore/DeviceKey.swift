/// One device of one account: the unit the call model rings, stops and relays to.
///
/// Both parts come from the authenticated token (call-design §1: "deviceID: from the auth
/// token"). `Comparable` gives every effect list a deterministic order (sorted by account,
/// then device), so tests can assert exact effect sequences.
public struct DeviceKey: Hashable, Codable, Sendable, Comparable, CustomStringConvertible {
    public var account: String
    public var device: String

    public init(account: String, device: String) {
        self.account = account
        self.device = device
    }

    public static func < (lhs: DeviceKey, rhs: DeviceKey) -> Bool {
        (lhs.account, lhs.device) < (rhs.account, rhs.device)
    }

    public var description: String { "\(account)/\(device)" }
}
