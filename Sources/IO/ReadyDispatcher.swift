import CSoup
#if canImport(Glibc)
import Glibc
#endif

/// Dispatches WebSocket connections in O(ready) instead of O(connections) per loop
/// iteration (docs/benchmarks.md, "O(ready) WebSocket loop").
///
/// GLib's main loop prepares, polls and checks every attached source on every iteration, and
/// each libsoup WebSocket keeps a socket source and a keepalive timeout attached, so with
/// thousands of idle sockets most of the loop's CPU went to bookkeeping. Here each
/// connection's sources live in a ``ContextCell`` (a private `GMainContext`); one epoll
/// instance watches the cells' sockets, and a min-heap holds their next timeouts. The epoll
/// fd and the earliest deadline are one `GSource` on the loop's main context
/// (`g_unix_fd_source_new` + `g_source_set_ready_time`), so the rest of the loop (timers,
/// `execute` blocks, the HTTP listener) is unchanged. When it fires, only the cells with a
/// ready socket, a due timeout or a pending idle source run one round.
///
/// Level-triggered epoll: GLib sources are level-triggered (poll semantics) and libsoup may
/// leave bytes in the kernel buffer after one read round; with edge triggering such a socket
/// would never be reported again; so may a `CWebSocketStream` stream, which answers "would
/// block" without a recv after a short one and counts on the socket being reported again if
/// bytes arrived in between. The registration mirrors exactly what the cell's context and
/// its streams ask for after each round (POLLOUT only while libsoup waits to write).
///
/// Loop thread only.
final class ReadyDispatcher {
    /// 4 connections per `GMainContext`: every context owns a GWakeup eventfd, and with one
    /// context per connection a process needs two fds per WebSocket (this host's hard
    /// RLIMIT_NOFILE of 20,000 would cap it below 10,000 connections); 4 per context costs
    /// 1.25 fds per WebSocket while a ready socket's round still prepares and checks at most
    /// 4 connections' sources (about 8). Tests set 1 to check the one-context design.
    static var connectionsPerCell = 4

    struct Stats: Equatable {
        /// Cell rounds run (prepare/check/dispatch of one context).
        var rounds: Int = 0
        /// epoll_ctl calls made.
        var epollControls: Int = 0
        /// Times the dispatcher's GSource fired.
        var wakeups: Int = 0
        /// Registrations that asked for POLLOUT (libsoup waiting to write a blocked frame).
        var writeWaits: Int = 0
        /// fds currently registered with epoll.
        var registeredFDs: Int = 0
        /// Live cells (contexts).
        var cells: Int = 0
        /// Connections currently assigned to cells.
        var members: Int = 0
        /// Re-registrations after a libsoup call that waited for the end of a coalescing
        /// scope (each cell is then refreshed once per scope).
        var deferredRefreshes: Int = 0
        /// Cell re-registrations run (``ContextCell/refresh()``).
        var refreshes: Int = 0
        /// ``WebSocketSendBatch`` parts run on this loop.
        var sendBatches: Int = 0
        /// Connections corked by those parts (successful `TCP_CORK` on).
        var batchCorks: Int = 0
    }

    private let epfd: Int32
    private var source: UnsafeMutablePointer<GSource>?
    private var cells: [UInt64: ContextCell] = [:]
    /// Cells with a free slot.
    private var vacancies: [UInt64: ContextCell] = [:]
    private var fdOwner: [Int32: ContextCell] = [:]
    private var heap = DeadlineHeap()
    private var immediate: [ContextCell] = []
    private var nextID: UInt64 = 0
    private var round: UInt64 = 0
    private var counters = Stats()
    /// Depth of ``EventLoop/coalescingWebSocketWrites(_:)`` scopes on this loop.
    private var coalescingDepth = 0
    /// Cells whose re-registration waits for the outermost coalescing scope to end.
    private var deferredRefreshes: [ContextCell] = []
    private var eventBuffer = [UInt32](repeating: 0, count: 256)
    private var dataBuffer = [UInt64](repeating: 0, count: 256)

