import Foundation
import IO

/// Idle devices: connected at a bounded rate, then silent except for the `ping` every 15 s
/// that docs/protocol.md §1 requires. Runs on its own event loop.
final class IdleFleet {
    /// 15 s: the protocol's heartbeat interval (the server closes after 45 s of silence).
    static let pingIntervalSeconds = 15
    /// Time between two looks at the sockets of a connected idle fleet (``PollPacer``).
    /// Lean client (the children's default): 100 ms, the heartbeat's tick, so one wake-up
    /// reads the last tick's pongs and sends the next tick's pings; a look costs O(ready
    /// sockets), and a pong waits at most 100 ms, far inside the server's 45 s idle timeout
    /// (which counts the pings we send, and those leave on time). libsoup's client: 1 s,
    /// because each look costs O(its sockets) in GLib and poll(2) (perf: ~95 % of an idle
    /// child's CPU at 1 s already); its heartbeat ticks once a second too
    /// (``Heartbeat/secondTickMicros``), so its pings leave in one burst a second, as
    /// before "Idle pings spread over the second" (docs/benchmarks.md).
    static func pollSpacingMicros(lean: Bool) -> Int64 { lean ? 100_000 : 1_000_000 }
    let loop: EventLoop
    let metrics: BenchMetrics
    private let makeDevice: (Int) -> BenchDevice
    private let total: Int
    private(set) var devices: [BenchDevice] = []
    private(set) var connected = 0
    private(set) var failed = 0
    private(set) var droppedAfterConnect = 0
    private let throttle: ConnectThrottle
    private var onAllSettled: (() -> Void)?

    init(loop: EventLoop, metrics: BenchMetrics, url: String, total: Int, rate: Int,
         maxInFlight: Int = ConnectThrottle.defaultMaxInFlight, makeDevice: @escaping (Int) -> BenchDevice) {
        self.loop = loop
        self.metrics = metrics
        self.total = total
        self.makeDevice = makeDevice
        throttle = ConnectThrottle(loop: loop, url: url, rate: rate, maxInFlight: maxInFlight)
    }

    /// Starts connecting; `done` runs on the loop once every device is welcomed or failed.
    func connectAll(done: @escaping () -> Void) {
        onAllSettled = done
        devices = (0 ..< total).map(makeDevice)
        for device in devices {
            device.onWelcome = { [weak self] _ in
                guard let self else { return }
                connected += 1
                settle()
            }
            device.onConnectFailed = { [weak self] _, error in
                guard let self else { return }
                failed += 1
                metrics.error("idleConnectFailed(\(Self.short(error)))")
                settle()
            }
            device.onClose = { [weak self] device, code in
                guard let self else { return }
                if device.welcomed {
                    droppedAfterConnect += 1
                    metrics.error("idleClosed(\(code))")
                } else {
                    failed += 1
                    metrics.error("idleClosedBeforeWelcome(\(code))")
                    settle()
                }
            }
        }
        throttle.connect(devices)
    }

    private func settle() {
        guard connected + failed == total, let done = onAllSettled else { return }
        onAllSettled = nil
        done()
    }

    /// Stops opening new sockets (time bound hit).
    func stopConnecting() { throttle.cancel() }

    func closeAll() {
        for device in devices { device.close() }
    }

    static func short(_ error: IOError) -> String {
        let text = "\(error)"
        return String(text.prefix(while: { $0 != "(" }))
    }
}
