/// Why an RTCP compound packet could not be parsed or serialized.
public enum RTCPError: Error, Equatable, Sendable {
    /// Fewer bytes than a header or a length field announces.
    case truncated
    /// Version field is not 2 (RFC 3550 §6.4.1).
    case badVersion(UInt8)
    /// Padding count is 0 or larger than the packet body (RFC 3550 §6.4.1).
    case badPadding
    /// A known packet's body does not match its count field / minimum size.
    case malformed(packetType: UInt8)
    /// The caller's output buffer is too small.
    case bufferTooSmall
    /// A value does not fit its wire field (e.g. more than 31 report blocks).
    case invalidField

    /// Stable string code.
    public var code: String {
        switch self {
        case .truncated: "rtcp_truncated"
        case .badVersion: "rtcp_bad_version"
        case .badPadding: "rtcp_bad_padding"
        case .malformed: "rtcp_malformed"
        case .bufferTooSmall: "rtcp_buffer_too_small"
        case .invalidField: "rtcp_invalid_field"
        }
    }
}
