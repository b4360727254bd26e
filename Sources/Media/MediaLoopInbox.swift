import Glibc
import ICE

/// Datagrams other workers received for this worker's sessions (`SFUWorkerPool`), waiting
/// for its loop thread.
///
/// Two preallocated buffers, each a byte arena with datagrams packed back to back (audio
/// packets are ~100–200 B, so packing holds ~8× more than MTU-sized slots would) plus
/// per-datagram offset, length and source. Producers (other loop threads) copy into the
/// filling buffer under a mutex; the owner swaps the buffers under the mutex and processes
/// the full one without it, so a producer holds the lock for one memcpy. Producers wake the
/// owner through a pipe once per receive batch (`signal`), not per datagram. Nothing is
/// allocated per datagram.
final class MediaLoopInbox {
    /// 1.5 MB per buffer: one full loop wakeup (16 batches × 64) of MTU-sized datagrams, so
    /// a peer worker can pass on everything it received in one wakeup while the owner is
    /// busy with its own socket. The benchmark dropped handoffs with 512 MTU-sized slots.
    static let defaultArenaBytes = 16 * 64 * 1_500
    /// 8,192 datagrams per buffer: the arena's worth of ~190 B audio packets.
    static let defaultMaxDatagrams = 8_192

    final class Buffer {
        let capacity: Int
        let arenaBytes: Int
        let arena: UnsafeMutableRawPointer
        let offsets: UnsafeMutablePointer<Int>
        let lengths: UnsafeMutablePointer<Int>
        let sources: UnsafeMutablePointer<SocketAddress>
        /// Kernel receive time (µs, monotonic) on the receiving worker's socket; `Int64.min`: none.
        let arrivals: UnsafeMutablePointer<Int64>
        var count = 0
        var used = 0

        init(capacity: Int, arenaBytes: Int) {
            self.capacity = capacity
            self.arenaBytes = arenaBytes
            arena = .allocate(byteCount: arenaBytes, alignment: 16)
            offsets = .allocate(capacity: capacity)
            offsets.initialize(repeating: 0, count: capacity)
            lengths = .allocate(capacity: capacity)
            lengths.initialize(repeating: 0, count: capacity)
            sources = .allocate(capacity: capacity)
            sources.initialize(repeating: SocketAddress(ipv4: 0, port: 0), count: capacity)
            arrivals = .allocate(capacity: capacity)
            arrivals.initialize(repeating: .min, count: capacity)
        }

        deinit {
            arena.deallocate()
            offsets.deallocate()
            lengths.deallocate()
            sources.deallocate()
            arrivals.deallocate()
        }

        /// Datagram `index`: a mutable view (the owner decrypts SRTP in place), its source and
        /// its kernel arrival time when the receiving socket gave one.
        @inline(__always)
        func datagram(at index: Int) -> (bytes: UnsafeMutableRawBufferPointer, source: SocketAddress, arrival: Int64?) {
            (UnsafeMutableRawBufferPointer(start: arena + offsets[index], count: lengths[index]), sources[index],
             arrivals[index] == .min ? nil : arrivals[index])
        }
    }

    private let mutex = MediaLoopMutex()
    private var filling: Buffer
    /// Owner thread only between `take` calls.
    private var draining: Buffer
    let wakeRead: Int32
    private let wakeWrite: Int32

    init(maxDatagrams: Int = MediaLoopInbox.defaultMaxDatagrams, arenaBytes: Int = MediaLoopInbox.defaultArenaBytes) throws(UDPSocketError) {
        filling = Buffer(capacity: max(1, maxDatagrams), arenaBytes: max(1, arenaBytes))
        draining = Buffer(capacity: max(1, maxDatagrams), arenaBytes: max(1, arenaBytes))
        (wakeRead, wakeWrite) = try WakePipe.make()
    }

    deinit {
        close(wakeRead)
        close(wakeWrite)
    }

    /// Copies one datagram in (any thread). False when the buffer is full: dropped.
    func post(_ bytes: UnsafeRawBufferPointer, from source: SocketAddress, arrival: Int64? = nil) -> Bool {
        mutex.withLock {
            let buffer = filling
            // 16-byte aligned starts keep the owner's in-place SRTP on aligned memory.
            let offset = (buffer.used + 15) & ~15
            guard buffer.count < buffer.capacity, offset + bytes.count <= buffer.arenaBytes else { return false }
            let index = buffer.count
            if let base = bytes.baseAddress, bytes.count > 0 { (buffer.arena + offset).copyMemory(from: base, byteCount: bytes.count) }
            buffer.offsets[index] = offset
            buffer.lengths[index] = bytes.count
            buffer.sources[index] = source
            buffer.arrivals[index] = arrival ?? .min
            buffer.count = index + 1
            buffer.used = offset + bytes.count
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
        draining.used = 0
        return mutex.withLock {
            let full = filling
            filling = draining
            draining = full
            return full
        }
    }
}
