import CSoup
import Foundation
import IO

/// Installs a ``PollPacer`` as the poll function (`g_main_context_set_poll_func`) of the
/// calling event loop's `GMainContext`, so a loop whose traffic nobody waits for (idle
/// devices) iterates a few times per second instead of once per arriving frame.
///
/// The pacer lives in thread-local storage: a GLib poll function gets no user data, and
/// each event loop polls on its own thread. Everything here runs on that loop's thread.
enum PacedPoll {
    /// Call on the loop thread (inside `loop.execute`). `spacingMicros` 0 removes the pacing
    /// (GLib's `g_poll` again, through the same function); it can be changed at any time.
    static func install(spacingMicros: Int64) {
        guard let context = g_main_context_get_thread_default() else { return }
        state().pacer.spacingMicros = spacingMicros
        g_main_context_set_poll_func(context, pacedPoll)
    }

    /// Blocking polls this thread made so far (the benchmark's own check that pacing works).
    static var polls: Int { state().polls }

    final class State {
        var pacer = PollPacer()
        var polls = 0
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { pointer in
            guard let pointer else { return }
            Unmanaged<State>.fromOpaque(pointer).release()
        }
        return key
    }()

    static func state() -> State {
        if let pointer = pthread_getspecific(key) {
            return Unmanaged<State>.fromOpaque(pointer).takeUnretainedValue()
        }
        let state = State()
        pthread_setspecific(key, Unmanaged.passRetained(state).toOpaque())
        return state
    }

    private static let pacedPoll: GPollFunc = { fds, count, timeout in
        let state = PacedPoll.state()
        let plan = state.pacer.plan(now: EventLoop.monotonicMicroseconds(), timeoutMs: timeout)
        if plan.sleepMicros > 0 {
            var request = timespec(tv_sec: Int(plan.sleepMicros / 1_000_000), tv_nsec: Int(plan.sleepMicros % 1_000_000) * 1000)
            var remaining = timespec()
            while nanosleep(&request, &remaining) != 0, errno == EINTR { request = remaining }
        }
        let ready = g_poll(fds, count, plan.pollTimeoutMs)
        if timeout != 0 { state.polls += 1 }
        state.pacer.returned(now: EventLoop.monotonicMicroseconds())
        return ready
    }
}
