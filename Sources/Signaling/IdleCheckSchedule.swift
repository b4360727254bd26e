/// When each connection's housekeeping check (hello timeout, idle timeout, token expiry) is
/// next due, so that a housekeeping pass looks only at the connections due, not at all of them.
///
/// The pass used to walk every connection each second: with 10,000 idle devices that was
/// 1–2.5 ms on the hub thread per second (`switchboard_hub_tick_microseconds` p90, the passes
/// with housekeeping), growing with the number of connections, and frames that arrived
/// meanwhile waited. A connection now comes up when its earliest possible reason to close is
/// due; if it is still fine (it sent a frame, or its shard answered a ping), it is put back at
/// its next such time. An idle device that pings every 15 s with a 45 s idle timeout is
/// looked at about once every 30–45 s instead of 45 times.
///
/// Times are milliseconds of the monotonic clock (`HubTime.mono`), bucketed by whole second
/// (the pass runs once a second): a connection is never taken before its due time, and at
/// most one second after it. A connection is scheduled when it opens, after each check that
/// keeps it, and earlier when its token expires before its pending check; the caller keeps
/// the current due time with the connection and skips entries it superseded, and drops the
/// entries of connections that closed meanwhile (it finds no connection for them).
struct IdleCheckSchedule {
    /// Bucket second → connections due in it (due time ≤ that second's start).
    private var buckets: [Int64: [ConnectionID]] = [:]
    /// Seconds up to (and including) this one were taken; later schedules go after it.
    private var takenThrough: Int64 = .min
    /// Connections waiting in buckets (tests and diagnostics).
    private(set) var count = 0

    /// Takes `id` up at `dueMono` (ms) or at most 1 s later; a due time already taken
    /// comes up at the next pass.
    mutating func schedule(_ id: ConnectionID, atMono dueMono: Int64) {
        // Ceiling division: the bucket whose start is at or after the due time.
        let second = max(Self.ceilSeconds(dueMono), takenThrough &+ 1)
        buckets[second, default: []].append(id)
        count += 1
    }

    /// The connections whose bucket has started by `nowMono`, in due order, each once.
    mutating func takeDue(nowMono: Int64) -> [ConnectionID] {
        let through = Self.floorSeconds(nowMono)
        guard through > takenThrough else { return [] }
        takenThrough = through
        // The keys span about one idle timeout of seconds (~45), not the connections.
        let due = buckets.keys.filter { $0 <= through }.sorted()
        var taken: [ConnectionID] = []
        for second in due {
            if let ids = buckets.removeValue(forKey: second) { taken += ids }
        }
        count -= taken.count
        return taken
    }

    private static func floorSeconds(_ ms: Int64) -> Int64 {
        ms >= 0 ? ms / 1_000 : -((-ms + 999) / 1_000)
    }

    private static func ceilSeconds(_ ms: Int64) -> Int64 {
        -floorSeconds(-ms)
    }
}
