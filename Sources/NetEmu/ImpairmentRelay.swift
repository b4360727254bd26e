import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A UDP impairment relay: a small user-space NAT on loopback that peers reach instead of the
/// real endpoint (give a peer the relay's address as the server candidate, or put the relay in
/// front of a peer and give the server its address). It listens on one UDP port; each client
/// address gets its own upstream socket towards the target (so the target sees one distinct
/// source per client, like a NAT), and replies on that socket go back to the client.
///
/// Each direction has an `Impairment` (loss, Gilbert–Elliott loss, delay, jitter with or
/// without reordering, rate cap) changeable at run time from any thread, a seeded RNG
/// (reproducible decisions for a given arrival sequence), counters and a bounded log of what
/// was done to every datagram. The relay runs its own thread (poll(2) + a timer heap).
///
/// The kernel of the test machines has no netem (issue 4), hence this.
public final class ImpairmentRelay: @unchecked Sendable {
    /// Memory bounds.
    public struct Limits: Sendable {
        /// 64: a test room has a handful of peers; each mapping costs one socket.
        public var maxMappings: Int
        /// 50,000 datagrams / 32 MiB held for delay at once: 10 s at 5,000 packets/s; beyond
        /// that the relay drops (`relayBacklog`) rather than grow.
        public var maxDelayedPackets: Int
        public var maxDelayedBytes: Int
        /// 250,000 entries (~12 MB): a 20,000-packet test many times over; older entries are
        /// overwritten (counters stay exact).
        public var logCapacity: Int

        public init(maxMappings: Int = 64, maxDelayedPackets: Int = 50_000, maxDelayedBytes: Int = 32 << 20, logCapacity: Int = 250_000) {
            self.maxMappings = maxMappings
            self.maxDelayedPackets = maxDelayedPackets
            self.maxDelayedBytes = maxDelayedBytes
            self.logCapacity = logCapacity
        }
    }

    /// One NAT binding.
    public struct Mapping: Sendable, Equatable {
        public let clientPort: UInt16
        /// Source port the target sees for this client.
        public let upstreamPort: UInt16
    }

    /// CLOCK_MONOTONIC now, in nanoseconds (the clock of `createdAtNs` and the log).
    public static func monotonicNowNs() -> UInt64 { monotonicNanoseconds() }

    /// The port peers send to.
    public let port: UInt16
    public let targetPort: UInt16

    let limits: Limits
    let listenFD: Int32
    let target: sockaddr_in
    /// CLOCK_MONOTONIC (ns) at creation: log times are relative to it.
    public let createdAtNs: UInt64
    let wakeRead: Int32
    let wakeWrite: Int32

    // Guarded by `lock`: everything the API reads or writes.
    let lock = NSLock()
    var pipelines: [ImpairmentPipeline]
    var counterState = RelayCounters()
    var logRing: RelayLogRing
    var arrivals: [UInt64] = [0, 0]
    var mappingList: [Mapping] = []
    /// NAT rebindings asked for by `rebind(clientPort:)`, served by the relay thread.
    var rebindRequests: [RebindRequest] = []
    var state = RunState.created
    let stopped = DispatchSemaphore(value: 0)

    enum RunState { case created, running, stopping, stopped }

    // Owned by the relay thread.
    var mappingsByClient: [UInt64: (fd: Int32, client: sockaddr_in)] = [:]
    var clientByFD: [Int32: sockaddr_in] = [:]
    var delayQueue = DelayQueue()
    var sequence: UInt64 = 0
    /// Bumped whenever an upstream socket is opened or replaced, so the poll set is rebuilt.
    var socketsVersion: UInt64 = 0

    /// Creates the relay and binds its listening socket (so `port` is known before `start()`).
    /// - Parameters:
    ///   - targetHost, targetPort: where client datagrams go (IPv4, normally 127.0.0.1).
    ///   - listenHost, listenPort: where peers reach the relay; port 0 picks a free one.
    ///   - seed: RNG seed; the uplink and downlink draw from independent streams derived from it.
    public init(targetHost: String = "127.0.0.1", targetPort: UInt16, listenHost: String = "127.0.0.1", listenPort: UInt16 = 0,
                seed: UInt64 = 1, limits: Limits = Limits()) throws(NetEmuError) {
        target = try UDPSocket.address(targetHost, targetPort)
        let listenAddress = try UDPSocket.address(listenHost, listenPort)
        listenFD = try UDPSocket.bound(to: listenAddress)
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else {
            let e = errno
            close(listenFD)
            throw .socket("pipe", e)
        }
        for fd in fds { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        wakeRead = fds[0]
        wakeWrite = fds[1]
        port = UDPSocket.localPort(listenFD)
        self.targetPort = targetPort
        self.limits = limits
        createdAtNs = monotonicNanoseconds()
        pipelines = [ImpairmentPipeline(seed: seed), ImpairmentPipeline(seed: seed ^ 0xD0_3E_11_4B)]
        logRing = RelayLogRing(capacity: limits.logCapacity)
    }

    deinit { stop() }

    /// Starts the relay thread. Throws `notRestartable` if already started or stopped.
    public func start() throws(NetEmuError) {
        lock.lock()
        guard state == .created else { lock.unlock(); throw .notRestartable }
        state = .running
        lock.unlock()
        let thread = Thread { [self] in self.run() }
        thread.name = "NetEmu relay :\(port)"
        thread.start()
    }

    /// Stops the thread, discards delayed datagrams and closes all sockets. Idempotent.
    public func stop() {
        lock.lock()
        let wasRunning = state == .running
        let neverStarted = state == .created
        if wasRunning { state = .stopping }
        if neverStarted { state = .stopped }
        lock.unlock()
        if wasRunning {
            var byte: UInt8 = 1
            _ = write(wakeWrite, &byte, 1)
            stopped.wait()
        }
        if wasRunning || neverStarted {
            for fd in mappingsByClient.values.map(\.fd) { close(fd) }
            mappingsByClient.removeAll()
            clientByFD.removeAll()
            delayQueue.removeAll()
            close(listenFD)
            close(wakeRead)
            close(wakeWrite)
        }
    }

    /// Replaces one direction's impairment; takes effect for the next datagram that arrives
    /// (datagrams already delayed keep their times).
    public func setImpairment(direction: Direction, _ impairment: Impairment) throws(NetEmuError) {
        try impairment.validate()
        let now = monotonicNanoseconds()
        lock.lock()
        pipelines[direction.rawValue].update(impairment, now: now)
        lock.unlock()
    }

    /// The current impairment of one direction.
    public func impairment(direction: Direction) -> Impairment {
        lock.lock()
        defer { lock.unlock() }
        return pipelines[direction.rawValue].impairment
    }

    /// Totals so far (exact, independent of the log's capacity).
    public var counters: RelayCounters {
        lock.lock()
        defer { lock.unlock() }
        return counterState
    }

    /// A snapshot of the log, oldest first (the newest `Limits.logCapacity` entries).
    public var log: [RelayLogEntry] {
        lock.lock()
        defer { lock.unlock() }
        return logRing.ordered
    }

    /// Entries lost to the log's capacity bound.
    public var logOverwritten: UInt64 {
        lock.lock()
        defer { lock.unlock() }
        return logRing.overwritten
    }

    /// Empties the log (counters are kept).
    public func clearLog() {
        lock.lock()
        logRing.removeAll()
        lock.unlock()
    }

    /// Current NAT bindings, in creation order.
    public var mappings: [Mapping] {
        lock.lock()
        defer { lock.unlock() }
        return mappingList
    }
}
