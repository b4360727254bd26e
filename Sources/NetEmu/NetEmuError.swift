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
    /// `rebind(clientPort:)` for a client the relay has no binding for (the client port).
    case noMapping(UInt16)
    /// A call that needs the relay thread while it is not running (not started, or stopped).
    case notRunning
    /// The relay thread did not serve the call in time.
    case timedOut

    /// Stable string code.
    public var code: String {
        switch self {
        case .badImpairment: "netemu_bad_impairment"
        case .badAddress: "netemu_bad_address"
        case .socket: "netemu_socket"
        case .notRestartable: "netemu_not_restartable"
        case .noMapping: "netemu_no_mapping"
        case .notRunning: "netemu_not_running"
        case .timedOut: "netemu_timed_out"
        }
    }
}
