import CSoup
import Foundation

/// A GLib `GMainContext` + `GMainLoop` that owns all I/O of one thread.
///
/// Every libsoup object created through this module (servers, sessions, WebSocket
/// connections) is bound to its loop's context, and every callback this module delivers runs
/// on the loop thread. `execute` and `schedule` are safe from any thread.
/// See https://docs.gtk.org/glib/main-loop.html
public final class EventLoop {
    public let name: String
    let context: OpaquePointer
    let mainLoop: OpaquePointer

    private let lock = NSLock()
    private var pending: [() -> Void] = []
    private var wakeupScheduled = false
    /// True while ``iterate()`` drives the context: `execute` blocks then run right after
    /// the current GLib iteration instead of through an idle source.
    private var iterating = false
    private var quitRequested = false
    /// True while the loop thread blocks in poll(2) (set and cleared by ``poll(_:_:_:)``
    /// under `lock`): only then does another thread's `execute` need to wake it.
    private var sleeping = false
    /// A wake-up was sent during the current sleep (one is enough).
    private var wakeupSent = false
    private var wakeupCount = 0
    /// The context's poll function is ours (``poll(_:_:_:)``): only then is `sleeping`
    /// maintained and may `execute` skip the wake-up of a busy loop. Someone else's poll
    /// function (the benchmark's idle fleet installs a pacing one on its loops) turns that
    /// off; re-read on the loop thread before every iteration, so a poll function must be
    /// installed on the loop thread (in an `execute` block or a callback).
    private var pollHooked = false
    private var thread: Thread?
    private let exited = DispatchSemaphore(value: 0)
    /// Lazily created on the loop thread; shared by HTTPClient and WebSocketClient.
    var sharedSession: UnsafeMutablePointer<SoupSession>?
    /// Lazily created on the loop thread: epoll over the WebSocket contexts (ReadyDispatcher).
    var dispatcherStorage: ReadyDispatcher?

    public init(name: String) {
        self.name = name
        context = g_main_context_new()
        mainLoop = g_main_loop_new(context, 0)
    }

    deinit {
        dispatcherStorage?.shutdown()
        dispatcherStorage = nil
        if let session = sharedSession {
            let s = session
            // The session must be released on a thread that can own the context.
            if g_main_context_acquire(context) != 0 {
                g_object_unref(UnsafeMutableRawPointer(s))
                g_main_context_release(context)
            }
        }
        g_main_loop_unref(mainLoop)
        g_main_context_unref(context)
    }

    /// Spawns the loop thread; returns once the loop is running.
    public func start() {
        let started = DispatchSemaphore(value: 0)
        let t = Thread { [self] in
            Thread.current.name = name
            // The kernel's thread name (what top, perf and /proc show), set by the thread
            // itself: Foundation's `Thread.current` may be a fresh object that never passed
            // the name on, and a new thread otherwise keeps its creator's name. The kernel
            // truncates to 15 bytes.
            _ = sb_set_thread_name(name)
            g_main_context_push_thread_default(context)
            execute { started.signal() }
            iterate()
            g_main_context_pop_thread_default(context)
            exited.signal()
        }
        t.name = name
        // 1 MiB: the loop runs only short callbacks; the default 512 KiB is enough but
        // JSON handlers in the hub can recurse into Foundation.
        t.stackSize = 1 << 20
        lock.lock(); thread = t; lock.unlock()
        t.start()
        started.wait()
    }

    /// Runs the loop on the calling thread until `stop()` (for the executable's main thread).
    public func run() {
        g_main_context_push_thread_default(context)
        iterate()
        g_main_context_pop_thread_default(context)
    }

