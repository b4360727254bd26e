import Glibc
import ICE

/// Datagrams other workers received for this worker's sessions (`SFUWorkerPool`), waiting
/// for its loop thread.
///
/// Two preallocated buffers of `capacity` slots: producers (other loop threads) copy into
/// the filling one under a mutex; the owner swaps the buffers under the mutex and processes
/// the full one without it, so a producer holds the lock for one ~1 KB memcpy. Producers
/// wake the owner through a pipe once per receive batch (`signal`), not per datagram.
/// Nothing is allocated per datagram.
final class MediaLoopInbox {
    /// 512 datagrams: half of what one loop wakeup may receive (16 batches × 64), so a
    /// burst redirected by one peer loop fits while the owner drains every iteration; 2 ×
    /// 512 × 1,500 B ≈ 1.5 MB per worker.
    static let defaultCapacity = 512

    final class Buffer {
        let capacity: Int
        let slotSize: Int
        let slots: UnsafeMutableRawPointer
        let lengths: UnsafeMutablePointer<Int>
        let sources: UnsafeMutablePointer<SocketAddress>
        var count = 0

        init(capacity: Int, slotSize: Int) {
            self.capacity = capacity
            self.slotSize = slotSize
            slots = .allocate(byteCount: capacity * slotSize, alignment: 16)
            lengths = .allocate(capacity: capacity)
            lengths.initialize(repeating: 0, count: capacity)
            sources = .allocate(capacity: capacity)
            sources.initialize(repeating: SocketAddress(ipv4: 0, port: 0), count: capacity)
        }

        deinit {
            slots.deallocate()
            lengths.deallocate()
            sources.deallocate()
        }

        /// Datagram `index`: a mutable view (the owner decrypts SRTP in place) and its source.
        @inline(__always)
        func datagram(at index: Int) -> (bytes: UnsafeMutableRawBufferPointer, source: SocketAddress) {
            (UnsafeMutableRawBufferPointer(start: slots + index * slotSize, count: lengths[index]), sources[index])
        }
    }

    private let mutex = MediaLoopMutex()
    private var filling: Buffer
    /// Owner thread only between `take` calls.
    private var draining: Buffer
    let wakeRead: Int32
    private let wakeWrite: Int32

    init(capacity: Int = MediaLoopInbox.defaultCapacity, slotSize: Int) throws(UDPSocketError) {
        filling = Buffer(capacity: max(1, capacity), slotSize: max(1, slotSize))
        draining = Buffer(capacity: max(1, capacity), slotSize: max(1, slotSize))
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw .socketFailed(errno: errno) }
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        wakeRead = fds[0]
        wakeWrite = fds[1]
    }

    deinit {
        close(wakeRead)
        close(wakeWrite)
    }

    /// Copies one datagram in (any thread). False when full or larger than a slot: dropped.
    func post(_ bytes: UnsafeRawBufferPointer, from source: SocketAddress) -> Bool {
        mutex.withLock {
            let buffer = filling
            guard buffer.count < buffer.capacity, bytes.count <= buffer.slotSize else { return false }
            let index = buffer.count
            if let base = bytes.baseAddress, bytes.count > 0 {
                (buffer.slots + index * buffer.slotSize).copyMemory(from: base, byteCount: bytes.count)
            }
            buffer.lengths[index] = bytes.count
            buffer.sources[index] = source
            buffer.count = index + 1
            return true
        }
    }

    /// Wakes the owner (after a batch of `post`s).
    func signal() {
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)  // EAGAIN when the pipe is full: already awake
    }

    /// Owner thread: clears the wakeups and returns the datagrams posted so far (valid until
    /// the next `take`).
    func take() -> Buffer {
        var drain: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
        while withUnsafeMutableBytes(of: &drain, { read(wakeRead, $0.baseAddress, $0.count) }) > 0 {}
        draining.count = 0
        return mutex.withLock {
            let full = filling
            filling = draining
            draining = full
            return full
        }
    }
}
