#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Conversions between `SocketAddress` and the C socket structures (`sockaddr_in`,
/// `sockaddr_in6`, `sockaddr_storage`) used by recvmmsg/sendmmsg and libnice.
extension SocketAddress {
    /// Parses a numeric host ("127.0.0.1", "::1") with `inet_pton`; nil if not numeric.
    public init?(host: String, port: UInt16) {
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 {
            self.init(ipv4: UInt32(bigEndian: v4.s_addr), port: port)
            return
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, host, &v6) == 1 {
            let bytes = withUnsafeBytes(of: v6) { Array($0) }
            self.init(ipv6: bytes, port: port)
            return
        }
        return nil
    }

    /// Reads a `sockaddr_in` / `sockaddr_in6` (e.g. `msg_name` after recvmmsg); nil for
    /// other families or a too-short length. IPv4-mapped IPv6 (::ffff:a.b.c.d, from a
    /// dual-stack socket) is folded to IPv4 so one peer has one key.
    public init?(sockaddr pointer: UnsafeRawPointer, length: Int) {
        guard length >= MemoryLayout<sa_family_t>.size else { return nil }
        let family = Int32(pointer.loadUnaligned(as: sa_family_t.self))
        if family == AF_INET, length >= MemoryLayout<sockaddr_in>.size {
            let v4 = pointer.loadUnaligned(as: sockaddr_in.self)
            self.init(ipv4: UInt32(bigEndian: v4.sin_addr.s_addr), port: UInt16(bigEndian: v4.sin_port))
        } else if family == AF_INET6, length >= MemoryLayout<sockaddr_in6>.size {
            let v6 = pointer.loadUnaligned(as: sockaddr_in6.self)
            let port = UInt16(bigEndian: v6.sin6_port)
            let (high, low) = withUnsafeBytes(of: v6.sin6_addr) {
                (UInt64(bigEndian: $0.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
                 UInt64(bigEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
            }
            if high == 0, low >> 32 == 0xFFFF {
                self.init(ipv4: UInt32(truncatingIfNeeded: low), port: port)
            } else {
                self.init(ipv6High: high, low: low, port: port)
            }
        } else {
            return nil
        }
    }

    /// Writes this address into `storage` as `sockaddr_in` or `sockaddr_in6` and returns the
    /// length to pass to the kernel. With `mapToIPv6`, IPv4 is written as ::ffff:a.b.c.d (for
    /// sending from a dual-stack AF_INET6 socket).
    @discardableResult
    public func write(to storage: UnsafeMutableRawPointer, mapToIPv6: Bool = false) -> socklen_t {
        if family == .ipv4 && !mapToIPv6 {
            var v4 = sockaddr_in()
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
            v4.sin_addr.s_addr = UInt32(truncatingIfNeeded: low).bigEndian
            storage.storeBytes(of: v4, as: sockaddr_in.self)
            return socklen_t(MemoryLayout<sockaddr_in>.size)
        }
        var v6 = sockaddr_in6()
        v6.sin6_family = sa_family_t(AF_INET6)
        v6.sin6_port = port.bigEndian
        let (high, low) = family == .ipv4 ? (UInt64(0), UInt64(0xFFFF) << 32 | self.low) : (self.high, self.low)
        withUnsafeMutableBytes(of: &v6.sin6_addr) {
            $0.storeBytes(of: high.bigEndian, toByteOffset: 0, as: UInt64.self)
            $0.storeBytes(of: low.bigEndian, toByteOffset: 8, as: UInt64.self)
        }
        storage.storeBytes(of: v6, as: sockaddr_in6.self)
        return socklen_t(MemoryLayout<sockaddr_in6>.size)
    }

    /// This address as a `sockaddr_storage` and its length.
    public var sockaddrStorage: (sockaddr_storage, socklen_t) {
        var storage = sockaddr_storage()
        let length = withUnsafeMutableBytes(of: &storage) { write(to: $0.baseAddress!) }
        return (storage, length)
    }

    /// Numeric host text ("127.0.0.1", "2001:db8::1") via `inet_ntop`.
    public var host: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        if family == .ipv4 {
            var v4 = in_addr(s_addr: UInt32(truncatingIfNeeded: low).bigEndian)
            _ = inet_ntop(AF_INET, &v4, &buffer, socklen_t(buffer.count))
        } else {
            var v6 = in6_addr()
            withUnsafeMutableBytes(of: &v6) {
                $0.storeBytes(of: high.bigEndian, toByteOffset: 0, as: UInt64.self)
                $0.storeBytes(of: low.bigEndian, toByteOffset: 8, as: UInt64.self)
            }
            _ = inet_ntop(AF_INET6, &v6, &buffer, socklen_t(buffer.count))
        }
        let end = buffer.firstIndex(of: 0) ?? buffer.count
        return String(decoding: buffer[..<end].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
