import IO

/// The application heartbeat of docs/protocol.md §1: every device sends `ping` at least
/// every 15 s. Pings 1/15 of the devices each second, so the server sees a smooth load
/// instead of 10,000 pings at once. Runs on the devices' loop until `stop()`.
final class Heartbeat {
    /// 15 s: the protocol's heartbeat interval (the server closes after 45 s of silence).
    static let intervalSeconds = 15
    private let loop: EventLoop
    private let devices: () -> [BenchDevice]
    private var tick = 0
    private var stopped = false

    init(loop: EventLoop, devices: @escaping () -> [BenchDevice]) {
        self.loop = loop
        self.devices = devices
    }

    func start() {
        loop.schedule(afterMilliseconds: 1000) { [self] in
            guard !stopped else { return }
            tick += 1
            let all = devices()
            var i = tick % Self.intervalSeconds
            while i < all.count {
                if all[i].welcomed { all[i].ping() }
                i += Self.intervalSeconds
            }
            start()
        }
    }

    /// Call on the loop thread.
    func stop() { stopped = true }
}
