/// A UDP transport address (IPv4 or IPv6 + port) as a plain value: two 64-bit words of
/// address, the port and the family. Hashing and comparing touch no heap memory, so it can
/// key the per-packet 5-tuple → session table (the local half of the 5-tuple is the one
/// shared socket, so the remote address and port identify the peer).
public struct SocketAddress: Hashable, Sendable, CustomStringConvertible {
    /// Address family.
    public enum Family: UInt8, Sendable {
        case ipv4 = 4
        case ipv6 = 6
    }

    public let family: Family
    /// IPv6: bytes 0–7 of the address, big-endian. IPv4: 0.
    public let high: UInt64
    /// IPv6: bytes 8–15, big-endian. IPv4: the address in the low 32 bits (192.0.2.1 = 0xC0000201).
    public let low: UInt64
    public let port: UInt16

    /// IPv4 from a host-order integer (192.0.2.1 = 0xC0000201).
    public init(ipv4: UInt32, port: UInt16) {
        family = .ipv4
        high = 0
        low = UInt64(ipv4)
        self.port = port
    }

    /// IPv6 from its two big-endian halves.
    public init(ipv6High: UInt64, low: UInt64, port: UInt16) {
        family = .ipv6
        high = ipv6High
        self.low = low
        self.port = port
    }

    /// IPv6 from 16 network-order bytes; nil unless exactly 16.
    public init?(ipv6 bytes: [UInt8], port: UInt16) {
        guard bytes.count == 16 else { return nil }
        var high: UInt64 = 0
        var low: UInt64 = 0
        for index in 0..<8 { high = high << 8 | UInt64(bytes[index]) }
        for index in 8..<16 { low = low << 8 | UInt64(bytes[index]) }
        self.init(ipv6High: high, low: low, port: port)
    }

    /// The IPv4 address (host order), or nil for IPv6.
    public var ipv4: UInt32? { family == .ipv4 ? UInt32(truncatingIfNeeded: low) : nil }

    /// The 16 IPv6 bytes, or nil for IPv4.
    public var ipv6Bytes: [UInt8]? {
        guard family == .ipv6 else { return nil }
        return (0..<8).map { UInt8(truncatingIfNeeded: high >> (56 - 8 * UInt64($0))) }
            + (0..<8).map { UInt8(truncatingIfNeeded: low >> (56 - 8 * UInt64($0))) }
    }

    /// "192.0.2.1:3478" or "[2001:db8::1]:3478".
    public var description: String { family == .ipv4 ? "\(host):\(port)" : "[\(host)]:\(port)" }
}
