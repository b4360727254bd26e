import CSocket
import Glibc
import ICE

/// Outgoing datagrams queued for one sendmmsg(2) call. `enqueue` copies the bytes into a
/// preallocated slot (a ~1 KB memcpy is far cheaper than the syscall and frees callers from
/// keeping their buffers alive); nothing is allocated per datagram.
public final class UDPSendBatch {
    public let capacity: Int
    public let slotSize: Int
    /// Datagrams queued.
    public private(set) var count = 0
    private let vector: UDPMessageVector
    private var slots: UnsafeMutableRawPointer { vector.slots }
    private var iovecs: UnsafeMutablePointer<iovec> { vector.iovecs }
    private var headers: UnsafeMutablePointer<sb_mmsghdr> { vector.headers }
    private var names: UnsafeMutablePointer<sockaddr_storage> { vector.names }

    public init(capacity: Int = UDPReceiveBatch.defaultCapacity, slotSize: Int = UDPReceiveBatch.defaultSlotSize) {
        vector = UDPMessageVector(capacity: capacity, slotSize: slotSize, initialLength: 0)
        self.capacity = vector.capacity
        self.slotSize = vector.slotSize
    }

    public var isFull: Bool { count == capacity }

    /// Result of `enqueue`.
    public enum EnqueueResult: Equatable {
        case queued
        /// Larger than a slot: not sent.
        case oversized
        /// IPv6 destination on an IPv4 socket.
        case unreachable
        /// No free slot: flush first.
        case full
    }

    /// Copies `bytes` into the next slot, addressed to `destination`.
    @discardableResult
    public func enqueue(_ bytes: UnsafeRawBufferPointer, to destination: SocketAddress, on socket: UDPSocket) -> EnqueueResult {
        guard count < capacity else { return .full }
        guard bytes.count <= slotSize else { return .oversized }
        guard socket.isIPv6 || destination.family == .ipv4 else { return .unreachable }
        let slot = slots + count * slotSize
        if let base = bytes.baseAddress, bytes.count > 0 { slot.copyMemory(from: base, byteCount: bytes.count) }
        iovecs[count].iov_len = bytes.count
        headers[count].msg_hdr.msg_namelen = destination.write(to: UnsafeMutableRawPointer(names + count), mapToIPv6: socket.isIPv6)
        count += 1
        return .queued
    }

    /// Sends everything queued with as few sendmmsg calls as possible. A datagram the kernel
    /// refuses (e.g. ICMP-reported unreachable) is skipped; when the socket buffer is full
    /// (EAGAIN) the rest is dropped rather than blocking the loop: late media is useless and a
    /// blocked loop delays every peer. Returns (sent, dropped).
    @discardableResult
    public func flush(on socket: UDPSocket) -> (sent: Int, dropped: Int) {
        var offset = 0
        var sent = 0
        var dropped = 0
        while offset < count {
            let result = sb_sendmmsg(socket.fileDescriptor, headers + offset, UInt32(count - offset), 0)
            if result > 0 {
                offset += Int(result)
                sent += Int(result)
                continue
            }
            let error = errno
            if error == EINTR { continue }
            if error == EAGAIN || error == EWOULDBLOCK {
                dropped += count - offset
                break
            }
            dropped += 1
            offset += 1
        }
        count = 0
        return (sent, dropped)
    }
}
