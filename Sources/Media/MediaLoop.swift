import Glibc
import ICE

/// The UDP socket loop that owns the media hot path on the one shared port.
///
/// Threading: one dedicated thread (`start`) runs poll(2) on the socket and a wake pipe,
/// receives in recvmmsg batches, demultiplexes (`PacketDemux.swift`), runs timers and
/// flushes queued sends with sendmmsg. Everything the loop owns — `ice`, the batches, the
/// handlers — is touched only on that thread; other threads talk to it with `perform`,
/// and read `counters` (a snapshot). Handlers run on the loop thread and may call `send`.
/// In an `SFUWorkerPool` several loops share the port (SO_REUSEPORT); datagrams another
/// worker owns are copied to its inbox and processed there (`MediaLoop+Handoff.swift`).
///
/// Allocation: the receive and send paths for DTLS/RTP/RTCP allocate nothing: datagrams
/// are views into the preallocated receive slots, the 5-tuple lookup hashes a
/// `SocketAddress` (plain words), handlers are stored closures, and `send` copies into a
/// preallocated send slot; a handoff to another worker copies into its preallocated inbox. STUN (a few checks per peer per second) is copied into an array
/// for the ICE agent; commands from `perform` allocate their closure.
public final class MediaLoop {
    /// A demultiplexed packet for a session: view valid only during the call.
    public typealias PacketHandler = (_ loop: MediaLoop, _ session: ICESessionID, _ bytes: UnsafeRawBufferPointer, _ now: Int64) -> Void

    /// DTLS record(s) (first byte 20–63) from a validated peer.
    public var onDTLS: PacketHandler = { _, _, _, _ in }
    /// RTP / SRTP (first byte 128–191, second byte outside 192–223; RFC 5761 §4).
    public var onRTP: PacketHandler = { _, _, _, _ in }
    /// RTCP / SRTCP (second byte 192–223).
    public var onRTCP: PacketHandler = { _, _, _, _ in }
    /// ICE events: validated checks, path changes, consent expiry, rejects.
    public var onICEEvent: (_ loop: MediaLoop, _ event: ICEEvent, _ now: Int64) -> Void = { _, _, _ in }
    /// Called at the deadline it last returned (and once at start); returns the next
    /// deadline (ms, monotonic), or nil for none. For DTLS retransmissions, RTCP reports…
    public var onTimer: (_ loop: MediaLoop, _ now: Int64) -> Int64? = { _, _ in nil }

    /// ICE consent is checked every second: RFC 7675's 30 s timeout needs no finer grain,
    /// and a 1 s tick keeps the O(sessions) scan off the per-packet path.
    public static let iceTickInterval: Int64 = 1_000
    /// poll never sleeps longer than this, so a deadline set from outside a handler is late
    /// by at most 1 s.
    static let maxSleep: Int64 = 1_000

    public let configuration: MediaLoopConfiguration
    /// Source address of the datagram being handled by `onDTLS` (loop thread only): DTLS
    /// replies before nomination must go back where the ClientHello came from, since
    /// `send(_:to: ICESessionID)` has no selected path yet.
    public internal(set) var currentSource: SocketAddress?
    /// Kernel arrival time (µs, CLOCK_MONOTONIC) of the datagram being handled by `onRTP` /
    /// `onRTCP`, nil when the socket gives none (loop thread only; `UDPReceiveBatch.arrivalMicros`).
    public internal(set) var currentArrivalMicros: Int64?
    public let socket: UDPSocket
    /// The ICE-lite agent: loop thread only (use `perform` to register sessions).
    public let ice = ICELiteAgent()
    let receiveBatch: UDPReceiveBatch
    let sendBatch: UDPSendBatch
    var stats = MediaLoopCounters()
    private let shared = MediaLoopMutex()
    private var commands: [(MediaLoop) -> Void] = []
    private var stopRequested = false
    private var publishedCounters = MediaLoopCounters()
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private var thread: pthread_t?
    /// A handler asked for `onTimer` at this deadline (ms) or earlier (`requestTimer`).
    var requestedTimerDeadline: Int64?
    /// The pool this loop is a worker of (`MediaLoop+Handoff.swift`); set before `start`,
    /// then read on the loop thread only. Nil for a lone loop.
    var group: MediaLoopGroup?
    /// This loop's index in `group`.
    var workerIndex = 0
    /// Per worker: datagrams were posted to its inbox in this receive batch (loop thread).
    var signalPending: [Bool] = []
    /// Addresses this loop claimed in the group's directory, per session (loop thread).
    var claimedAddresses: [ICESessionID: [SocketAddress]] = [:]

    public init(configuration: MediaLoopConfiguration = MediaLoopConfiguration()) throws(UDPSocketError) {
        self.configuration = configuration
        socket = try UDPSocket(host: configuration.host, port: configuration.port,
                               receiveBufferBytes: configuration.socketBufferBytes, sendBufferBytes: configuration.socketBufferBytes,
                               reusePort: configuration.reusePort)
        receiveBatch = UDPReceiveBatch(capacity: configuration.batchSize, slotSize: configuration.maxDatagramSize)
        sendBatch = UDPSendBatch(capacity: configuration.batchSize, slotSize: configuration.maxDatagramSize)
        UDPReceiveBatch.enableKernelTimestamps(on: socket)
        (wakeRead, wakeWrite) = try WakePipe.make()
    }

    deinit {
        stop()
        close(wakeRead)
        close(wakeWrite)
    }

    /// The bound address (real port when 0 was configured).
    public var localAddress: SocketAddress { socket.localAddress }

