import Foundation

/// The figures of one run (`--json` prints this as JSON; otherwise ``text``).
public struct BenchmarkReport: Codable, Equatable, Sendable {
    public struct StageFigures: Codable, Equatable, Sendable {
        public var stage: String
        public var latency: LatencySummary
    }

    public var url: String
    public var startedAt: String
    public var idleRequested: Int
    public var idleConnected: Int
    public var idleFailed: Int
    /// Idle devices still not connected when the connect phase hit its time bound.
    public var idleNotConnectedInTime: Int
    public var idleDroppedDuringRun: Int
    public var idleConnectSeconds: Double
    /// Child processes that held the idle devices (0 = this process).
    public var idleProcesses: Int
    /// Each child's connect time (its first connect to its last welcome); nil = not settled.
    public var idleChildConnectSeconds: [Double?]
    /// The idle children's CPU during the measured window, in cores (all children summed).
    public var idleChildrenCPUCores: Double?
    public var pairs: Int
    public var calleeDevices: Int
    /// Event loops (threads) of this process that drove the pairs (``PairLoops``).
    public var pairLoops: Int
    public var pairDevicesConnected: Int
    public var pairConnectSeconds: Double
    public var warmupSeconds: Double
    public var measuredSeconds: Double
    public var setupsCompleted: Int
    public var setupsPerSecond: Double
    public var commandsPerSecond: Double
    /// Every frame the benchmark's devices received, per second (results, events, pongs).
    public var eventsPerSecond: Double
    public var framesSentPerSecond: Double
    public var latencies: [StageFigures]
    public var accepted: Int
    public var rejectedByCode: [String: Int]
    public var rejectionExamples: [String: String]
    public var expectedRejections: Int
    public var errors: [String: Int]
    public var serverPID: Int32?
    public var serverRSSBeforeIdleKB: Int?
    public var serverRSSAfterIdleKB: Int?
    public var serverRSSEndKB: Int?
    public var memoryPerIdleConnectionKB: Double?
    /// Server CPU during the measured window, in cores (1.0 = one core busy).
    public var serverCPUCores: Double?
    /// This process's CPU during the measured window, in cores.
    public var clientCPUCores: Double?
    /// Share of the measured window the server's loop thread was runnable but not running
    /// (waiting for a CPU). Above ~0.1 the host, not the server, limits the figures.
    public var serverRunQueueWaitFraction: Double?
    /// 1-minute load average at the end of the window, and the host's CPU count.
    public var loadAverage: Double?
    public var cpus: Int
    public var notes: [String]
    /// Growth of the server's database (`switchboard_db_bytes_in_use` from its /metrics)
    /// over the measured window, per setup completed in it; nil if /metrics did not say.
    public var databaseBytesPerSetup: Double? = nil
    /// The whole host's busy CPU over the measured window, in cores: every process (server,
    /// benchmark, idle children, anything else) and the kernel's interrupt work (``HostCPU``).
    /// Near `cpus` the host is full, and the latencies include waiting for a CPU.
    public var hostCPUBusyCores: Double? = nil

    public var errorCount: Int { errors.values.reduce(0, +) }

    /// Server CPU time per complete setup in µs (server CPU over the measured window ÷
    /// setups in it): the figure that does not depend on how much CPU a shared host left
    /// the server, unlike setups/s. Nil without a server PID or without setups.
    public var serverCPUMicrosecondsPerSetup: Double? {
        guard let cores = serverCPUCores, setupsCompleted > 0, measuredSeconds > 0 else { return nil }
        return cores * measuredSeconds * 1_000_000 / Double(setupsCompleted)
    }

    /// This process's CPU time per complete setup in µs (the pair loops' share; idle devices
    /// in this process with `--idle-processes 0` are counted too).
    public var clientCPUMicrosecondsPerSetup: Double? {
        guard let cores = clientCPUCores, setupsCompleted > 0, measuredSeconds > 0 else { return nil }
        return cores * measuredSeconds * 1_000_000 / Double(setupsCompleted)
    }

