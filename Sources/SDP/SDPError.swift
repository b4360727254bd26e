/// Errors from parsing or interpreting a session description.
///
/// Line numbers are 1-based positions in the parsed text (blank lines count), so an error can be
/// reported back to the sender verbatim. `code` is a stable string for the wire.
public enum SDPError: Error, Equatable, Sendable {
    /// The text contains no SDP lines at all.
    case empty
    /// A line is not of the form `<type>=<value>` with a single lower-case letter type
    /// (RFC 8866 §5).
    case malformedLine(line: Int)
    /// A type letter this parser does not know; RFC 8866 §5 says to reject such descriptions.
    case unknownLineType(line: Int, type: String)
    /// A known line in a position RFC 8866 §5 does not allow (e.g. `v=` not first, `o=` twice,
    /// `t=` inside a media section).
    case unexpectedLine(line: Int, type: String)
    /// A required line (`v=`, `o=`, `s=`, `t=`) is missing.
    case missingLine(type: String)
    /// A field of a line has the wrong shape (e.g. a non-numeric port in `m=`).
    case invalidField(line: Int, field: String)
    /// An attribute value does not follow its grammar (line is nil for attributes built in code).
    case invalidAttribute(line: Int?, name: String)

    /// Stable machine-readable code for the wire.
    public var code: String {
        switch self {
        case .empty: return "sdp_empty"
        case .malformedLine: return "sdp_malformed_line"
        case .unknownLineType: return "sdp_unknown_line_type"
        case .unexpectedLine: return "sdp_unexpected_line"
        case .missingLine: return "sdp_missing_line"
        case .invalidField: return "sdp_invalid_field"
        case .invalidAttribute: return "sdp_invalid_attribute"
        }
    }
}
