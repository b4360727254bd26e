import CSocket
import Glibc
import ICE

/// Preallocated buffers for one recvmmsg(2) call: `capacity` slots of `slotSize` bytes, their
/// iovecs, source-address storage and mmsghdrs, allocated once and reused for every batch.
/// Reading a batch allocates nothing: `datagram(at:)` returns views into the slots, valid
/// until the next `receive`.
public final class UDPReceiveBatch {
    /// 64 datagrams per syscall: amortises the ~1–2 µs syscall entry over many packets while
    /// keeping a batch (64 × 1500 B ≈ 96 KiB) inside L2.
    public static let defaultCapacity = 64
    /// 1500 B: the Ethernet MTU. WebRTC keeps RTP under ~1200 B (libwebrtc's default max
    /// packet size); anything larger is not media we forward and is counted as oversized.
    public static let defaultSlotSize = 1500

    public let capacity: Int
    public let slotSize: Int
    /// Datagrams filled by the last `receive`.
    public private(set) var count = 0
    private let vector: UDPMessageVector
    private var slots: UnsafeMutableRawPointer { vector.slots }
    private var iovecs: UnsafeMutablePointer<iovec> { vector.iovecs }
    private var headers: UnsafeMutablePointer<sb_mmsghdr> { vector.headers }
    private var names: UnsafeMutablePointer<sockaddr_storage> { vector.names }

    public init(capacity: Int = UDPReceiveBatch.defaultCapacity, slotSize: Int = UDPReceiveBatch.defaultSlotSize) {
        vector = UDPMessageVector(capacity: capacity, slotSize: slotSize, initialLength: slotSize)
        self.capacity = vector.capacity
        self.slotSize = vector.slotSize
    }

    /// One nonblocking recvmmsg. Returns the number of datagrams (0 when the queue is
    /// empty), or -errno on a socket error.
    public func receive(from socket: UDPSocket) -> Int {
        for index in 0..<capacity {
            // The kernel overwrites these per message; reset the in/out fields.
            headers[index].msg_hdr.msg_namelen = socklen_t(MemoryLayout<sockaddr_storage>.size)
            headers[index].msg_hdr.msg_flags = 0
            headers[index].msg_len = 0
        }
        let received = sb_recvmmsg(socket.fileDescriptor, headers, UInt32(capacity), Int32(MSG_DONTWAIT))
        if received < 0 {
            count = 0
            let error = errno
            return error == EAGAIN || error == EWOULDBLOCK || error == EINTR ? 0 : -Int(error)
        }
        count = Int(received)
        return count
    }

    /// Datagram `index` of the last batch: its bytes (a view into the slot), its source, and
    /// whether it was larger than the slot (MSG_TRUNC: the kernel cut it).
    @inline(__always)
    public func datagram(at index: Int) -> (bytes: UnsafeRawBufferPointer, source: SocketAddress?, truncated: Bool) {
        let header = headers[index]
        let length = min(Int(header.msg_len), slotSize)
        let source = SocketAddress(sockaddr: UnsafeRawPointer(names + index), length: Int(header.msg_hdr.msg_namelen))
        let truncated = header.msg_hdr.msg_flags & Int32(MSG_TRUNC) != 0
        return (UnsafeRawBufferPointer(start: slots + index * slotSize, count: length), source, truncated)
    }
}
