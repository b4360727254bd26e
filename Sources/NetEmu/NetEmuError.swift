/// Why the relay refused a call. Closed set with stable codes.
public enum NetEmuError: Error, Equatable, Sendable {
    /// An impairment field is out of range (the field's name).
    case badImpairment(String)
    /// The target or listen address is not a dotted IPv4 address (the relay is loopback-only).
    case badAddress(String)
    /// A socket call failed (call name, errno).
    case socket(String, Int32)
    /// `start()` after `stop()`, or twice.
    case notRestartable

    /// Stable string code.
    public var code: String {
        switch self {
        case .badImpairment: "netemu_bad_impairment"
        case .badAddress: "netemu_bad_address"
        case .socket: "netemu_socket"
        case .notRestartable: "netemu_not_restartable"
        }
    }
}