    init(context: OpaquePointer) {
        epfd = sb_epoll_create()
        let s = g_unix_fd_source_new(epfd, G_IO_IN)!
        typealias FDFunc = @convention(c) (gint, GIOCondition, gpointer?) -> gboolean
        let fn: FDFunc = { _, _, data in
            Unmanaged<ReadyDispatcher>.fromOpaque(data!).takeUnretainedValue().fire()
            return sb_g_source_continue_value()
        }
        // Unretained: the source is destroyed in deinit, before the dispatcher goes away.
        g_source_set_callback(s, unsafeBitCast(fn, to: GSourceFunc.self), Unmanaged.passUnretained(self).toOpaque(), nil)
        g_source_attach(s, context)
        source = s
    }

    deinit { shutdown() }

    /// Detaches the GSource and closes the epoll fd. Idempotent.
    func shutdown() {
        if let s = source {
            g_source_destroy(s)
            g_source_unref(s)
            source = nil
            close(epfd)
        }
        for cell in cells.values { cell.retire() }
        cells.removeAll()
        vacancies.removeAll()
        fdOwner.removeAll()
    }

    var stats: Stats {
        var s = counters
        s.registeredFDs = fdOwner.count
        s.cells = cells.count
        s.members = cells.values.reduce(0) { $0 + $1.members }
        return s
    }

    // MARK: - Membership

    /// A cell with a free slot for a new connection (a new one when all are full).
    func join() -> ContextCell {
        let cell: ContextCell
        if let vacant = vacancies.first?.value {
            cell = vacant
        } else {
            nextID += 1
            cell = ContextCell(id: nextID, dispatcher: self)
            cells[cell.id] = cell
        }
        cell.members += 1
        if cell.members >= Self.connectionsPerCell { vacancies[cell.id] = nil } else { vacancies[cell.id] = cell }
        return cell
    }

    /// A connection left `cell` (its libsoup object is finalized). The last one retires it.
    func leave(_ cell: ContextCell) {
        guard cells[cell.id] === cell else { return }
        cell.members -= 1
        guard cell.members <= 0 else {
            vacancies[cell.id] = cell
            cell.refresh()
            return
        }
        cells[cell.id] = nil
        vacancies[cell.id] = nil
        update(cell, wanted: FDEvents(), timeoutMilliseconds: -1)
        cell.retire()
    }

    // MARK: - Coalesced re-registration

    /// Opens a scope in which ``ContextCell/refreshSoon()`` queues the cell instead of
    /// re-reading its context at once (see ``EventLoop/coalescingWebSocketWrites(_:)``).
    func beginCoalescing() { coalescingDepth += 1 }

    /// Closes a scope; the outermost one refreshes every queued cell once.
    func endCoalescing() {
        coalescingDepth -= 1
        guard coalescingDepth == 0, !deferredRefreshes.isEmpty else { return }
        let cells = deferredRefreshes
        deferredRefreshes.removeAll(keepingCapacity: true)
        for cell in cells {
            cell.refreshQueued = false
            cell.refresh()
        }
    }

    /// A ``WebSocketSendBatch`` part ran on this loop, corking `corked` connections.
    func recordSendBatch(corked: Int) {
        counters.sendBatches += 1
        counters.batchCorks += corked
    }

    /// Queues `cell` for the end of the current scope; false outside a scope.
    func deferRefresh(_ cell: ContextCell) -> Bool {
        guard coalescingDepth > 0 else { return false }
        if !cell.refreshQueued {
            cell.refreshQueued = true
            deferredRefreshes.append(cell)
        }
        counters.deferredRefreshes += 1
        return true
    }

    // MARK: - Registration

