import IO

/// The application heartbeat of docs/protocol.md §1: every device sends `ping` at least
/// every 15 s. Pings 1/15 of the devices each second, so the server sees a smooth load
/// instead of 10,000 pings at once. Runs on the devices' loop until `stop()`.
///
/// Ticks are due on a fixed 1 s grid from the first `start()` (not 1 s after the previous
/// tick ran), so a loop paced at 1 s (``IdleFleet/pollSpacingMicros``) reads the previous
/// tick's pongs and runs the next tick in one wake-up.
final class Heartbeat {
    /// 15 s: the protocol's heartbeat interval (the server closes after 45 s of silence).
    static let intervalSeconds = 15
    /// 1 s between ticks: 1/15 of the devices ping on each.
    static let tickMicros: Int64 = 1_000_000
    private let loop: EventLoop
    private let devices: () -> [BenchDevice]
    private var tick = 0
    private var startMicros: Int64?
    /// Runs after each tick's pings: other once-a-second work of the same loop rides on
    /// this wake-up instead of a timer of its own (the idle child's progress report).
    var onTick: (() -> Void)?
    private var stopped = false

    init(loop: EventLoop, devices: @escaping () -> [BenchDevice]) {
        self.loop = loop
        self.devices = devices
    }

    /// Milliseconds from `now` until tick `tick` (1-based) of a grid started at `start`,
    /// rounded up so a timer never fires before its tick; 0 when it is already due.
    static func delayMs(now: Int64, start: Int64, tick: Int) -> Int64 {
        let due = start + Int64(tick) * tickMicros
        return max(0, (due - now + 999) / 1000)
    }

    /// The devices that ping on tick `tick`: every 15th, from `tick % 15`.
    static func due(tick: Int, count: Int) -> StrideTo<Int> {
        stride(from: tick % intervalSeconds, to: count, by: intervalSeconds)
    }

    func start() {
        let now = EventLoop.monotonicMicroseconds()
        let origin = startMicros ?? now
        startMicros = origin
        loop.schedule(afterMilliseconds: Self.delayMs(now: now, start: origin, tick: tick + 1)) { [self] in
            guard !stopped else { return }
            tick += 1
            let all = devices()
            for i in Self.due(tick: tick, count: all.count) where all[i].welcomed { all[i].ping() }
            onTick?()
            start()
        }
    }

    /// Call on the loop thread.
    func stop() { stopped = true }
}