    /// The loop: one GLib iteration (prepare, poll, check, dispatch — each over every source
    /// of the context, docs/benchmarks.md "Signaling"), then the `execute` blocks queued
    /// meanwhile, until `stop()`.
    ///
    /// Instead of `g_main_loop_run` with an idle source per `execute` batch: a block queued
    /// while a socket callback runs (the server queues every received frame for the hub's
    /// group commit) ran one whole iteration later, so every wake-up by a frame cost two
    /// iterations, and with thousands of idle WebSockets each iteration costs O(sockets).
    /// Blocks queued by the loop thread now run as soon as the iteration that queued them
    /// ends; other threads wake the blocking poll with `g_main_context_wakeup` (no source).
    /// The iteration does not block while blocks are pending, so I/O and blocks alternate.
    private func iterate() {
        // Owned for the whole run (as g_main_loop_run does), so code between iterations
        // sees `isOnLoopThread`; g_main_context_iteration acquires recursively.
        g_main_context_acquire(context)
        let previous = pthread_getspecific(pollingLoopKey)
        pthread_setspecific(pollingLoopKey, Unmanaged.passUnretained(self).toOpaque())
        g_main_context_set_poll_func(context, eventLoopPoll)
        lock.lock(); iterating = true; lock.unlock()
        while true {
            // Before `pending` is read: a block queued after this look either sees the new
            // `pollHooked` (and wakes the loop itself) or is seen by the read below.
            let hooked = isOurPollFunction
            lock.lock()
            pollHooked = hooked
            let quit = quitRequested
            let idle = pending.isEmpty
            lock.unlock()
            if quit { break }
            g_main_context_iteration(context, idle ? 1 : 0)
            drainPending()
        }
        lock.lock(); iterating = false; quitRequested = false; pollHooked = false; lock.unlock()
        if isOurPollFunction { g_main_context_set_poll_func(context, nil) }
        pthread_setspecific(pollingLoopKey, previous)
        drainPending()
        g_main_context_release(context)
    }

    /// The context's poll function while ``iterate()`` runs (`g_main_context_set_poll_func`,
    /// called by GLib on the loop thread with the context unlocked): a blocking poll first
    /// checks, under `lock`, that no `execute` block is pending (else it polls without
    /// waiting) and marks the loop as sleeping, so that `execute` from another thread writes
    /// the context's wake-up eventfd (`g_main_context_wakeup`) only when the loop really
    /// waits, once per sleep.
    ///
    /// Before, every `execute` that found no wake-up scheduled since the last drain wrote the
    /// eventfd, also while the loop was busy: a write(2) on the sending thread, and a poll
    /// that returned at once plus a read(2) of the eventfd and a whole GLib iteration on the
    /// loop (docs/benchmarks.md, "Batched sends to shards"). The check and the mark share the
    /// lock with `execute`'s append, so no block can slip in between unnoticed.
    private var isOurPollFunction: Bool {
        guard let current = g_main_context_get_poll_func(context) else { return false }
        return unsafeBitCast(current, to: UnsafeRawPointer.self) == unsafeBitCast(eventLoopPoll, to: UnsafeRawPointer.self)
    }

    fileprivate func poll(_ fds: UnsafeMutablePointer<GPollFD>?, _ count: guint, _ timeout: gint) -> gint {
        guard timeout != 0 else { return g_poll(fds, count, 0) }
        lock.lock()
        let mayBlock = pending.isEmpty && !quitRequested
        if mayBlock { sleeping = true; wakeupSent = false }
        lock.unlock()
        guard mayBlock else { return g_poll(fds, count, 0) }
        let result = g_poll(fds, count, timeout)
        lock.lock(); sleeping = false; lock.unlock()
        return result
    }

    /// Quits the loop. From another thread it also waits for a `start()`ed thread to exit.
    public func stop() {
        lock.lock(); quitRequested = true; lock.unlock()
        g_main_loop_quit(mainLoop)
        g_main_context_wakeup(context)
        lock.lock(); let t = thread; thread = nil; lock.unlock()
        if t != nil && !isOnLoopThread {
            exited.wait()
        }
    }

    /// True while the calling thread owns the context (inside `run()` or the loop thread).
    public var isOnLoopThread: Bool { g_main_context_is_owner(context) != 0 }

    /// Wake-ups `execute` sent to the sleeping loop so far (tests and diagnostics).
    var wakeupsSent: Int { lock.lock(); defer { lock.unlock() }; return wakeupCount }
    /// True while the loop thread waits in poll (tests).
    var isSleeping: Bool { lock.lock(); defer { lock.unlock() }; return sleeping }

