import Media

/// Why `switchboard serve` could not start, where the underlying error does not name the
/// socket (UDPSocketError carries only errno).
public enum StartError: Error, Equatable, CustomStringConvertible {
    /// media.host:media.port could not be bound: taken by another process (any process,
    /// `SFUWorkerPool` claims the port without SO_REUSEPORT first), or not this host's.
    case mediaSocket(host: String, port: UInt16, UDPSocketError)

    /// Stable code for logs and scripts.
    public var code: String {
        switch self {
        case .mediaSocket(_, _, let error): error.code
        }
    }

    public var description: String {
        switch self {
        case .mediaSocket(let host, let port, let error): "media.port \(host):\(port): \(error)"
        }
    }
}
