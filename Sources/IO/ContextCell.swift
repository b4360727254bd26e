import CSoup
import CWebSocketStream

/// A private `GMainContext` holding the libsoup sources (socket input/output, keepalive and
/// close timeouts, GTask completions) of up to ``ReadyDispatcher/connectionsPerCell``
/// WebSocket connections, driven by hand from the loop's ``ReadyDispatcher`` instead of by
/// the loop's main context.
///
/// `SoupWebsocketConnection` attaches every source it creates to
/// `g_main_context_get_thread_default()` at that moment (soup-websocket-connection.c:
/// start_input_source, start_output_source, keepalive, close_io_after_timeout), so every
/// libsoup call on a member connection runs inside ``with(_:)``, and so does the dispatch.
/// One round (``run()``) is prepare → query → check (with the revents epoll reported, no
/// poll syscall) → dispatch, then ``refresh()`` re-reads the fds and timeout the context
/// wants (`g_main_context_query`) and hands them to the dispatcher.
/// See https://docs.gtk.org/glib/main-loop.html ("Customizing the main loop iteration").
///
/// A server-side connection reads and writes through a `CWebSocketStream` stream
/// (``adopt(_:)``), whose sources have no poll record, so attaching or destroying one never
/// signals the context's wake-up fd: for those the cell adds to the context's own fds the
/// socket events the stream's sources wait for (`sb_ws_stream_wanted_events`) and hands
/// each stream what epoll reported before the check (`sb_ws_stream_set_ready`)
/// (docs/benchmarks.md, "A stream of our own under libsoup's WebSocket").
///
/// Loop thread only; the loop thread owns (`g_main_context_acquire`) the context for the
/// cell's whole life.
final class ContextCell {
    let id: UInt64
    let context: OpaquePointer
    weak var dispatcher: ReadyDispatcher?
    /// Connections assigned to this cell.
    var members = 0
    /// fds and epoll events registered for this cell, ordered by fd (``FDEvents/sort()``):
    /// what the last ``refresh()`` that changed them handed to the dispatcher, minus an fd
    /// number another cell has taken over since.
    var registered = FDEvents()
    /// The fds of the refresh under way (reused, so a refresh allocates nothing).
    private var wanted = FDEvents()
    /// fds and events epoll reported since the last round (``markPending(_:_:)``).
    private var pending = FDEvents()
    /// Monotonic µs of the context's next timeout, -1 for none.
    var deadline: Int64 = -1
    var queuedImmediate = false
    /// Round stamp of the dispatcher that last queued this cell (dedup within a round).
    var stamp: UInt64 = 0
    private(set) var isRunning = false
    /// Queued for a refresh at the end of a coalescing scope (``ReadyDispatcher/deferRefresh(_:)``).
    var refreshQueued = false
    /// The context's own GWakeup eventfd: never ready, because nothing attaches sources to
    /// this context from another thread. Not registered with epoll.
    private var wakeupFD: Int32 = -1
    private var fds = [GPollFD](repeating: GPollFD(), count: 8)
    private var retired = false
    /// The members' streams (``adopt(_:)``), one reference each: their sources have no
    /// poll record, so the cell asks each stream what to poll and tells it what epoll saw.
    /// A closed stream is dropped at the next ``refresh()``.
    private var streams: [UnsafeMutablePointer<GIOStream>] = []

    init(id: UInt64, dispatcher: ReadyDispatcher) {
        self.id = id
        self.dispatcher = dispatcher
        context = g_main_context_new()
        g_main_context_acquire(context)
        // An empty context's only poll record is its wakeup fd.
        var priority: gint = 0
        _ = g_main_context_prepare(context, &priority)
        var timeout: gint = -1
        if query(priority: gint.max, timeout: &timeout) >= 1 { wakeupFD = fds[0].fd }
    }

    /// Releases the context (and any source still attached to it). Idempotent.
    func retire() {
        guard !retired else { return }
        retired = true
        for stream in streams { g_object_unref(UnsafeMutableRawPointer(stream)) }
        streams.removeAll()
        g_main_context_release(context)
        g_main_context_unref(context)
    }

    deinit { retire() }

    /// Runs `body` with this cell's context as the thread-default context, so that libsoup
    /// sources created inside land in it.
    func with<T>(_ body: () throws -> T) rethrows -> T {
        g_main_context_push_thread_default(context)
        defer { g_main_context_pop_thread_default(context) }
        return try body()
    }

