/// Errors of the I/O adapters. `code` is a stable string for logs and the wire.
public enum IOError: Error, Equatable {
    case bindFailed(String)
    case connectFailed(String)
    case httpStatus(Int)
    case timeout
    case closed
    case invalidURL(String)
    case handshakeFailed(String)
    case requestFailed(String)

    public var code: String {
        switch self {
        case .bindFailed: return "bind_failed"
        case .connectFailed: return "connect_failed"
        case .httpStatus: return "http_status"
        case .timeout: return "timeout"
        case .closed: return "closed"
        case .invalidURL: return "invalid_url"
        case .handshakeFailed: return "handshake_failed"
        case .requestFailed: return "request_failed"
        }
    }
}

extension IOError: CustomStringConvertible {
    /// For logs and exit messages: the code, then what the adapter reported.
    public var description: String {
        switch self {
        case .bindFailed(let m), .connectFailed(let m), .invalidURL(let m), .handshakeFailed(let m), .requestFailed(let m):
            "\(code): \(m)"
        case .httpStatus(let status): "\(code): \(status)"
        case .timeout, .closed: code
        }
    }
}
