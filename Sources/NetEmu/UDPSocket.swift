#if canImport(Glibc)
import Glibc
#endif

/// Thin helpers over BSD UDP sockets (IPv4; the relay is loopback-only).
enum UDPSocket {
    /// Parses a dotted IPv4 address and port into a `sockaddr_in`.
    static func address(_ host: String, _ port: UInt16) throws(NetEmuError) -> sockaddr_in {
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &addr.sin_addr) == 1 else { throw .badAddress(host) }
        return addr
    }

    /// A non-blocking UDP socket bound to `address` (port 0 = any free port).
    static func bound(to address: sockaddr_in) throws(NetEmuError) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw .socket("socket", errno) }
        var addr = address
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else {
            let e = errno
            close(fd)
            throw .socket("bind", e)
        }
        // 4 MiB: the default 208 KiB holds only ~270 small datagrams (each costs ~768 bytes of
        // kernel memory); tests burst thousands. The kernel caps it at net.core.rmem_max.
        var size: Int32 = 4 << 20
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
        return fd
    }

    /// The local port a socket is bound to.
    static func localPort(_ fd: Int32) -> UInt16 {
        var addr = sockaddr_in()
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let rc = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        return rc == 0 ? UInt16(bigEndian: addr.sin_port) : 0
    }

    /// sendto(2); returns false on failure.
    static func send(_ fd: Int32, _ bytes: [UInt8], to address: sockaddr_in) -> Bool {
        var addr = address
        let n = bytes.withUnsafeBytes { buf in
            withUnsafePointer(to: &addr) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, buf.baseAddress, buf.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        return n == bytes.count
    }

    /// recvfrom(2) into `buffer`; nil when nothing is waiting (EAGAIN) or on error.
    static func receive(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> (count: Int, from: sockaddr_in)? {
        var addr = sockaddr_in()
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let n = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                recvfrom(fd, buffer.baseAddress, buffer.count, 0, $0, &len)
            }
        }
        guard n >= 0 else { return nil }
        return (n, addr)
    }
}

/// CLOCK_MONOTONIC in nanoseconds.
func monotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}
