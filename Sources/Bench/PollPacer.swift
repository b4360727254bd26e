/// When a paced event loop may next return from its poll: at most one blocking poll per
/// ``spacingMicros``, so sockets that became ready meanwhile are handled by one GLib
/// iteration instead of one each.
///
/// Why: a client `GMainContext` iteration costs O(its sources) — prepare, the kernel's
/// poll(2) over every fd, check — whatever is ready (docs/benchmarks.md, "Idle fleet in
/// child processes"). An idle device's traffic is one ping and one pong every 15 s, which
/// nobody waits for, so holding the answers back by up to the spacing costs nothing the
/// benchmark measures and turns ~one iteration per pong into a few per second.
///
/// Pure: the caller passes the clock.
struct PollPacer: Equatable {
    /// 0: not paced (every poll as GLib asks).
    var spacingMicros: Int64
    /// When the last poll returned (monotonic µs); nil before the first.
    private(set) var lastReturnMicros: Int64?

    init(spacingMicros: Int64 = 0) {
        self.spacingMicros = spacingMicros
    }

    /// How long to sleep before polling, and the poll's own timeout then, for a poll that
    /// GLib asked to wait `timeoutMs` (-1: until an fd is ready; 0: do not block).
    /// Never delays past `timeoutMs` (a due timer or pending work runs on time).
    func plan(now: Int64, timeoutMs: Int32) -> (sleepMicros: Int64, pollTimeoutMs: Int32) {
        guard spacingMicros > 0, timeoutMs != 0, let last = lastReturnMicros else { return (0, timeoutMs) }
        let earliest = last + spacingMicros
        guard now < earliest else { return (0, timeoutMs) }
        var sleep = earliest - now
        if timeoutMs > 0 { sleep = min(sleep, Int64(timeoutMs) * 1000) }
        guard timeoutMs > 0 else { return (sleep, -1) }
        let left = Int64(timeoutMs) * 1000 - sleep
        // Round up: a timer due in 0.4 ms must not become a busy poll of 0 ms.
        return (sleep, Int32(clamping: (left + 999) / 1000))
    }

    mutating func returned(now: Int64) { lastReturnMicros = now }
}
