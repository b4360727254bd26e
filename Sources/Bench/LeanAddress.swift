import Foundation

/// An IPv4 or IPv6 socket address for ``LeanWebSocket``'s connect(2).
struct LeanAddress {
    let family: Int32
    private var storage = sockaddr_storage()
    private let length: socklen_t

    /// A numeric address as is; a name through getaddrinfo(3) (blocking, once per connect:
    /// the benchmark's URL is a loopback address, so this is the rare path).
    static func resolve(host: String, port: UInt16) -> LeanAddress? {
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, host, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
            return LeanAddress(family: AF_INET, bytes: &v4, length: socklen_t(MemoryLayout<sockaddr_in>.size))
        }
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET6, host, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = port.bigEndian
            return LeanAddress(family: AF_INET6, bytes: &v6, length: socklen_t(MemoryLayout<sockaddr_in6>.size))
        }
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else { return nil }
        defer { freeaddrinfo(list) }
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let e = entry {
            if let address = e.pointee.ai_addr, e.pointee.ai_family == AF_INET || e.pointee.ai_family == AF_INET6 {
                return LeanAddress(family: e.pointee.ai_family, bytes: address, length: e.pointee.ai_addrlen)
            }
            entry = e.pointee.ai_next
        }
        return nil
    }

    private init<T>(family: Int32, bytes: UnsafePointer<T>, length: socklen_t) {
        self.family = family
        self.length = length
        withUnsafeMutableBytes(of: &storage) { target in
            target.copyMemory(from: UnsafeRawBufferPointer(start: bytes, count: min(Int(length), target.count)))
        }
    }

    func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        var copy = storage
        return withUnsafePointer(to: &copy) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
        }
    }
}
