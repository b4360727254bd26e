import Auth
import Foundation
import IO

/// `switchboard bench signaling`: holds idle devices connected to a running server and
/// drives complete call setups through its IM channel, then prints the figures
/// (docs/benchmarks.md). Bounded in count and time: every phase has a deadline.
///
/// Threads: ``PairLoops`` for the call pairs (the latency measurements, a few pairs per
/// loop); the idle devices
/// live in `--idle-processes` child processes (``ChildProcessIdleDevices``) or, with 0, on
/// one more event loop here (``InProcessIdleDevices``); the calling thread only orchestrates.
public enum SignalingBenchmark {
    /// Exit status: 0 ran (errors are in the report), 1 could not run, 2 bad flags.
    public static func main(_ args: [String]) -> Int32 {
        let options: BenchmarkOptions
        do {
            switch try BenchmarkOptions.parse(args) {
            case .help:
                print(BenchmarkOptions.usage)
                return 0
            case .run(let parsed):
                options = parsed
            }
        } catch {
            FileHandle.standardError.write(Data("switchboard bench signaling: \(error)\n\n\(BenchmarkOptions.usage)\n".utf8))
            return 2
        }
        let secret: [UInt8]
        do {
            secret = try BenchmarkSecret.load(options)
        } catch {
            let what: String
            switch error {
            case .unreadable(let path): what = "cannot read the secret file \(path)"
            case .notBase64: what = "the token secret is not base64url/base64 text"
            }
            FileHandle.standardError.write(Data("switchboard bench signaling: \(what)\n".utf8))
            return 1
        }
        let report = SignalingRun(options: options, secret: secret).run()
        print(options.json ? report.json() : report.text)
        return 0
    }
}

/// One benchmark run; see ``SignalingBenchmark``.
final class SignalingRun {
    let options: BenchmarkOptions
    let signer: TokenSigner
    /// The token secret, handed to idle children on their stdin.
    let secret: [UInt8]
    let pairLoops: PairLoops
    var notes: [String] = []

    init(options: BenchmarkOptions, secret: [UInt8]) {
        self.options = options
        self.secret = secret
        signer = TokenSigner(secret: secret)
        pairLoops = PairLoops(count: PairLoops.loopCount(pairs: options.pairs, pairsPerLoop: options.effectivePairsPerLoop))
    }

    /// What `--rate` became: the rate `pairs` pairs offer at the interval it gives them
    /// (``SetupPacing/intervalMs(pairs:offeredRate:minimumMs:)``), and whether they fell short
    /// of the asked rate (too few pairs for the server's command limit).
    static func offeredRateNote(rate: Double, pairs: Int, minimumMs: Int64) -> String {
        func f(_ x: Double) -> String { String(format: "%.1f", x) }
        // The interval R asks for, then with the command limit's floor, as the pacing uses it.
        let asked = SetupPacing.intervalMs(pairs: pairs, offeredRate: rate, minimumMs: 0)
        let intervalMs = max(asked, minimumMs)
        let offered = SetupPacing.rate(pairs: pairs, intervalMs: intervalMs)
        if asked < minimumMs {
            return "offered rate: \(f(offered)) setups/s, below --rate \(f(rate)): \(pairs) pairs at one setup per "
                + "\(minimumMs) ms cannot offer more (give more --pairs)"
        }
        return "offered rate: \(f(offered)) setups/s (--rate \(f(rate)); each pair one setup per \(intervalMs) ms on average)"
    }

    func token(account: String, device: String) -> String {
        let now = EventLoop.wallClockMilliseconds() / 1000
        // 2 h + the run: tokens must outlive the longest allowed run (1 h) plus connecting.
        guard let claims = try? TokenClaims(account: account, device: device, issuedAt: now,
                                            expiresAt: now + 7_200 + Int64(options.durationSeconds + options.warmupSeconds)) else {
            return ""
        }
        return signer.mint(claims)
    }

    static func seconds(since startMicros: Int64) -> Double {
        Double(EventLoop.monotonicMicroseconds() - startMicros) / 1_000_000
    }