    private func query(priority: gint, timeout: inout gint) -> Int {
        while true {
            let capacity = fds.count
            let n = fds.withUnsafeMutableBufferPointer { buf in
                Int(g_main_context_query(context, priority, &timeout, buf.baseAddress, gint(capacity)))
            }
            if n <= capacity { return n }
            fds = [GPollFD](repeating: GPollFD(), count: n * 2)
        }
    }

    /// Polls `stream` (a `sb_ws_stream_new` stream of a member connection) through this
    /// cell from now on; takes a reference until the stream is closed.
    func adopt(_ stream: UnsafeMutablePointer<GIOStream>) {
        g_object_ref(UnsafeMutableRawPointer(stream))
        streams.append(stream)
    }

    /// One dispatch round with the revents epoll reported, then ``refresh()``.
    func run() {
        guard !isRunning, !retired else { return }
        isRunning = true
        g_main_context_push_thread_default(context)
        var priority: gint = 0
        _ = g_main_context_prepare(context, &priority)
        var timeout: gint = 0
        let n = query(priority: priority, timeout: &timeout)
        // POLLIN|POLLPRI|POLLOUT|POLLERR|POLLHUP|POLLNVAL: GLib's GIOCondition values are the
        // poll(2) bits, which are also the EPOLL* bits on Linux.
        let always: UInt32 = 0x08 | 0x10 | 0x20
        for i in 0 ..< n {
            let wanted = UInt32(fds[i].events) | always
            let got = pending.events(of: fds[i].fd) ?? 0
            fds[i].revents = gushort(truncatingIfNeeded: got & wanted)
        }
        for stream in streams {
            sb_ws_stream_set_ready(stream, pending.events(of: sb_ws_stream_fd(stream)) ?? 0)
        }
        pending.removeAll()
        _ = fds.withUnsafeMutableBufferPointer { buf in
            g_main_context_check(context, priority, buf.baseAddress, gint(n))
        }
        g_main_context_dispatch(context)
        for stream in streams { sb_ws_stream_set_ready(stream, 0) }
        g_main_context_pop_thread_default(context)
        isRunning = false
        refresh()
    }

    /// ``refresh()`` now, or once at the end of the dispatcher's coalescing scope if one is
    /// open (``EventLoop/coalescingWebSocketWrites(_:)``).
    func refreshSoon() {
        if dispatcher?.deferRefresh(self) == true { return }
        refresh()
    }

    /// Reads the fds and timeout the context wants now and updates the dispatcher (epoll
    /// registration, timer, immediate queue). Skipped while the cell is dispatching: the
    /// round refreshes when it ends (a nested prepare would drop the dispatch list).
    ///
    /// Most rounds end with the fds and events they started with (libsoup replaces its input
    /// source around every read, on the same stream for the same events): when the wanted set
    /// equals ``registered`` only the timeout is rescheduled, with no diff and no `epoll_ctl`.
    func refresh() {
        guard !isRunning, !retired, let dispatcher else { return }
        var priority: gint = 0
        let ready = g_main_context_prepare(context, &priority) != 0
        var timeout: gint = -1
        // Every priority: a ready high-priority source must not hide other sockets' fds.
        let n = query(priority: gint.max, timeout: &timeout)
        let timeoutMilliseconds = ready ? 0 : Int64(timeout)
        wanted.removeAll()
        for i in 0 ..< n where fds[i].fd != wakeupFD && fds[i].events != 0 {
            // Several poll records may watch one fd (a socket's input and output sources).
            wanted.insert(fds[i].fd, UInt32(fds[i].events) & 0x07)
        }
        var i = 0
        while i < streams.count {
            let stream = streams[i]
            let fd = sb_ws_stream_fd(stream)
            guard fd >= 0 else {
                streams.swapAt(i, streams.count - 1)
                streams.removeLast()
                g_object_unref(UnsafeMutableRawPointer(stream))
                continue
            }
            let events = sb_ws_stream_wanted_events(stream)
            if events != 0 { wanted.insert(fd, UInt32(events)) }
            i += 1
        }
        wanted.sort()
        if wanted == registered {
            dispatcher.schedule(self, timeoutMilliseconds: timeoutMilliseconds)
        } else {
            dispatcher.update(self, wanted: wanted, timeoutMilliseconds: timeoutMilliseconds)
        }
    }

    /// epoll reported `events` on `fd` for the next round.
    func markPending(_ fd: Int32, _ events: UInt32) {
        pending.insert(fd, events)
    }
}
