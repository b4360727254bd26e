import Auth
import Foundation
import IO

/// Where the benchmark's idle devices live: in this process (``InProcessIdleDevices``, one
/// GLib context for all of them) or spread over child processes (``ChildProcessIdleDevices``).
/// Called from the orchestrating thread only.
protocol IdleDevices: AnyObject {
    /// Starts connecting and blocks until every device is welcomed or failed, or `seconds`
    /// pass. True when all settled.
    func connect(boundSeconds: Double) -> Bool
    var connected: Int { get }
    var failed: Int { get }
    var dropped: Int { get }
    var errors: [String: Int] { get }
    /// Frames counted by in-process devices (children's pings are not counted).
    var counts: BenchMetrics.Counts { get }
    /// Child processes (empty in-process) and each child's connect time (nil: not settled).
    var childPIDs: [pid_t] { get }
    var childConnectSeconds: [Double?] { get }
    /// Closes every device (and ends the children); notes what went wrong.
    func stop() -> [String]
}

/// Today's fleet: every idle device on one event loop of this process.
final class InProcessIdleDevices: IdleDevices {
    let loop = EventLoop(name: "bench-idle")
    let metrics = BenchMetrics()
    private let fleet: IdleFleet
    private let heartbeat: Heartbeat
    private let total: Int

    init(total: Int, url: String, rate: Int, token: @escaping (String) -> String) {
        self.total = total
        let loop = loop, metrics = metrics
        fleet = IdleFleet(loop: loop, metrics: metrics, url: url, total: total, rate: rate) { k in
            BenchDevice(account: "bench-i-\(k)", device: "d0", token: token("bench-i-\(k)"), loop: loop, metrics: metrics)
        }
        let fleet = fleet
        heartbeat = Heartbeat(loop: loop) { fleet.devices }
        loop.start()
    }

    func connect(boundSeconds: Double) -> Bool {
        // Heartbeat from the first connection on: connecting 10,000 may take longer than
        // the server's 45 s idle timeout.
        loop.execute { [heartbeat] in heartbeat.start() }
        guard total > 0 else { return true }
        let settled = DispatchSemaphore(value: 0)
        // Not paced (``PollPacer``): the orchestrator reads this fleet's counters through
        // the loop at the window's edges, and a paced loop would answer up to 1 s late.
        loop.execute { [fleet] in fleet.connectAll { settled.signal() } }
        if settled.wait(timeout: .now() + boundSeconds) == .success { return true }
        loop.execute { [fleet] in fleet.stopConnecting() }
        return false
    }

    private func on<T>(_ body: @escaping () -> T) -> T {
        let done = DispatchSemaphore(value: 0)
        var value: T?
        loop.execute { value = body(); done.signal() }
        done.wait()
        return value!
    }

    var connected: Int { on { [fleet] in fleet.connected } }
    var failed: Int { on { [fleet] in fleet.failed } }
    var dropped: Int { on { [fleet] in fleet.droppedAfterConnect } }
    var errors: [String: Int] { on { [metrics] in metrics.errors } }
    var counts: BenchMetrics.Counts { on { [metrics] in metrics.counts } }
    var childPIDs: [pid_t] { [] }
    var childConnectSeconds: [Double?] { [] }

    func stop() -> [String] {
        on { [heartbeat, fleet] in
            heartbeat.stop()
            fleet.closeAll()
        }
        // 1 s for the closing handshakes, so the server logs clean closes rather than resets.
        Thread.sleep(forTimeInterval: 1)
        loop.stop()
        return []
    }
}

/// The idle fleet spread over child processes (`switchboard bench idle-fleet`), each with
/// its own GLib context holding `idle / K` devices, so no client loop iterates all of them.
final class ChildProcessIdleDevices: IdleDevices {
    private let children: [IdleChildProcess]
    private let executable: String
    private let url: String
    private let rate: Int
    private let client: PairClient
    private let secret: [UInt8]
    private var spawnNotes: [String] = []

    /// Splits `total` devices into `processes` contiguous ranges (the first `total % K` one larger).
    static func shares(total: Int, processes: Int) -> [(count: Int, offset: Int)] {
        let k = max(1, min(processes, total))
        var offset = 0
        return (0 ..< k).map { i in
            let count = total / k + (i < total % k ? 1 : 0)
            defer { offset += count }
            return (count, offset)
        }.filter { $0.count > 0 }
    }

    init(total: Int, processes: Int, url: String, rate: Int, client: PairClient = .lean, executable: String, secret: [UInt8]) {
        children = Self.shares(total: total, processes: processes).enumerated().map {
            IdleChildProcess(index: $0.offset, count: $0.element.count, offset: $0.element.offset)
        }
        self.executable = executable
        self.url = url
        self.rate = rate
        self.client = client
        self.secret = secret
    }

    func connect(boundSeconds: Double) -> Bool {
        let k = max(1, children.count)
        // The connect rate and the handshakes in flight are the fleet's, split over the
        // children (the in-flight bound keeps all of them below the server's listen backlog).
        let rate = max(1, self.rate / k)
        let inFlight = max(1, ConnectThrottle.defaultMaxInFlight / k)
        for child in children {
            do throws(IdleChildSpawnError) {
                try child.spawn(executable: executable, url: url, connectRate: rate, maxInFlight: inFlight, client: client,
                                secret: secret)
            } catch {
                spawnNotes.append("idle child \(child.index) did not start: \(error)")
            }
        }
        let deadline = Date(timeIntervalSinceNow: boundSeconds)
        while Date() < deadline {
            let statuses = children.map(\.status)
            if statuses.allSatisfy({ $0.latest?.settled == true || $0.outputClosed || $0.protocolError != nil }) { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return children.map(\.status).allSatisfy { $0.latest?.settled == true }
    }

    private var latest: [IdleChildMessage] { children.compactMap { $0.status.latest } }
    var connected: Int { latest.reduce(0) { $0 + $1.connected } }
    var failed: Int { latest.reduce(0) { $0 + $1.failed } }
    var dropped: Int { latest.reduce(0) { $0 + $1.dropped } }
    var errors: [String: Int] {
        var all: [String: Int] = [:]
        for message in latest { for (key, value) in message.errors { all[key, default: 0] += value } }
        return all
    }
    var counts: BenchMetrics.Counts { BenchMetrics.Counts() }
    var childPIDs: [pid_t] { children.map(\.pid).filter { $0 > 0 } }
    var childConnectSeconds: [Double?] { children.map { $0.status.latest?.connectSeconds } }

    func stop() -> [String] {
        var notes = spawnNotes
        for child in children {
            let status = child.status
            if let error = status.protocolError { notes.append("idle child \(child.index): \(error)") }
            if status.outputClosed { notes.append("idle child \(child.index) exited before the end of the run") }
        }
        // Every child closes its devices at the same time: all stdins first, then reap each.
        children.forEach { $0.closeInput() }
        for child in children {
            let how = child.terminate()
            if how != "exit 0" { notes.append("idle child \(child.index) ended: \(how)") }
        }
        return notes
    }
}