    public func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    public var text: String {
        func f(_ x: Double, _ digits: Int = 1) -> String { String(format: "%.\(digits)f", x) }
        var out: [String] = []
        out.append("Switchboard signaling benchmark — \(url) — \(startedAt)")
        out.append("idle devices: \(idleConnected)/\(idleRequested) connected in \(f(idleConnectSeconds, 2)) s"
            + (idleFailed > 0 ? ", \(idleFailed) failed" : "")
            + (idleNotConnectedInTime > 0 ? ", \(idleNotConnectedInTime) not connected within the time bound" : "") + (idleDroppedDuringRun > 0 ? ", \(idleDroppedDuringRun) dropped" : ""))
        if idleProcesses > 0 {
            out.append("idle processes: \(idleProcesses), connect time per child: "
                + idleChildConnectSeconds.map { $0.map { f($0, 2) + " s" } ?? "not settled" }.joined(separator: ", "))
        }
        out.append("pairs: \(pairs) × (1 caller + \(calleeDevices) callee devices) on \(pairLoops) \(pairLoops == 1 ? "loop" : "loops"), \(pairDevicesConnected) pair devices connected in \(f(pairConnectSeconds, 2)) s")
        out.append("measured: \(f(measuredSeconds, 1)) s after \(f(warmupSeconds, 1)) s warm-up")
        out.append("")
        out.append("complete setups/s : \(f(setupsPerSecond))  (\(setupsCompleted) setups)")
        out.append("commands/s        : \(f(commandsPerSecond))")
        out.append("events/s received : \(f(eventsPerSecond))  (all frames; sent \(f(framesSentPerSecond))/s)")
        if let s = serverCPUCores { out.append("server CPU        : \(f(s, 2)) cores") }
        if let u = serverCPUMicrosecondsPerSetup { out.append("server CPU/setup  : \(f(u, 0)) µs") }
        if let c = clientCPUCores { out.append("benchmark CPU     : \(f(c, 2)) cores") }
        if let u = clientCPUMicrosecondsPerSetup { out.append("benchmark CPU/setup: \(f(u, 0)) µs") }
        if let c = idleChildrenCPUCores { out.append("idle children CPU : \(f(c, 2)) cores") }
        if let w = serverRunQueueWaitFraction { out.append("server loop waiting for a CPU: \(f(w * 100, 0)) % of the window") }
        if let h = hostCPUBusyCores { out.append("host CPU busy     : \(f(h, 2)) of \(cpus) cores (every process and the kernel)") }
        if let l = loadAverage { out.append("host load average : \(f(l, 2)) on \(cpus) CPUs") }
        out.append("")
        out.append("latency (ms)          count      p50      p95      p99      max")
        for figures in latencies {
            let l = figures.latency
            out.append(figures.stage.padding(toLength: 20, withPad: " ", startingAt: 0)
                + String(format: " %8d %8.2f %8.2f %8.2f %8.2f", l.count, l.p50, l.p95, l.p99, l.max))
        }
        out.append("")
        out.append("results: \(accepted) accepted, \(rejectedByCode.values.reduce(0, +)) rejected"
            + (rejectedByCode.isEmpty ? "" : " " + rejectedByCode.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))
            + " (\(expectedRejections) expected races)")
        for (code, example) in rejectionExamples.sorted(by: { $0.key < $1.key }) { out.append("  first \(code): \(example)") }
        out.append("errors: \(errorCount)" + (errors.isEmpty ? "" : " " + errors.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")))
        if let pid = serverPID {
            func kb(_ v: Int?) -> String { v.map { "\($0) KB" } ?? "?" }
            out.append("server pid \(pid) RSS: before idle \(kb(serverRSSBeforeIdleKB)), after idle \(kb(serverRSSAfterIdleKB)), end \(kb(serverRSSEndKB))")
        }
        if let m = memoryPerIdleConnectionKB { out.append("memory per idle connection: \(f(m)) KB") }
        if let b = databaseBytesPerSetup { out.append("database growth per setup: \(Int(b.rounded())) bytes (until retention purges)") }
        for note in notes { out.append("note: \(note)") }
        return out.joined(separator: "\n")
    }
}
