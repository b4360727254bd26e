/// Why an RTP packet could not be parsed, rewritten or serialized.
///
/// Closed set; `code` is a stable string for logs and metrics.
public enum RTPError: Error, Equatable, Sendable {
    /// Fewer bytes than the fixed header, CSRC list, extension or padding announce.
    case truncated
    /// Version field is not 2 (RFC 3550 §5.1).
    case badVersion(UInt8)
    /// P bit set but the last octet is 0 or counts past the payload start (RFC 3550 §5.1).
    case badPadding
    /// Header extension length runs past the packet, or an RFC 8285 element is malformed.
    case badExtension
    /// CC announces more CSRCs than the packet holds.
    case badCSRCCount
    /// The caller's output buffer is too small.
    case bufferTooSmall
    /// No header extension element with that id.
    case extensionNotFound
    /// In-place replacement must keep the element's length.
    case extensionLengthMismatch
    /// Extension id/length not encodable (RFC 8285 §4.2/§4.3), or a field out of range.
    case invalidField

    /// Stable string code.
    public var code: String {
        switch self {
        case .truncated: "rtp_truncated"
        case .badVersion: "rtp_bad_version"
        case .badPadding: "rtp_bad_padding"
        case .badExtension: "rtp_bad_extension"
        case .badCSRCCount: "rtp_bad_csrc_count"
        case .bufferTooSmall: "rtp_buffer_too_small"
        case .extensionNotFound: "rtp_extension_not_found"
        case .extensionLengthMismatch: "rtp_extension_length_mismatch"
        case .invalidField: "rtp_invalid_field"
        }
    }
}
