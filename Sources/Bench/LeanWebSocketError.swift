import IO

/// Why a ``LeanWebSocket`` failed or closed with a protocol error (RFC 6455 §7.4.1 codes
/// where one applies). `code` is a stable string for the benchmark's error counters.
public enum LeanWebSocketError: Error, Equatable {
    /// Not a `ws://host:port/path` URL (the lean client speaks no TLS: loopback benchmark).
    case invalidURL(String)
    /// `getaddrinfo` found no IPv4/IPv6 address for the host.
    case resolveFailed(String)
    /// socket/connect failed (errno), or the peer reset/closed before the upgrade finished.
    case connectFailed(Int32)
    /// No complete upgrade within ``LeanWebSocket/handshakeTimeoutMs``.
    case handshakeTimeout
    /// The upgrade was answered with another status than 101 (RFC 6455 §4.1, step 1).
    case handshakeStatus(Int)
    /// A required header of the 101 answer is missing or wrong (RFC 6455 §4.1, steps 2–4):
    /// `upgrade`, `connection` or `accept`; `headersTooLong`/`malformed` for the head itself.
    case handshakeRejected(String)
    /// A server frame violates RFC 6455 §5 (masked, reserved bits, bad opcode, bad control
    /// frame, continuation out of order): close code 1002.
    case protocolViolation(String)
    /// A message larger than the client's limit (RFC 6455 §7.4.1 code 1009).
    case messageTooBig(Int)
    /// A text message or close reason that is not UTF-8 (RFC 6455 §8.1, code 1007).
    case invalidUTF8

    public var code: String {
        switch self {
        case .invalidURL: return "invalid_url"
        case .resolveFailed: return "resolve_failed"
        case .connectFailed: return "connect_failed"
        case .handshakeTimeout: return "handshake_timeout"
        case .handshakeStatus: return "handshake_status"
        case .handshakeRejected: return "handshake_rejected"
        case .protocolViolation: return "protocol_violation"
        case .messageTooBig: return "message_too_big"
        case .invalidUTF8: return "invalid_utf8"
        }
    }

    /// The close code this error sends in its close frame (RFC 6455 §7.4.1).
    var closeCode: UInt16 {
        switch self {
        case .messageTooBig: return 1009
        case .invalidUTF8: return 1007
        default: return 1002
        }
    }

    /// The same failure as the libsoup client reports it, so both clients count errors alike.
    var ioError: IOError {
        switch self {
        case .invalidURL(let url): return .invalidURL(url)
        case .handshakeStatus(let status): return .httpStatus(status)
        case .handshakeTimeout: return .timeout
        case .handshakeRejected(let what): return .handshakeFailed(what)
        default: return .connectFailed(code)
        }
    }
}