    func run() -> BenchmarkReport {
        let startedAt = ISO8601DateFormatter().string(from: Date())
        if let limit = raiseFileDescriptorLimit() {
            // Idle children raise their own limits; this process holds only the pairs then.
            let idleHere = options.resolvedIdleProcesses == 0 ? options.idle : 0
            let needed = UInt64(idleHere + options.pairs * (1 + options.calleeDevices) + 64)
            if limit < needed {
                notes.append("fd limit \(limit) < \(needed) sockets needed: connections beyond it fail")
            }
        }
        var serverPID = options.serverPID
        if serverPID == nil, let port = ServerProcess.port(of: options.url) {
            serverPID = ServerProcess.listener(port: port)
            if serverPID == nil { notes.append("server process not found (pass --server-pid): no memory figures") }
        }
        pairLoops.start()
        defer { pairLoops.stop() }

        // 1. Idle devices, in this process or in K children.
        let rssBefore = serverPID.flatMap { ServerProcess.residentKB(pid: $0) }
        let idleProcesses = options.resolvedIdleProcesses
        let fleet: IdleDevices
        if idleProcesses > 0, let executable = options.idleChildExecutable ?? IdleChildProcess.ownExecutable() {
            fleet = ChildProcessIdleDevices(total: options.idle, processes: idleProcesses, url: options.url,
                                            rate: options.connectRate, client: options.idleClient, executable: executable,
                                            secret: secret)
        } else {
            if idleProcesses > 0 { notes.append("own executable not found: idle devices held in this process") }
            fleet = InProcessIdleDevices(total: options.idle, url: options.url, rate: options.connectRate) { [self] account in
                token(account: account, device: "d0")
            }
        }
        let idleStart = EventLoop.monotonicMicroseconds()
        // Bound: 3× the nominal connect time + 120 s (a server loaded by 10,000 sockets
        // accepts far below the nominal rate; see docs/benchmarks.md).
        if !fleet.connect(boundSeconds: Double(options.idle) / Double(options.connectRate) * 3 + 120) {
            notes.append("idle connect phase hit its time bound (or an idle child failed)")
        }
        let idleSeconds = Self.seconds(since: idleStart)
        // 1 s: let the server finish the hellos' work and the allocator settle before reading RSS.
        Thread.sleep(forTimeInterval: options.idle > 0 ? 1 : 0)
        let rssAfter = serverPID.flatMap { ServerProcess.residentKB(pid: $0) }
        let idleConnected = fleet.connected

        // 2. Pair devices: connect, hello, wait for caughtUp (earlier runs' backlog replayed).
        let loops = pairLoops
        // One epoll set per pair loop for the lean client, made on its loop's thread.
        let leanLoops: [LeanSocketLoop?] = loops.onEach { [options] k in
            options.client == .lean ? LeanSocketLoop(loop: loops.loops[k]) : nil
        }
        if options.client == .lean, leanLoops.contains(where: { $0 == nil }) {
            notes.append("lean client: no epoll set on some loops; those pairs use libsoup")
        }
        notes.append("pair client: \(options.client.rawValue)")
        let perLoop: [[BenchPair]] = loops.onEach { [self] k in
            let loop = loops.loops[k], metrics = loops.metrics[k]
            let transport = leanLoops[k].map { PairTransport.lean($0) } ?? .soup
            return PairLoops.pairIndices(loop: k, loops: loops.loops.count, pairs: options.pairs).map { i in
                let caller = BenchDevice(account: "bench-a-\(i)", device: "d0", token: token(account: "bench-a-\(i)", device: "d0"),
                                         loop: loop, metrics: metrics, transport: transport)
                let callees = (0 ..< options.calleeDevices).map { d in
                    BenchDevice(account: "bench-b-\(i)", device: "d\(d)", token: token(account: "bench-b-\(i)", device: "d\(d)"),
                                loop: loop, metrics: metrics, transport: transport)
                }
                return BenchPair(index: i, caller: caller, callees: callees, metrics: metrics, loop: loop,
                                 setupTimeoutMs: Int64(options.setupTimeoutSeconds * 1000))
            }
        }
        let devicesPerLoop = perLoop.map { $0.flatMap { [$0.caller] + $0.callees } }
        let pairs = perLoop.flatMap { $0 }
        let pairDeviceCount = devicesPerLoop.reduce(0) { $0 + $1.count }
        // The fleet's connect rate and handshakes in flight, split over the loops.
        let loopRate = max(1, options.connectRate / loops.loops.count)
        let loopInFlight = max(1, ConnectThrottle.defaultMaxInFlight / loops.loops.count)
        let url = options.url
        let pairConnectStart = EventLoop.monotonicMicroseconds()
        let (pairHeartbeats, pairConnectors) = loops.onEach { k -> (Heartbeat, ConnectThrottle) in
            let loop = loops.loops[k], metrics = loops.metrics[k], devices = devicesPerLoop[k]
            let heartbeat = Heartbeat(loop: loop) { devices }
            heartbeat.start()
            for device in devices {
                device.onConnectFailed = { _, error in metrics.error("pairConnectFailed(\(IdleFleet.short(error)))") }
                device.onClose = { _, code in metrics.error("pairDeviceClosed(\(code))") }
            }
            let connector = ConnectThrottle(loop: loop, url: url, rate: loopRate, maxInFlight: loopInFlight)
            connector.connect(devices)
            return (heartbeat, connector)
        }.reduce(into: ([Heartbeat](), [ConnectThrottle]())) { $0.0.append($1.0); $0.1.append($1.1) }
        _ = loops.wait(seconds: 30 + Double(pairDeviceCount) / Double(options.connectRate)) { k in
            devicesPerLoop[k].allSatisfy { $0.caughtUp || $0.closed }
        }
        let pairConnected = loops.onEach { k in devicesPerLoop[k].filter { $0.caughtUp }.count }.reduce(0, +)
        let pairConnectSeconds = Self.seconds(since: pairConnectStart)

        // 3. Closed-loop setups: only pairs whose devices all connected take part.
        let readyPerLoop = loops.onEach { k in perLoop[k].filter { p in p.caller.caughtUp && p.callees.allSatisfy { $0.caughtUp } } }
        let readyCount = readyPerLoop.reduce(0) { $0 + $1.count }
        if readyCount < pairs.count { notes.append("\(pairs.count - readyCount) pairs not connected; they did not run") }
        let limit = loops.onEach { k in readyPerLoop[k].first?.caller.commandsPerSecond }.compactMap { $0 }.first ?? 50
        let minimum = BenchPair.minimumSetupIntervalMs(commandsPerSecond: limit)
        let interval = SetupPacing.intervalMs(pairs: readyCount, offeredRate: options.offeredRate, minimumMs: minimum)
        if readyCount > 0 {
            notes.append("each pair starts at most one setup per \(minimum) ms (server limit \(limit) commands/s per device): "
                + "at most \(Int(SetupPacing.rate(pairs: readyCount, intervalMs: minimum))) setups/s with \(readyCount) pairs")
            if let rate = options.offeredRate {
                notes.append(Self.offeredRateNote(rate: rate, pairs: readyCount, minimumMs: minimum))
            }
        }
        let pacing = SetupPacing(intervalMs: interval, aligned: options.alignedSetups)
        if options.alignedSetups { notes.append("setups aligned: every pair starts at once, every \(interval) ms") }
        _ = loops.onEach { k in readyPerLoop[k].forEach { $0.setupPacing = pacing; $0.start() } }
        Thread.sleep(forTimeInterval: options.warmupSeconds)

        // The database's size from the server's /metrics, read just outside the window (a
        // scrape costs the server a little CPU); nil when the server does not say.
        let metricsLoop = EventLoop(name: "bench-metrics")
        metricsLoop.start()
        defer { metricsLoop.stop() }
        let metricsURL = ServerMetrics.metricsURL(forSignalingURL: options.url)
        func databaseBytes() -> Double? {
            metricsURL.flatMap { ServerMetrics.fetch($0, loop: metricsLoop) }
                .flatMap { ServerMetrics.value(of: "switchboard_db_bytes_in_use", in: $0) }
        }
        let databaseBytes0 = databaseBytes()
        let cpuTicks0 = serverPID.flatMap { ServerProcess.cpuTicks(pid: $0) }
        let wait0 = serverPID.flatMap { ServerProcess.runQueueWaitNanos(pid: $0) }
        let ownCPU0 = ServerProcess.ownCPUSeconds()
        let host0 = HostCPU.read()
        let idle0 = fleet.counts
        let childPIDs = fleet.childPIDs
        let childTicks0 = childPIDs.compactMap { ServerProcess.cpuTicks(pid: $0) }
        let pair0 = loops.measuring(true)
        let windowStart = EventLoop.monotonicMicroseconds()
        Thread.sleep(forTimeInterval: options.durationSeconds)
        let pair1 = loops.measuring(false)
        let idle1 = fleet.counts
        let childTicks1 = childPIDs.compactMap { ServerProcess.cpuTicks(pid: $0) }
        let window = Self.seconds(since: windowStart)
        let cpuTicks1 = serverPID.flatMap { ServerProcess.cpuTicks(pid: $0) }
        let wait1 = serverPID.flatMap { ServerProcess.runQueueWaitNanos(pid: $0) }
        let load = ServerProcess.loadAverage()
        let ownCPU1 = ServerProcess.ownCPUSeconds()
        let host1 = HostCPU.read()
        let databaseBytes1 = databaseBytes()

        // 4. Drain: in-flight setups finish (or time out), then everything closes.
        _ = loops.onEach { k in readyPerLoop[k].forEach { $0.stop() } }
        if !loops.wait(seconds: options.setupTimeoutSeconds + 2, until: { k in readyPerLoop[k].allSatisfy { $0.stopped } }) {
            notes.append("some setups were still in flight at the end")
        }
        let rssEnd = serverPID.flatMap { ServerProcess.residentKB(pid: $0) }
        let dropped = fleet.dropped
        let failed = fleet.failed
        let idleErrors = fleet.errors
        let childConnectSeconds = fleet.childConnectSeconds
        let notConnected = max(0, options.idle - idleConnected - failed)
        _ = loops.onEach { k in
            pairHeartbeats[k].stop()
            perLoop[k].forEach { $0.detach() }
            devicesPerLoop[k].forEach { $0.close() }
        }
        notes += fleet.stop()

        // Everything the loops' callbacks reach stays alive until the sockets are closed.
        withExtendedLifetime((fleet, pairs, devicesPerLoop, pairConnectors)) {}
        // Lean sockets finish their closing handshakes (the server closes TCP, RFC 6455
        // §7.1.1; each has its own 2 s bound); whatever is left after 3 s is dropped.
        _ = loops.wait(seconds: 3) { k in (leanLoops[k]?.openSockets ?? 0) == 0 }
        _ = loops.onEach { k in leanLoops[k]?.shutdown() }
        let d = (pair1 - pair0) + (idle1 - idle0)
        let merged = loops.merged()
        let m = (merged.latencies, merged.accepted, merged.rejectedByCode, merged.expectedRejections, merged.errors,
                 merged.rejectionExamples)
        var errors = m.4
        for (key, value) in idleErrors { errors[key, default: 0] += value }
        let latencies = Stage.allCases.map { stage in
            BenchmarkReport.StageFigures(stage: stage.rawValue, latency: m.0[stage]?.summary()
                ?? LatencySummary(count: 0, p50: 0, p95: 0, p99: 0, max: 0))
        }
        var perConnection: Double?
        if let before = rssBefore, let after = rssAfter, idleConnected > 0 {
            perConnection = Double(after - before) / Double(idleConnected)
        }
        var childrenCPU: Double?
        if !childPIDs.isEmpty, childTicks0.count == childPIDs.count, childTicks1.count == childPIDs.count {
            let ticks: Int = zip(childTicks1, childTicks0).map { $0 - $1 }.reduce(0, +)
            childrenCPU = Double(ticks) / ServerProcess.ticksPerSecond / window
        }
        return BenchmarkReport(
            url: options.url, startedAt: startedAt, idleRequested: options.idle, idleConnected: idleConnected,
            idleFailed: failed, idleNotConnectedInTime: notConnected, idleDroppedDuringRun: dropped, idleConnectSeconds: idleSeconds,
            idleProcesses: childConnectSeconds.count, idleChildConnectSeconds: childConnectSeconds,
            idleChildrenCPUCores: childrenCPU,
            pairs: options.pairs, calleeDevices: options.calleeDevices, pairLoops: loops.loops.count, pairDevicesConnected: pairConnected, pairConnectSeconds: pairConnectSeconds,
            warmupSeconds: options.warmupSeconds, measuredSeconds: window,
            setupsCompleted: d.setupsCompleted, setupsPerSecond: Double(d.setupsCompleted) / window,
            commandsPerSecond: Double(d.commandsSent) / window, eventsPerSecond: Double(d.framesReceived) / window,
            framesSentPerSecond: Double(d.framesSent) / window, latencies: latencies,
            accepted: m.1, rejectedByCode: m.2, rejectionExamples: m.5, expectedRejections: m.3, errors: errors,
            serverPID: serverPID, serverRSSBeforeIdleKB: rssBefore, serverRSSAfterIdleKB: rssAfter, serverRSSEndKB: rssEnd,
            memoryPerIdleConnectionKB: perConnection,
            serverCPUCores: cpuTicks0.flatMap { t0 in cpuTicks1.map { Double($0 - t0) / ServerProcess.ticksPerSecond / window } },
            clientCPUCores: (ownCPU1 - ownCPU0) / window,
            serverRunQueueWaitFraction: wait0.flatMap { w0 in wait1.map { Double($0 - w0) / 1e9 / window } },
            loadAverage: load, cpus: ProcessInfo.processInfo.activeProcessorCount, notes: notes,
            databaseBytesPerSetup: databaseBytes0.flatMap { b0 in
                databaseBytes1.flatMap { b1 in d.setupsCompleted > 0 ? (b1 - b0) / Double(d.setupsCompleted) : nil }
            },
            hostCPUBusyCores: host0.flatMap { h0 in
                host1.flatMap { HostCPU.busyCores(from: h0, to: $0, seconds: window, ticksPerSecond: ServerProcess.ticksPerSecond) }
            })
    }
}