    /// Runs `block` on the loop thread, in FIFO order with other `execute` blocks. Never runs
    /// it synchronously, even when called on the loop thread.
    public func execute(_ block: @escaping () -> Void) {
        lock.lock()
        pending.append(block)
        let iterated = iterating
        if iterated && pollHooked {
            // `iterate()` drains after the current iteration; the blocking poll must return
            // first, and only a sleeping loop needs the wake-up (see `poll`). The loop
            // thread itself is never sleeping here.
            let wake = sleeping && !wakeupSent
            if wake { wakeupSent = true; wakeupCount += 1 }
            lock.unlock()
            if wake { g_main_context_wakeup(context) }
            return
        }
        if iterated {
            // Someone else's poll function: wake once per drain, as before.
            let wake = !wakeupScheduled
            wakeupScheduled = true
            lock.unlock()
            if wake && !isOnLoopThread { g_main_context_wakeup(context) }
            return
        }
        let needWakeup = !wakeupScheduled
        wakeupScheduled = true
        lock.unlock()
        guard needWakeup else { return }
        let source = g_idle_source_new()!
        g_source_set_priority(source, G_PRIORITY_DEFAULT)
        let me = Unmanaged.passRetained(self).toOpaque()
        g_source_set_callback(source, { data in
            let loop = Unmanaged<EventLoop>.fromOpaque(data!).takeUnretainedValue()
            loop.drainPending()
            return sb_g_source_remove_value()
        }, me, { data in
            Unmanaged<EventLoop>.fromOpaque(data!).release()
        })
        g_source_attach(source, context)
        g_source_unref(source)
    }

    private func drainPending() {
        lock.lock()
        let blocks = pending
        pending.removeAll()
        wakeupScheduled = false
        lock.unlock()
        for block in blocks { block() }
    }

    /// Runs `block` once after `ms` milliseconds on the loop thread (`g_timeout_source_new`).
    @discardableResult
    public func schedule(afterMilliseconds ms: Int64, _ block: @escaping () -> Void) -> TimerHandle {
        let interval = guint(clamping: max(0, ms))
        let source = g_timeout_source_new(interval)!
        let box = Unmanaged.passRetained(BlockBox(block)).toOpaque()
        g_source_set_callback(source, { data in
            Unmanaged<BlockBox>.fromOpaque(data!).takeUnretainedValue().block()
            return sb_g_source_remove_value()
        }, box, { data in
            Unmanaged<BlockBox>.fromOpaque(data!).release()
        })
        g_source_attach(source, context)
        return TimerHandle(source: source)
    }

    /// Runs `body` with the context owned by the calling thread and pushed as thread-default,
    /// so that libsoup objects created inside bind to this loop. Inline when already on the
    /// loop thread or when nobody runs the loop yet; otherwise hops to the loop and waits.
    func sync<T>(_ body: () throws -> T) rethrows -> T {
        if isOnLoopThread { return try body() }
        if g_main_context_acquire(context) != 0 {
            g_main_context_push_thread_default(context)
            defer {
                g_main_context_pop_thread_default(context)
                g_main_context_release(context)
            }
            return try body()
        }
        return try withoutActuallyEscaping(body) { escapable in
            // The box drops the closure before signalling, so it never outlives this call
            // (withoutActuallyEscaping traps if it does).
            let box = SyncBox<T>()
            box.body = escapable
            let done = DispatchSemaphore(value: 0)
            execute {
                if let body = box.body { box.result = Result { try body() } }
                box.body = nil
                done.signal()
            }
            done.wait()
            return try box.result!.get()
        }
    }

    /// Microseconds from `g_get_monotonic_time`, in milliseconds.
    public static func monotonicMilliseconds() -> Int64 { Int64(g_get_monotonic_time()) / 1000 }
    /// Microseconds since the Unix epoch from `g_get_real_time`, in milliseconds.
    public static func wallClockMilliseconds() -> Int64 { Int64(g_get_real_time()) / 1000 }
    public static func monotonicMicroseconds() -> Int64 { Int64(g_get_monotonic_time()) }
}

/// The ``EventLoop`` whose ``EventLoop/iterate()`` runs on this thread, for the context's
/// poll function (GLib passes it no user data).
private let pollingLoopKey: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key, nil)
    return key
}()

private let eventLoopPoll: GPollFunc = { fds, count, timeout in
    guard let raw = pthread_getspecific(pollingLoopKey) else { return g_poll(fds, count, timeout) }
    return Unmanaged<EventLoop>.fromOpaque(raw).takeUnretainedValue().poll(fds, count, timeout)
}

final class SyncBox<T> {
    var body: (() throws -> T)?
    var result: Result<T, Error>?
}

final class BlockBox {
    let block: () -> Void
    init(_ block: @escaping () -> Void) { self.block = block }
}

/// A pending `EventLoop.schedule` timer. `cancel()` is thread-safe and idempotent.
public final class TimerHandle {
    private let source: UnsafeMutablePointer<GSource>

    init(source: UnsafeMutablePointer<GSource>) { self.source = source }
    deinit { g_source_unref(source) }

    public func cancel() { g_source_destroy(source) }
    /// False once the timer fired or was cancelled.
    public var isPending: Bool { g_source_is_destroyed(source) == 0 }
}