    /// Makes the epoll registration of `cell` equal `wanted` and schedules its next round
    /// after `timeoutMilliseconds` (0: as soon as the loop comes back, -1: only on I/O).
    func update(_ cell: ContextCell, wanted: FDEvents, timeoutMilliseconds: Int64) {
        for (fd, _) in cell.registered.pairs where wanted.events(of: fd) == nil {
            // A closed fd left epoll by itself; its number may belong to another cell now.
            if fdOwner[fd] === cell {
                control(2, fd, 0)
                fdOwner[fd] = nil
            }
        }
        for (fd, events) in wanted.pairs {
            let owner = fdOwner[fd]
            if owner === cell, cell.registered.events(of: fd) == events { continue }
            if events & 0x04 != 0 { counters.writeWaits += 1 }
            if let other = owner, other !== cell { other.registered.remove(fd) }
            if owner == nil {
                if control(0, fd, events) == EEXIST { control(1, fd, events) }
            } else if control(1, fd, events) == ENOENT {
                control(0, fd, events)
            }
            fdOwner[fd] = cell
        }
        cell.registered = wanted
        schedule(cell, timeoutMilliseconds: timeoutMilliseconds)
    }

    /// Schedules the next round of `cell` after `timeoutMilliseconds` (0: as soon as the loop
    /// comes back, -1: only on I/O); its epoll registration stays as it is
    /// (``ContextCell/refresh()`` found it unchanged).
    func schedule(_ cell: ContextCell, timeoutMilliseconds: Int64) {
        counters.refreshes += 1
        if timeoutMilliseconds == 0 {
            cell.deadline = -1
            if !cell.queuedImmediate {
                cell.queuedImmediate = true
                immediate.append(cell)
            }
        } else if timeoutMilliseconds > 0 {
            let deadline = Int64(g_get_monotonic_time()) + timeoutMilliseconds * 1000
            if deadline != cell.deadline {
                cell.deadline = deadline
                heap.push(deadline: deadline, key: cell.id)
                compactHeapIfNeeded()
            }
        } else {
            cell.deadline = -1
        }
        rearm()
    }

    @discardableResult
    private func control(_ op: Int32, _ fd: Int32, _ events: UInt32) -> Int32 {
        counters.epollControls += 1
        return sb_epoll_ctl(epfd, op, fd, events, UInt64(UInt32(bitPattern: fd)))
    }

    /// Stale heap entries (re-armed deadlines) are dropped lazily; rebuild when they outgrow
    /// the live ones 4:1 so a long-lived loop's heap stays O(cells).
    private func compactHeapIfNeeded() {
        guard heap.count > 4 * cells.count + 64 else { return }
        heap.rebuild(cells.values.filter { $0.deadline >= 0 }.map { (key: $0.id, deadline: $0.deadline) })
    }

    private func rearm() {
        guard let s = source else { return }
        let readyTime: Int64
        if !immediate.isEmpty {
            readyTime = 0
        } else if let earliest = heap.earliest {
            readyTime = earliest
        } else {
            readyTime = -1
        }
        g_source_set_ready_time(s, gint64(readyTime))
    }

    // MARK: - Dispatch

    /// The GSource fired: epoll readiness, due timeouts and pending idle sources select the
    /// cells that run a round; idle cells are not touched.
    private func fire() {
        counters.wakeups += 1
        round &+= 1
        var ready: [ContextCell] = []
        func select(_ cell: ContextCell) {
            guard cell.stamp != round else { return }
            cell.stamp = round
            ready.append(cell)
        }
        let n = Int(eventBuffer.withUnsafeMutableBufferPointer { ev in
            dataBuffer.withUnsafeMutableBufferPointer { data in
                sb_epoll_poll(epfd, ev.baseAddress, data.baseAddress, gint(ev.count))
            }
        })
        for i in 0 ..< max(0, n) {
            let fd = Int32(bitPattern: UInt32(truncatingIfNeeded: dataBuffer[i]))
            guard let cell = fdOwner[fd] else {
                control(2, fd, 0)
                continue
            }
            cell.markPending(fd, eventBuffer[i])
            select(cell)
        }
        let now = Int64(g_get_monotonic_time())
        while let due = heap.popDue(now: now) {
            guard let cell = cells[due.key], cell.deadline == due.deadline else { continue }
            cell.deadline = -1
            select(cell)
        }
        let queued = immediate
        immediate.removeAll(keepingCapacity: true)
        for cell in queued {
            cell.queuedImmediate = false
            select(cell)
        }
        for cell in ready where cells[cell.id] === cell {
            counters.rounds += 1
            cell.run()
        }
        rearm()
    }
}

