import Glibc
import ICE

/// Why a UDP socket could not be opened or configured (`errno` kept for the log).
public enum UDPSocketError: Error, Equatable {
    /// The host is not a numeric IPv4/IPv6 address.
    case invalidAddress(String)
    case socketFailed(errno: Int32)
    case bindFailed(errno: Int32)
    case optionFailed(errno: Int32)

    /// Stable string code.
    public var code: String {
        switch self {
        case .invalidAddress: "udp_invalid_address"
        case .socketFailed: "udp_socket_failed"
        case .bindFailed: "udp_bind_failed"
        case .optionFailed: "udp_option_failed"
        }
    }
}

extension UDPSocketError: CustomStringConvertible {
    /// For the log and `switchboard serve`'s exit message: the code and strerror(3).
    public var description: String {
        switch self {
        case .invalidAddress(let host): "\(code): not a numeric IP address: \(host)"
        case .socketFailed(let e), .bindFailed(let e), .optionFailed(let e): "\(code): \(String(cString: strerror(e)))"
        }
    }
}

/// A bound, nonblocking UDP socket: the one shared media port of ICE-lite.
///
/// Binding "::" gives a dual-stack socket (IPV6_V6ONLY off) whose IPv4 peers appear as
/// ::ffff:a.b.c.d; `SocketAddress` folds those back to IPv4 and `UDPSendBatch` maps them
/// again, so callers only ever see plain IPv4 or IPv6 addresses.
public final class UDPSocket {
    /// 4 MiB each way: at 100k packets/s × ~1.2 KB the kernel queue then absorbs ~35 ms of
    /// loop stall (GC-free but still preemptible) before dropping. The kernel clamps
    /// SO_RCVBUF to net.core.rmem_max (often 208 KiB) unless SO_RCVBUFFORCE is allowed
    /// (CAP_NET_ADMIN), so we try FORCE first; the effective sizes are reported.
    public static let defaultBufferBytes = 4 << 20

    public let fileDescriptor: Int32
    /// The bound address (with the real port when 0 was asked for).
    public let localAddress: SocketAddress
    /// AF_INET6 socket: IPv4 destinations must be written as IPv4-mapped.
    public let isIPv6: Bool
    /// Effective kernel buffer sizes (Linux reports twice the requested value, bookkeeping
    /// included).
    public let receiveBufferBytes: Int
    public let sendBufferBytes: Int

    /// `reusePort` sets SO_REUSEPORT (socket(7)) before bind, so several sockets of this
    /// process share one host:port and the kernel spreads incoming datagrams over them by
    /// a hash of the 4-tuple (`SFUWorkerPool`: one socket per worker, one port for all).
    public init(host: String = "0.0.0.0", port: UInt16 = 0, receiveBufferBytes: Int = UDPSocket.defaultBufferBytes,
                sendBufferBytes: Int = UDPSocket.defaultBufferBytes, reusePort: Bool = false) throws(UDPSocketError) {
        guard let address = SocketAddress(host: host, port: port) else { throw .invalidAddress(host) }
        let ipv6 = address.family == .ipv6
        let fd = socket(ipv6 ? AF_INET6 : AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .socketFailed(errno: errno) }
        do throws(UDPSocketError) {
            if ipv6 { try Self.setInt(fd, Int32(IPPROTO_IPV6), Int32(IPV6_V6ONLY), 0) }
            if reusePort { try Self.setInt(fd, SOL_SOCKET, SO_REUSEPORT, 1) }
            Self.setBuffer(fd, force: Int32(SO_RCVBUFFORCE), plain: Int32(SO_RCVBUF), bytes: receiveBufferBytes)
            Self.setBuffer(fd, force: Int32(SO_SNDBUFFORCE), plain: Int32(SO_SNDBUF), bytes: sendBufferBytes)
            var storage = sockaddr_storage()
            let length = withUnsafeMutableBytes(of: &storage) { address.write(to: $0.baseAddress!) }
            let bound = withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
            }
            guard bound == 0 else { throw .bindFailed(errno: errno) }
            var actual = sockaddr_storage()
            var actualLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
            _ = withUnsafeMutablePointer(to: &actual) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &actualLength) }
            }
            guard let local = withUnsafeBytes(of: actual, { SocketAddress(sockaddr: $0.baseAddress!, length: Int(actualLength)) })
            else { throw .bindFailed(errno: EAFNOSUPPORT) }
            self.localAddress = local
        } catch {
            Glibc.close(fd)
            throw error
        }
        fileDescriptor = fd
        isIPv6 = ipv6
        self.receiveBufferBytes = Self.getInt(fd, SOL_SOCKET, SO_RCVBUF)
        self.sendBufferBytes = Self.getInt(fd, SOL_SOCKET, SO_SNDBUF)
    }

    deinit { Glibc.close(fileDescriptor) }

    /// A port that no socket holds on `host` (`port` itself, or an ephemeral one for 0), for
    /// a group of SO_REUSEPORT sockets to bind next. Binding with SO_REUSEPORT alone is not
    /// enough: such a socket joins any group of the same user on that port instead of failing
    /// with EADDRINUSE, and for port 0 Linux's UDP autobind may even pick a port that another
    /// process's group holds (udp_lib_lport_inuse lets reuseport sockets share), after which
    /// the two processes split each other's datagrams. So a group first binds one socket
    /// without the option, which fails if the port is taken by anyone, and closes it.
    /// What is left is the microseconds between that close and the group's first bind.
    public static func exclusivePort(host: String, port: UInt16) throws(UDPSocketError) -> UInt16 {
        // 0-byte buffers: the kernel's minimum, nothing is ever read from this socket.
        let probe = try UDPSocket(host: host, port: port, receiveBufferBytes: 0, sendBufferBytes: 0, reusePort: false)
        return probe.localAddress.port
    }

    private static func setInt(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: Int32) throws(UDPSocketError) {
        var value = value
        guard setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size)) == 0 else { throw .optionFailed(errno: errno) }
    }

    private static func setBuffer(_ fd: Int32, force: Int32, plain: Int32, bytes: Int) {
        let value = Int32(clamping: bytes)
        if (try? setInt(fd, SOL_SOCKET, force, value)) == nil { _ = try? setInt(fd, SOL_SOCKET, plain, value) }
    }

    private static func getInt(_ fd: Int32, _ level: Int32, _ name: Int32) -> Int {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        return getsockopt(fd, level, name, &value, &length) == 0 ? Int(value) : 0
    }
}
