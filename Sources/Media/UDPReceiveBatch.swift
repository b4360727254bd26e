import CSocket
import Glibc
import ICE

/// Preallocated buffers for one recvmmsg(2) call: `capacity` slots of `slotSize` bytes, their
/// iovecs, source-address storage and mmsghdrs, allocated once and reused for every batch.
/// Reading a batch allocates nothing: `datagram(at:)` returns views into the slots, valid
/// until the next `receive`.
///
/// Kernel receive timestamps: on a socket with `enableKernelTimestamps(on:)`, each slot's
/// preallocated control buffer receives the datagram's SCM_TIMESTAMPNS and `arrivalMicros(at:)`
/// returns it on the monotonic clock. That is when the datagram reached the socket, not when
/// the loop thread got round to it: transport-cc feedback stamped with it does not read a
/// scheduling stall of the loop (on a loaded host, tens of ms) as queuing delay on the path,
/// which the sender's delay-based estimator would answer by backing off.
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
    /// One control buffer per slot for the timestamp message (`controlSize` bytes each).
    private let controls: UnsafeMutableRawPointer
    /// 64 bytes: CMSG_SPACE(timespec) is 32 on LP64; room for one more small message so an
    /// unexpected one does not truncate (MSG_CTRUNC) the timestamp.
    private let controlSize = max(64, Int(sb_timestampns_space()))
    /// CLOCK_MONOTONIC − CLOCK_REALTIME (ns) and CLOCK_MONOTONIC (µs), sampled right after the
    /// last recvmmsg: kernel timestamps are CLOCK_REALTIME, the loop runs on CLOCK_MONOTONIC.
    private var realToMonotonicNanos: Int64 = 0
    private var receivedAtMicros: Int64 = 0

    public init(capacity: Int = UDPReceiveBatch.defaultCapacity, slotSize: Int = UDPReceiveBatch.defaultSlotSize) {
        vector = UDPMessageVector(capacity: capacity, slotSize: slotSize, initialLength: slotSize)
        self.capacity = vector.capacity
        self.slotSize = vector.slotSize
        controls = .allocate(byteCount: vector.capacity * controlSize, alignment: 16)
        controls.initializeMemory(as: UInt8.self, repeating: 0, count: vector.capacity * controlSize)
    }

    deinit { controls.deallocate() }

    /// Asks the kernel to timestamp every datagram `socket` receives (SO_TIMESTAMPNS,
    /// socket(7)). False when the kernel refuses; `arrivalMicros(at:)` then returns nil.
    @discardableResult
    public static func enableKernelTimestamps(on socket: UDPSocket) -> Bool {
        sb_enable_timestampns(socket.fileDescriptor) == 0
    }

    /// One nonblocking recvmmsg. Returns the number of datagrams (0 when the queue is
    /// empty), or -errno on a socket error.
    public func receive(from socket: UDPSocket) -> Int {
        for index in 0..<capacity {
            // The kernel overwrites these per message; reset the in/out fields.
            headers[index].msg_hdr.msg_namelen = socklen_t(MemoryLayout<sockaddr_storage>.size)
            headers[index].msg_hdr.msg_flags = 0
            headers[index].msg_len = 0
            headers[index].msg_hdr.msg_control = controls + index * controlSize
            headers[index].msg_hdr.msg_controllen = controlSize
        }
        let received = sb_recvmmsg(socket.fileDescriptor, headers, UInt32(capacity), Int32(MSG_DONTWAIT))
        if received < 0 {
            count = 0
            let error = errno
            return error == EAGAIN || error == EWOULDBLOCK || error == EINTR ? 0 : -Int(error)
        }
        count = Int(received)
        if count > 0 {
            var monotonic = timespec(), real = timespec()
            clock_gettime(CLOCK_MONOTONIC, &monotonic)
            clock_gettime(CLOCK_REALTIME, &real)
            receivedAtMicros = Int64(monotonic.tv_sec) * 1_000_000 + Int64(monotonic.tv_nsec) / 1_000
            realToMonotonicNanos = (Int64(monotonic.tv_sec) - Int64(real.tv_sec)) * 1_000_000_000
                + (Int64(monotonic.tv_nsec) - Int64(real.tv_nsec))
        }
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

    /// When datagram `index` of the last batch reached the socket (kernel timestamp), µs on
    /// CLOCK_MONOTONIC (the clock of the loop's `now`); nil when the socket does not timestamp.
    /// Never later than the end of the `receive` call that returned it, so a wall-clock step
    /// between the kernel's stamp and our clock sample cannot put an arrival in the future.
    @inline(__always)
    public func arrivalMicros(at index: Int) -> Int64? {
        let stamp = sb_timestampns(&headers[index].msg_hdr)
        guard stamp > 0 else { return nil }
        return min((Int64(stamp) + realToMonotonicNanos) / 1_000, receivedAtMicros)
    }
}
