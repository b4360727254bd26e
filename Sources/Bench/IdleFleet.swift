import Foundation
import IO

/// Idle devices: connected at a bounded rate, then silent except for the `ping` every 15 s
/// that docs/protocol.md §1 requires. Runs on its own event loop.
final class IdleFleet {
    /// 15 s: the protocol's heartbeat interval (the server closes after 45 s of silence).
    static let pingIntervalSeconds = 15
    /// At most this many handshakes in flight: bounds client memory and the server's accept
    /// queue when the server falls behind the connect rate.
    static let maxInFlight = 512

    let loop: EventLoop
    let metrics: BenchMetrics
    private let url: String
    private let makeDevice: (Int) -> BenchDevice
    private let total: Int
    private let rate: Int
    private(set) var devices: [BenchDevice] = []
    private(set) var connected = 0
    private(set) var failed = 0
    private(set) var droppedAfterConnect = 0
    private var started = 0
    private var inFlight = 0
    private var connectStart: Int64 = 0
    private var connectTimer: TimerHandle?
    private var onAllSettled: (() -> Void)?

    init(loop: EventLoop, metrics: BenchMetrics, url: String, total: Int, rate: Int, makeDevice: @escaping (Int) -> BenchDevice) {
        self.loop = loop
        self.metrics = metrics
        self.url = url
        self.total = total
        self.rate = rate
        self.makeDevice = makeDevice
    }

    /// Starts connecting; `done` runs on the loop once every device is welcomed or failed.
    func connectAll(done: @escaping () -> Void) {
        onAllSettled = done
        connectStart = EventLoop.monotonicMicroseconds()
        devices.reserveCapacity(total)
        pump()
    }

    /// Every 10 ms: open as many sockets as the rate allows so far (a token bucket by time).
    private func pump() {
        let elapsedMicros = EventLoop.monotonicMicroseconds() - connectStart
        let allowed = min(total, Int(Double(rate) * Double(elapsedMicros) / 1_000_000) + 1)
        while started < allowed, inFlight < Self.maxInFlight {
            let device = makeDevice(started)
            started += 1
            inFlight += 1
            device.onWelcome = { [unowned self] _ in
                inFlight -= 1
                connected += 1
                settle()
            }
            device.onConnectFailed = { [unowned self] _, error in
                inFlight -= 1
                failed += 1
                metrics.error("idleConnectFailed(\(Self.short(error)))")
                settle()
            }
            device.onClose = { [unowned self] device, code in
                if device.welcomed {
                    droppedAfterConnect += 1
                    metrics.error("idleClosed(\(code))")
                } else {
                    inFlight -= 1
                    failed += 1
                    metrics.error("idleClosedBeforeWelcome(\(code))")
                    settle()
                }
            }
            devices.append(device)
            device.connect(url: url)
        }
        if started < total {
            connectTimer = loop.schedule(afterMilliseconds: 10) { [weak self] in self?.pump() }
        }
    }

    private func settle() {
        guard connected + failed == total, let done = onAllSettled else { return }
        onAllSettled = nil
        done()
    }

    /// Stops opening new sockets (time bound hit).
    func stopConnecting() { connectTimer?.cancel() }

    func closeAll() {
        for device in devices { device.close() }
    }

    static func short(_ error: IOError) -> String {
        let text = "\(error)"
        return String(text.prefix(while: { $0 != "(" }))
    }
}