extension EventLoop {
    /// The loop's WebSocket dispatcher, created on first use. Loop thread only.
    func readyDispatcher() -> ReadyDispatcher {
        if let d = dispatcherStorage { return d }
        let d = ReadyDispatcher(context: context)
        dispatcherStorage = d
        return d
    }

    /// Runs `body` (on the loop thread) so that the WebSocket sends and closes it makes
    /// re-register each connection context with the loop's epoll once, when the outermost
    /// scope ends, instead of after every call.
    ///
    /// Every libsoup call on a server-side connection is followed by a re-read of its
    /// context (`g_main_context_prepare` + `query`, and the epoll/timer bookkeeping), in case
    /// the call made libsoup wait for POLLOUT or add a source; that re-read cost as much as
    /// 6 % of the signaling server's CPU when the hub sends ~25 frames per call setup
    /// (docs/benchmarks.md, "Hub CPU per setup"). Inside the scope nothing is polled, so
    /// registering once at its end loses nothing. Scopes nest; off the loop thread, or on a
    /// loop without WebSocket connections, `body` just runs.
    public func coalescingWebSocketWrites<T>(_ body: () throws -> T) rethrows -> T {
        guard isOnLoopThread, let dispatcher = dispatcherStorage else { return try body() }
        dispatcher.beginCoalescing()
        defer { dispatcher.endCoalescing() }
        return try body()
    }

    /// Counters of the loop's WebSocket dispatcher (tests and diagnostics): rounds run,
    /// epoll_ctl calls, registered fds, contexts and connections. Any thread.
    public var webSocketDispatchStats: WebSocketDispatchStats {
        let s = sync { dispatcherStorage?.stats ?? ReadyDispatcher.Stats() }
        return WebSocketDispatchStats(rounds: s.rounds, epollControls: s.epollControls, wakeups: s.wakeups, writeWaits: s.writeWaits,
                                      registeredFDs: s.registeredFDs, contexts: s.cells, connections: s.members,
                                      refreshes: s.refreshes, deferredRefreshes: s.deferredRefreshes,
                                      sendBatches: s.sendBatches, batchCorks: s.batchCorks)
    }
}

/// Counters of an ``EventLoop``'s O(ready) WebSocket dispatcher.
public struct WebSocketDispatchStats: Equatable {
    /// Rounds (prepare/check/dispatch of one connection context) run so far.
    public let rounds: Int
    /// epoll_ctl calls so far.
    public let epollControls: Int
    /// Times the dispatcher's source on the loop's main context fired.
    public let wakeups: Int
    /// Registrations that added POLLOUT (a write would have blocked).
    public let writeWaits: Int
    /// Socket fds registered with epoll now.
    public let registeredFDs: Int
    /// Connection contexts alive now.
    public let contexts: Int
    /// Connections assigned to contexts now.
    public let connections: Int
    /// Re-registrations of a connection context so far (a context re-read after a round or
    /// after a libsoup call outside a coalescing scope, or once per scope inside one).
    public let refreshes: Int
    /// libsoup calls inside ``EventLoop/coalescingWebSocketWrites(_:)`` whose context
    /// re-registration was deferred to the end of the scope.
    public let deferredRefreshes: Int
    /// ``WebSocketSendBatch`` parts run on this loop so far (one per batch that had frames
    /// or closes for its connections).
    public let sendBatches: Int
    /// Connections those parts corked (`TCP_CORK` set on this loop's thread).
    public let batchCorks: Int
}

extension WebSocketConnection {
    /// Connections per GMainContext on the O(ready) path (default 4, see
    /// ReadyDispatcher.connectionsPerCell). Set before connections are accepted; tests only.
    public static var connectionsPerContext: Int {
        get { ReadyDispatcher.connectionsPerCell }
        set { ReadyDispatcher.connectionsPerCell = max(1, newValue) }
    }
}
