/// Why a frame from a device could not be turned into a message. Each case has a stable
/// wire code (docs/protocol.md §4).
public enum WireError: Error, Equatable, Sendable {
    case malformed(String)
    case tooDeep
    case unsupportedVersion(Int)
    case unknownType(String)
    case invalidIdentifier(field: String)
    case sdpTooLarge
    case tooLarge(limit: Int)

    public var code: String {
        switch self {
        case .malformed, .tooDeep, .unsupportedVersion: return "malformed"
        case .unknownType: return "unknownType"
        case .invalidIdentifier: return "invalidIdentifier"
        case .sdpTooLarge: return "sdpTooLarge"
        case .tooLarge: return "messageTooLarge"
        }
    }

    /// A human-readable explanation; never echoes the offending payload.
    public var message: String {
        switch self {
        case .malformed(let why): return "malformed message: \(why)"
        case .tooDeep: return "JSON nested deeper than \(JSONShape.maxDepth) levels"
        case .unsupportedVersion(let v): return "protocol version \(v) is not supported (this server speaks 1)"
        case .unknownType(let t): return "unknown message type '\(t.prefix(40))'"
        case .invalidIdentifier(let field): return "\(field) must be 1-64 characters of [A-Za-z0-9._:-]"
        case .sdpTooLarge: return "SDP larger than \(ClientMessage.maxSDPBytes) bytes"
        case .tooLarge(let limit): return "message larger than \(limit) bytes; it was dropped"
        }
    }
}
