import IO

/// The application heartbeat of docs/protocol.md §1: every device sends `ping` at least
/// every 15 s. Pings 1/150 of the devices every 100 ms, so the server sees the smooth load
/// of devices that connected at random times instead of 10,000 pings at once. Runs on the
/// devices' loop until `stop()`.
///
/// Ticks are due on a fixed 100 ms grid from the first `start()` (not 100 ms after the
/// previous tick ran), so a loop paced at the same spacing (``IdleFleet/pollSpacingMicros(lean:)``)
/// reads the previous tick's pongs and runs the next tick in one wake-up.
final class Heartbeat {
    /// 15 s: the protocol's heartbeat interval (the server closes after 45 s of silence).
    static let intervalSeconds = 15
    /// 100 ms between ticks: 1/150 of the devices ping on each. With a 1 s tick each child
    /// sent its second's share at once, and 8 children put ~670 pings into ~100 ms of every
    /// second: both server shards then ran for 10–26 ms without a break (perf sched), and
    /// call frames waited behind the burst (docs/benchmarks.md, "Idle pings spread over
    /// the second"). Devices that connected at random times ping at random phases.
    static let spreadTickMicros: Int64 = 100_000
    /// 1 s between ticks, 1/15 of the devices on each: for a loop that looks at its sockets
    /// once a second anyway (idle children on libsoup's client, whose every look costs
    /// O(sockets)); a 100 ms grid there ran ten overdue ticks per wake-up, each a look.
    static let secondTickMicros: Int64 = 1_000_000
    /// This heartbeat's tick (``spreadTickMicros`` unless told otherwise).
    let tickMicros: Int64
    private let loop: EventLoop
    private let devices: () -> [BenchDevice]
    private var tick = 0
    private var startMicros: Int64?
    /// Runs after the pings of every ``ticksPerSecond(tickMicros:)``-th tick: other once-a-second work of
    /// the same loop rides on this wake-up instead of a timer of its own (the idle child's
    /// progress report).
    var onTick: (() -> Void)?
    private var stopped = false

    init(loop: EventLoop, tickMicros: Int64 = Heartbeat.spreadTickMicros, devices: @escaping () -> [BenchDevice]) {
        self.loop = loop
        self.tickMicros = max(1_000, min(tickMicros, 1_000_000))
        self.devices = devices
    }

    /// Ticks per 15 s heartbeat interval (150 at 100 ms): each device pings on one of them.
    static func ticksPerInterval(tickMicros: Int64 = spreadTickMicros) -> Int {
        Int(Int64(intervalSeconds) * 1_000_000 / tickMicros)
    }

    /// Ticks per second (10 at 100 ms): ``onTick`` runs on every such tick, once a second.
    static func ticksPerSecond(tickMicros: Int64 = spreadTickMicros) -> Int {
        max(1, Int(1_000_000 / tickMicros))
    }

    /// Milliseconds from `now` until tick `tick` (1-based) of a grid started at `start`,
    /// rounded up so a timer never fires before its tick; 0 when it is already due.
    static func delayMs(now: Int64, start: Int64, tick: Int, tickMicros: Int64 = spreadTickMicros) -> Int64 {
        let due = start + Int64(tick) * tickMicros
        return max(0, (due - now + 999) / 1000)
    }

    /// True on every ``ticksPerSecond(tickMicros:)``-th tick, when ``onTick`` runs.
    static func endsSecond(tick: Int, tickMicros: Int64 = spreadTickMicros) -> Bool {
        tick % ticksPerSecond(tickMicros: tickMicros) == 0
    }

    /// The devices that ping on tick `tick`: every 150th (at 100 ms), from `tick % 150`.
    static func due(tick: Int, count: Int, tickMicros: Int64 = spreadTickMicros) -> StrideTo<Int> {
        let every = ticksPerInterval(tickMicros: tickMicros)
        return stride(from: tick % every, to: count, by: every)
    }

    func start() {
        let now = EventLoop.monotonicMicroseconds()
        let origin = startMicros ?? now
        startMicros = origin
        loop.schedule(afterMilliseconds: Self.delayMs(now: now, start: origin, tick: tick + 1, tickMicros: tickMicros)) { [self] in
            guard !stopped else { return }
            tick += 1
            let all = devices()
            for i in Self.due(tick: tick, count: all.count, tickMicros: tickMicros) where all[i].welcomed { all[i].ping() }
            if Self.endsSecond(tick: tick, tickMicros: tickMicros) { onTick?() }
            start()
        }
    }

    /// Call on the loop thread.
    func stop() { stopped = true }
}
