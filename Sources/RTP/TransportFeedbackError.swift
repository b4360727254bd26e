/// Why a transport-wide CC feedback body (draft-holmer-rmcat-transport-wide-cc-extensions-01
/// §3.1) could not be parsed or built.
public enum TransportFeedbackError: Error, Equatable, Sendable {
    /// Fewer bytes than the fixed fields, the chunks or the receive deltas need.
    case truncated
    /// Packet status count is 0 (libwebrtc rejects empty feedback too).
    case empty
    /// A 2-bit status symbol is 3, reserved in draft -01 §3.1.1.
    case reservedSymbol
    /// A value does not fit its wire field (more than 65535 statuses, a 24-bit reference
    /// time overflow, a receive delta outside Int16, or a maximum size below the minimum).
    case invalidField

    /// Stable string code.
    public var code: String {
        switch self {
        case .truncated: "tcc_truncated"
        case .empty: "tcc_empty"
        case .reservedSymbol: "tcc_reserved_symbol"
        case .invalidField: "tcc_invalid_field"
        }
    }
}
