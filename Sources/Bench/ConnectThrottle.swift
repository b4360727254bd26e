import IO

/// Opens device connections at a bounded rate with a bounded number of handshakes in
/// flight (TCP connect + WebSocket upgrade + hello → welcome). Runs on one event loop.
///
/// The in-flight bound matters more than the rate. libsoup's `soup_server_listen` leaves
/// GSocket's default backlog of 10, and a server with it drops SYNs beyond ~10 simultaneous
/// handshakes (TcpExtListenOverflows; clients retry after 1 s, 3 s, 7 s …). Switchboard's own
/// listener asks for 4096 (`HTTPServerShard.listenBacklog`), but the bench keeps the bound
/// that is safe against any libsoup-default server.
final class ConnectThrottle {
    /// 8: below a libsoup-default listen backlog of 10, with room for other clients.
    static let defaultMaxInFlight = 8

    private let loop: EventLoop
    private let url: String
    private let rate: Int
    private let maxInFlight: Int
    private var queue: [BenchDevice] = []
    private var next = 0
    private var started = 0
    private var inFlight = 0
    private var startMicros: Int64 = 0
    private var timer: TimerHandle?
    private var cancelled = false

    init(loop: EventLoop, url: String, rate: Int, maxInFlight: Int = defaultMaxInFlight) {
        self.loop = loop
        self.url = url
        self.rate = rate
        self.maxInFlight = maxInFlight
    }

    /// Queues `devices`; each device's `onHandshakeDone` is taken over (chain yours via
    /// `onWelcome`/`onConnectFailed`/`onClose`).
    func connect(_ devices: [BenchDevice]) {
        if startMicros == 0 { startMicros = EventLoop.monotonicMicroseconds() }
        queue += devices
        pump()
    }

    func cancel() {
        cancelled = true
        timer?.cancel()
    }

    private func pump() {
        timer = nil
        guard !cancelled else { return }
        let elapsed = EventLoop.monotonicMicroseconds() - startMicros
        let allowed = Int(Double(rate) * Double(elapsed) / 1_000_000) + 1
        while next < queue.count, started < allowed, inFlight < maxInFlight {
            let device = queue[next]
            next += 1
            started += 1
            inFlight += 1
            device.onHandshakeDone = { [weak self] in
                guard let self else { return }
                inFlight -= 1
                if timer == nil { pump() }
            }
            device.connect(url: url)
        }
        // Whatever remains waits for the rate (1 ms timer) or for a handshake to finish.
        if next < queue.count, inFlight < maxInFlight, timer == nil {
            timer = loop.schedule(afterMilliseconds: 1) { [weak self] in self?.pump() }
        }
    }
}