    /// The address to advertise in SDP candidates: `announcedHost`/`announcedPort` when
    /// set, else the bound address; nil when bound to a wildcard with nothing announced
    /// (a wildcard is no reachable candidate).
    public var announcedAddress: SocketAddress? {
        let port = configuration.announcedPort ?? localAddress.port
        if let host = configuration.announcedHost { return SocketAddress(host: host, port: port) }
        let wildcard = localAddress.family == .ipv4 ? localAddress.ipv4 == 0 : (localAddress.high == 0 && localAddress.low == 0)
        return wildcard ? nil : SocketAddress(ipv4OrIPv6Of: localAddress, port: port)
    }

    /// The ICE-lite host candidate for SDP (RFC 8839 §5.1), without "a=":
    /// "candidate:1 1 udp 2130706431 203.0.113.5 40000 typ host". Priority per RFC 8445
    /// §5.1.2.1 with type preference 126 (host), local preference 65535, component 1.
    public func candidateAttribute(foundation: String = "1") -> String? {
        guard let address = announcedAddress else { return nil }
        return "candidate:\(foundation) 1 udp 2130706431 \(address.host) \(address.port) typ host"
    }

    /// A snapshot of the counters (any thread).
    public var counters: MediaLoopCounters { shared.withLock { publishedCounters } }

    /// Runs `work` on the loop thread soon (any thread).
    public func perform(_ work: @escaping (MediaLoop) -> Void) {
        shared.withLock { commands.append(work) }
        wake()
    }

    /// Starts the loop thread (once).
    public func start() {
        guard thread == nil else { return }
        var handle = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        let result = pthread_create(&handle, nil, { context in
            let loop = Unmanaged<MediaLoop>.fromOpaque(context!).takeRetainedValue()
            loop.run()
            return nil
        }, context)
        if result == 0 { thread = handle } else { Unmanaged<MediaLoop>.fromOpaque(context).release() }
    }

    /// Stops and joins the loop thread (any thread but the loop's own).
    public func stop() {
        guard let handle = thread else { return }
        shared.withLock { stopRequested = true }
        wake()
        pthread_join(handle, nil)
        thread = nil
    }

    /// Queues `bytes` to `session`'s selected (nominated) address for the next sendmmsg.
    /// Loop thread only. False (and counted) without a selected path or when oversized.
    @discardableResult
    public func send(_ bytes: UnsafeRawBufferPointer, to session: ICESessionID) -> Bool {
        guard let address = ice.selectedAddress(of: session) else {
            stats.noPathDrops &+= 1
            return false
        }
        return send(bytes, to: address)
    }

    /// Queues `bytes` to `address` (e.g. a STUN reply or a DTLS flight to the address a
    /// ClientHello came from). Loop thread only.
    @discardableResult
    public func send(_ bytes: UnsafeRawBufferPointer, to address: SocketAddress) -> Bool {
        var result = sendBatch.enqueue(bytes, to: address, on: socket)
        if result == .full {
            flushSends()
            result = sendBatch.enqueue(bytes, to: address, on: socket)
        }
        switch result {
        case .queued:
            stats.bytesQueuedOut &+= UInt64(bytes.count)
            return true
        case .oversized: stats.oversizedDrops &+= 1
        case .unreachable, .full: stats.sendDrops &+= 1
        }
        return false
    }

    /// Runs `onTimer` at `deadline` (ms, monotonic) at the latest, earlier than the deadline it
    /// last returned (e.g. a handler queued packets for the pacer). Loop thread only.
    public func requestTimer(at deadline: Int64) {
        requestedTimerDeadline = min(requestedTimerDeadline ?? deadline, deadline)
    }

    /// `[UInt8]` convenience for `send(_:to:)` (control traffic).
    @discardableResult
    public func send(_ bytes: [UInt8], to session: ICESessionID) -> Bool {
        bytes.withUnsafeBytes { send($0, to: session) }
    }

    /// Monotonic clock in milliseconds (CLOCK_MONOTONIC): the `now` of the loop.
    public static func monotonicMilliseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1_000 + Int64(time.tv_nsec) / 1_000_000
    }

    func flushSends() {
        guard sendBatch.count > 0 else { return }
        let (sent, dropped) = sendBatch.flush(on: socket)
        stats.datagramsOut &+= UInt64(sent)
        stats.sendDrops &+= UInt64(dropped)
    }

    private func wake() {
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)  // EAGAIN when the pipe is full: already awake
    }

    /// Loop-thread side of the shared state: drains wakeups, takes commands and the stop flag.
    func takeCommands() -> (commands: [(MediaLoop) -> Void], stop: Bool) {
        var drain: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
        while withUnsafeMutableBytes(of: &drain, { read(wakeRead, $0.baseAddress, $0.count) }) > 0 {}
        return shared.withLock {
            let taken = commands
            commands.removeAll(keepingCapacity: true)
            return (taken, stopRequested)
        }
    }

    func publish() {
        var cpu = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu)
        stats.loopCPUNanoseconds = UInt64(cpu.tv_sec) * 1_000_000_000 + UInt64(cpu.tv_nsec)
        let snapshot = stats
        shared.withLock { publishedCounters = snapshot }
    }

    var wakeDescriptor: Int32 { wakeRead }
}

extension SocketAddress {
    /// Same host, another port.
    init(ipv4OrIPv6Of address: SocketAddress, port: UInt16) {
        if let v4 = address.ipv4 { self.init(ipv4: v4, port: port) } else { self.init(ipv6High: address.high, low: address.low, port: port) }
    }
}
