import CSoup
import Foundation
import IO
import SplitMix

/// One epoll(7) set for the ``LeanWebSocket``s of one event loop (a ``PairLoops`` thread).
///
/// The epoll fd is the only thing GLib polls for these sockets (one `g_unix_fd_source` on
/// the loop's context, as the server's `ReadyDispatcher` does with the same `sb_epoll_*`
/// helpers of the CSoup shim), so a wake-up costs O(ready sockets), not O(sockets), and no
/// GIO stream, GObject signal or GSource per socket is involved.
///
/// Writes are batched: a frame is appended to its socket's output buffer and the socket is
/// marked dirty; the dirty sockets are written once each at the end of the pass that made
/// them dirty (all frames a socket got in one pass in one `send(2)`). A frame queued outside
/// a pass (a timer, an `execute` block) asks for a pass through the source's ready time 0,
/// which the loop runs on its next iteration without blocking.
///
/// Loop thread only: create it inside `loop.execute` (it binds to the calling thread's
/// default `GMainContext`, which ``EventLoop`` pushes on its thread).
final class LeanSocketLoop {
    let loop: EventLoop
    private let epfd: Int32
    private var source: UnsafeMutablePointer<GSource>?
    private var sockets: [Int32: LeanWebSocket] = [:]
    private var dirty: [LeanWebSocket] = []
    private var inPass = false
    private var passRequested = false
    /// Masking keys and handshake nonces. RFC 6455 §5.3 asks for keys an attacker cannot
    /// predict, against intermediaries confused by hostile page scripts; this client sends
    /// only its own frames to its own server over loopback, so a generator seeded once from
    /// the system's entropy (`getrandom`) serves, at no syscall per frame.
    var random: SplitMix64
    /// 64 KiB, shared by the loop's sockets: one `recv(2)` reads up to this much; what a
    /// socket cannot decode yet (a partial frame) is copied into its own buffer.
    var readBuffer = [UInt8](repeating: 0, count: 1 << 16)
    private var eventBuffer = [UInt32](repeating: 0, count: 256)
    private var dataBuffer = [UInt64](repeating: 0, count: 256)

    /// What the loop did so far (the tests check batching with these).
    struct Stats: Equatable {
        /// Passes run (epoll readiness or a queued frame).
        var passes = 0
        /// `send(2)` calls.
        var sends = 0
        /// Frames (and handshake requests) queued.
        var frames = 0
        /// `recv(2)` calls that returned data.
        var reads = 0
    }
    var stats = Stats()

    /// Nil when called off a loop thread (no thread-default context) or without an epoll fd.
    init?(loop: EventLoop) {
        guard loop.isOnLoopThread, let context = g_main_context_get_thread_default() else { return nil }
        let fd = sb_epoll_create()
        guard fd >= 0 else { return nil }
        self.loop = loop
        epfd = fd
        var system = SystemRandomNumberGenerator()
        random = SplitMix64(seed: system.next())
        let s = g_unix_fd_source_new(epfd, G_IO_IN)!
        typealias FDFunc = @convention(c) (gint, GIOCondition, gpointer?) -> gboolean
        let fn: FDFunc = { _, _, data in
            Unmanaged<LeanSocketLoop>.fromOpaque(data!).takeUnretainedValue().pass()
            return sb_g_source_continue_value()
        }
        // Unretained: shutdown() (or deinit) destroys the source before the loop goes away.
        g_source_set_callback(s, unsafeBitCast(fn, to: GSourceFunc.self), Unmanaged.passUnretained(self).toOpaque(), nil)
        // Can recurse: GLib 2.74's g_main_dispatch otherwise "blocks" the source around every
        // dispatch, removing and re-adding its poll fd, and each of those signals the
        // context's wakeup eventfd (a write(2), then an empty extra iteration per wake-up;
        // docs/benchmarks.md "Benchmark CPU per setup"). Nothing in pass() iterates the
        // context, so the recursion this permits never happens.
        g_source_set_can_recurse(s, 1)
        g_source_attach(s, context)
        source = s
    }

    deinit { shutdown() }

    /// Closes every socket (no close handshake) and detaches from the loop. Idempotent.
    func shutdown() {
        for socket in Array(sockets.values) { socket.abort() }
        if let s = source {
            g_source_destroy(s)
            g_source_unref(s)
            source = nil
            close(epfd)
        }
    }

    var openSockets: Int { sockets.count }

    // MARK: Registration (epoll_ctl: 0 add, 1 modify, 2 delete; level-triggered)

    static let readable: UInt32 = 0x001  // EPOLLIN
    static let writable: UInt32 = 0x004  // EPOLLOUT

    func add(_ socket: LeanWebSocket, fd: Int32, events: UInt32) -> Bool {
        guard sb_epoll_ctl(epfd, 0, fd, events, UInt64(UInt32(bitPattern: fd))) == 0 else { return false }
        sockets[fd] = socket
        return true
    }

    func modify(fd: Int32, events: UInt32) {
        _ = sb_epoll_ctl(epfd, 1, fd, events, UInt64(UInt32(bitPattern: fd)))
    }

    /// Before the fd is closed, so a reused number cannot reach the old socket.
    func remove(fd: Int32) {
        _ = sb_epoll_ctl(epfd, 2, fd, 0, 0)
        sockets[fd] = nil
    }

    // MARK: Batching

    /// `socket` has output: it is written at the end of this pass, or of the next one.
    func markDirty(_ socket: LeanWebSocket) {
        stats.frames += 1
        guard !socket.queuedForFlush else { return }
        socket.queuedForFlush = true
        dirty.append(socket)
        if !inPass && !passRequested, let s = source {
            passRequested = true
            g_source_set_ready_time(s, 0)
        }
    }

    func countSend() { stats.sends += 1 }
    func countRead() { stats.reads += 1 }

    /// One pass: every ready socket reads (and its callbacks queue frames), then every
    /// dirty socket writes once.
    private func pass() {
        stats.passes += 1
        if passRequested, let s = source {
            // A ready time stays set after dispatch (GLib); clear it or the source spins.
            g_source_set_ready_time(s, -1)
            passRequested = false
        }
        inPass = true
        let n = Int(eventBuffer.withUnsafeMutableBufferPointer { ev in
            dataBuffer.withUnsafeMutableBufferPointer { data in
                sb_epoll_poll(epfd, ev.baseAddress, data.baseAddress, gint(ev.count))
            }
        })
        for i in 0 ..< max(0, n) {
            let fd = Int32(bitPattern: UInt32(truncatingIfNeeded: dataBuffer[i]))
            guard let socket = sockets[fd] else { continue }
            socket.ready(events: eventBuffer[i])
        }
        flush()
        inPass = false
    }

    /// Writes every dirty socket; a write that fails may close a socket whose callbacks
    /// queue frames on others, so repeat until none is left.
    private func flush() {
        while !dirty.isEmpty {
            let batch = dirty
            dirty.removeAll(keepingCapacity: true)
            for socket in batch {
                socket.queuedForFlush = false
                socket.flush()
            }
        }
    }
}
