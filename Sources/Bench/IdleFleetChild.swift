import Auth
import Foundation
import IO

/// `switchboard bench idle-fleet`: one child of `bench signaling --idle-processes K`. Holds
/// its share of the idle devices (an ``IdleFleet`` with the protocol's 15 s heartbeat) on
/// its own GLib context, so no client loop iterates all 10,000 sockets (docs/benchmarks.md,
/// "Idle fleet in child processes"), and reports progress as ``IdleChildMessage`` lines.
///
/// Lifetime: stdin is a pipe from the parent. Its first line is the token secret; its EOF
/// (the parent closed it, or the parent died and the kernel closed it) closes every device
/// and exits. A 1 s check of getppid() backs this up: a reparented child exits at once, so
/// no orphan outlives a crashed benchmark.
public enum IdleFleetChild {
    /// 250 ms while connecting: the parent polls every 50 ms and shows progress. Once
    /// settled the report rides on the heartbeat's 1 s tick instead of a timer of its own:
    /// only drops and errors can change then, and every wake-up of the child's loop costs
    /// O(its sockets).
    static let reportIntervalMs: Int64 = 250
    /// Exit status: 0 done, 1 could not run, 2 bad flags.
    public static func main(_ args: [String]) -> Int32 {
        if args.contains("--help") || args.contains("-h") {
            print(IdleFleetChildOptions.usage)
            return 0
        }
        let options: IdleFleetChildOptions
        do {
            options = try IdleFleetChildOptions.parse(args)
        } catch {
            FileHandle.standardError.write(Data("switchboard bench idle-fleet: \(error)\n\(IdleFleetChildOptions.usage)\n".utf8))
            return 2
        }
        let parent = getppid()
        // EPIPE as an error, not a signal: a parent that died closed our stdout.
        signal(SIGPIPE, SIG_IGN)
        guard let secretLine = readLine(strippingNewline: true), let secret = BenchmarkSecret.decode(secretLine) else {
            FileHandle.standardError.write(Data("switchboard bench idle-fleet: no token secret on stdin\n".utf8))
            return 1
        }
        _ = raiseFileDescriptorLimit()
        let signer = TokenSigner(secret: secret)
        let loop = EventLoop(name: "idle-child")
        let metrics = BenchMetrics()
        loop.start()
        // One epoll set for the child's sockets (``LeanSocketLoop``), made on the loop's thread.
        var home: LeanSocketLoop?
        if options.client == .lean {
            let made = DispatchSemaphore(value: 0)
            loop.execute { home = LeanSocketLoop(loop: loop); made.signal() }
            made.wait()
            if home == nil {
                FileHandle.standardError.write(Data("switchboard bench idle-fleet: no epoll set; using libsoup's client\n".utf8))
            }
        }
        let transport: PairTransport = home.map { .lean($0) } ?? .soup
        let fleet = IdleFleet(loop: loop, metrics: metrics, url: options.url, total: options.count, rate: options.connectRate,
                              maxInFlight: options.maxInFlight) { k in
            let account = "bench-i-\(options.offset + k)"
            let now = EventLoop.wallClockMilliseconds() / 1000
            // 2 h + 1 h: outlives connecting plus the longest allowed run (BenchmarkOptions.maxDurationSeconds).
            let token = (try? TokenClaims(account: account, device: "d0", issuedAt: now, expiresAt: now + 7_200 + 3_600))
                .map { signer.mint($0) } ?? ""
            return BenchDevice(account: account, device: "d0", token: token, loop: loop, metrics: metrics, transport: transport)
        }
        // A 1 s tick with libsoup's client, whose loop looks at its sockets once a second.
        let heartbeat = Heartbeat(loop: loop, tickMicros: home != nil ? Heartbeat.spreadTickMicros : Heartbeat.secondTickMicros) {
            fleet.devices
        }
        let reporter = ProgressReporter(loop: loop, fleet: fleet, metrics: metrics)
        loop.execute {
            // Unpaced while connecting (each handshake needs several round trips), paced
            // once every device is welcomed or failed: from then on only pings and pongs.
            PacedPoll.install(spacingMicros: 0)
            heartbeat.start()
            reporter.start()
            fleet.connectAll {
                PacedPoll.install(spacingMicros: IdleFleet.pollSpacingMicros(lean: home != nil))
                reporter.settled()
                heartbeat.onTick = { reporter.report() }
            }
        }

        // Stdin EOF (or a read error) = stop. Anything after the secret line is ignored.
        let stop = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            while readLine() != nil {}
            stop.signal()
        }
        while stop.wait(timeout: .now() + 1) == .timedOut {
            if getppid() != parent { exit(0) }
        }
        let closed = DispatchSemaphore(value: 0)
        loop.execute {
            heartbeat.stop()
            reporter.stop()
            fleet.stopConnecting()
            fleet.closeAll()
            closed.signal()
        }
        _ = closed.wait(timeout: .now() + 2)
        // 500 ms for the closing handshakes to leave, so the server logs clean closes.
        Thread.sleep(forTimeInterval: 0.5)
        withExtendedLifetime((fleet, heartbeat, reporter)) {}
        exit(0)
    }
}

/// Writes the fleet's state as a line on stdout when it changed, every 250 ms, and at once
/// when the fleet settles. Runs on the fleet's loop.
final class ProgressReporter {
    private let loop: EventLoop
    private let fleet: IdleFleet
    private let metrics: BenchMetrics
    private let startMicros = EventLoop.monotonicMicroseconds()
    private var connectSeconds: Double?
    private var last: IdleChildMessage?
    private var stopped = false

    init(loop: EventLoop, fleet: IdleFleet, metrics: BenchMetrics) {
        self.loop = loop
        self.fleet = fleet
        self.metrics = metrics
    }

    func start() {
        report()
        loop.schedule(afterMilliseconds: IdleFleetChild.reportIntervalMs) { [self] in
            guard !stopped, connectSeconds == nil else { return }
            start()
        }
    }

    func settled() {
        connectSeconds = Double(EventLoop.monotonicMicroseconds() - startMicros) / 1_000_000
        report()
    }

    func stop() { stopped = true }

    func report() {
        guard !stopped else { return }
        let message = IdleChildMessage(connected: fleet.connected, failed: fleet.failed, dropped: fleet.droppedAfterConnect,
                                       settled: connectSeconds != nil, connectSeconds: connectSeconds, errors: metrics.errors)
        guard message != last else { return }
        last = message
        // write(2), not FileHandle (which traps on EPIPE): a closed stdout means the parent
        // is gone, and the child ends as on stdin EOF.
        let bytes = Array((message.line() + "\n").utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { exit(0) }
            sent += n
        }
    }
}
