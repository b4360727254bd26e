import Auth
import CallCore
import Dispatch
import Foundation
import IO
import Logging
import Media
import Signaling
import Storage

/// The `serve` process: wires the SQLite store, the signaling hub and the libsoup HTTP /
/// WebSocket server onto one event loop. The only place where hub decisions become I/O.
public final class SwitchboardServer {
    public let config: ServerConfig
    let log: Logger
    let loop: EventLoop
    let store: SQLiteCallStore
    let hub: SignalingHub
    var http: HTTPServer?
    var sockets: [ConnectionID: WebSocketConnection] = [:]
    var push: PushDispatcher?
    /// Rooms and SFU negotiation.
    var rooms: RoomCoordinator!
    /// The media plane (its own thread and UDP port); nil with `media.enabled = false`.
    var sfu: SFUWorkerPool?
    var tickTimer: TimerHandle?
    /// Signaling latency per frame (µs, received → its actions carried out), for /metrics.
    var commandTimes = LatencyWindow()
    /// Where frames wait on the loop (batch sizes, commit, sends, tick), for /metrics.
    var timings = HubTimings()
    /// After the hub: how long the shards take to write a batch's sends.
    let shardWrites = ShardWriteTimes()
    var pendingFrames = FrameQueue<PendingFrame>()
    /// Heartbeats of authenticated connections, answered after each batch (``answerPings()``).
    var pendingPings = FrameQueue<PendingFrame>()
    /// Connections whose pings their shard answers (``handHeartbeatsToShards(_:)``).
    var heartbeatsOnShard: Set<ConnectionID> = []
    /// When a batch stops taking frames (elapsed work time, then count).
    var batchCut = BatchCut()
    /// When the next retention chunk runs.
    var purgeRounds = PurgeRounds()
    var flushScheduled = false

    struct PendingFrame {
        let connection: ConnectionID
        let text: String
        /// Parsed by the shard that read it (nil: the hub parses it).
        let prepared: PreparedFrame?
        let receivedAt: Int64
    }

    public init(config: ServerConfig, log: Logger) throws {
        self.config = config
        self.log = log
        loop = EventLoop(name: "signaling")
        store = try SQLiteCallStore(path: config.database.path,
                                    synchronous: config.database.synchronous == .full ? .full : .normal)
        let secret = try config.resolveTokenSecret()
        hub = SignalingHub(store: store, tokens: TokenSigner(secret: secret), turn: config.makeTURNCredentialIssuer(),
                           config: HubConfig(config), log: log.withSubsystem("signaling"))
        if config.media.enabled {
            let media = try config.media.sfuConfiguration()
            do {
                sfu = try SFUWorkerPool(configuration: media, workers: config.media.workerCount)
            } catch let error as UDPSocketError {
                throw StartError.mediaSocket(host: media.host, port: media.port, error)
            }
        }
        rooms = RoomCoordinator(loop: loop, hub: hub, media: sfu.map(SFUMediaPlane.init), log: log.withSubsystem("rooms"),
                                disconnectGraceMs: config.limits.idleTimeout.milliseconds)
        rooms.send = { [unowned self] connection, text in sockets[connection]?.send(text: text) }
        hub.lastFrameElsewhere = { [unowned self] id in sockets[id]?.lastLocallyHandledMilliseconds ?? 0 }
        rooms.carryOut = { [unowned self] actions in carryOut(actions) }
        rooms.push = { [unowned self] request in push?.enqueue(request) }
        if let url = config.push.webhookURL, !url.isEmpty {
            push = PushDispatcher(url: url, client: HTTPClient(loop: loop), attempts: config.push.attempts,
                                  backoffMs: config.push.backoff.milliseconds, capMs: config.push.backoffCap.milliseconds,
                                  loop: loop, log: log.withSubsystem("push"))
        }
    }

    /// Binds the port and starts serving on the calling thread until SIGINT/SIGTERM.
    public func run() throws -> Int32 {
        _ = raiseFileDescriptorLimit()
        let server = try HTTPServer(loop: loop, host: config.http.host, port: config.http.port,
                                    shards: config.http.shards)
        http = server
        installRoutes(on: server)
        let maxMessageBytes = hub.config.maxMessageBytes
        server.webSocket(path: "/v1/ws", maxIncomingPayload: hub.config.hardFrameLimit + 1, delegate: self,
                         prepare: { SignalingHub.prepare($0, maxMessageBytes: maxMessageBytes) })
        for sig in [SIGINT, SIGTERM] {
            loop.onSignal(sig) { [unowned self] in shutdown(signal: sig) }
        }
        loop.execute { [self] in
            // Deadlines that came due while the server was down fire now (call-design §4 case 14).
            carryOut(hub.tick(time: now()))
            scheduleTick()
        }
        if let sfu {
            sfu.start()
            log.info("media listening", ["host": .string(config.media.host), "port": .int(Int64(sfu.port)),
                                         "workers": .int(Int64(sfu.workers.count)), "fingerprint": .string(sfu.fingerprint)])
        }
        log.info("listening", ["host": .string(config.http.host), "port": .int(Int64(server.boundPort)),
                               "database": .string(config.database.path), "pid": .int(Int64(getpid())),
                               // False only if something initialized SQLite first: correct, but COMMITs
                               // then walk the whole page cache after B-tree swaps (docs/benchmarks.md).
                               "sqlitePageCacheWrapper": .bool(SQLitePageCache.isInstalled),
                               "allocator": .string(ProcessAllocator.name)])
        loop.run()
        log.info("stopped", [:])
        return 0
    }

    private func shutdown(signal: Int32) {
        log.info("shutting down", ["signal": .int(Int64(signal))])
        tickTimer?.cancel()
        http?.stop()
        sfu?.stop()
        store.close()
        loop.stop()
    }

    func now() -> HubTime {
        HubTime(wall: EventLoop.wallClockMilliseconds(), mono: EventLoop.monotonicMilliseconds())
    }

    /// 200 ms: deadline granularity well under the shortest configured timeout (seconds),
    /// and cheap (one indexed query) when nothing is due. Each tick also runs at most one
    /// bounded retention chunk (``purgeIfDue(time:)``).
    private func scheduleTick() {
        let dueAt = EventLoop.monotonicMicroseconds() + 200_000
        tickTimer = loop.schedule(afterMilliseconds: 200) { [weak self] in
            guard let self else { return }
            let started = EventLoop.monotonicMicroseconds()
            self.timings.tickLateness.record(max(0, started - dueAt))
            // Not while a RESTART checkpoint holds the write lock (see flushFrames): the
            // deadlines fire at the next tick, 200 ms on.
            if !self.store.isCheckpointRestarting {
                self.carryOut(self.inBatch(connections: { [] }) { self.hub.tick(time: self.now()) })
                self.timings.tick.record(EventLoop.monotonicMicroseconds() - started)
                self.purgeIfDue(time: self.now())
            }
            self.scheduleTick()
        }
    }

    /// Group commit: the frames that arrived while the loop was busy are handled in one
    /// storage transaction, and nothing (no ack, no delivery) leaves before it commits.
    /// Under light load a batch holds one frame; under load the per-commit cost is shared,
    /// and ``BatchCut`` ends a batch after ~5 ms of the thread's CPU time so that no frame
    /// waits behind a long one (the rest go first into the next batch). Heartbeats go after
    /// the batch's sends, outside it (``answerPings()``).
    func flushFrames() {
        flushScheduled = false
        if !pendingFrames.isEmpty {
            // A RESTART checkpoint holds the write lock: BEGIN would sleep in SQLite's busy
            // handler. Answer pings, then look again in a millisecond.
            if store.isCheckpointRestarting {
                if !pendingPings.isEmpty { answerPings() }
                deferBatch()
                return
            }
            runBatch()
        }
        if !pendingPings.isEmpty { answerPings() }
        if !pendingFrames.isEmpty || !pendingPings.isEmpty {
            flushScheduled = true
            loop.execute { [weak self] in self?.flushFrames() }
        }
    }

    /// 1 ms: a RESTART holds the lock for a copy and two `fsync`s (ms to 100+ ms measured);
    /// polling a flag this often costs nothing next to that.
    private func deferBatch() {
        timings.deferredForCheckpoint += 1
        flushScheduled = true
        loop.schedule(afterMilliseconds: 1) { [weak self] in self?.flushFrames() }
    }

    /// One storage batch from the front of `pendingFrames`.
    private func runBatch() {
        let started = EventLoop.monotonicMicroseconds()
        var taken = 0
        var bodyStarted = started, bodyEnded = started
        let actions = inBatch(connections: { pendingFrames.prefix(taken).map(\.connection) }) {
            bodyStarted = EventLoop.monotonicMicroseconds()
            let cpuStarted = BatchCut.threadCPUMicroseconds()
            var actions: [HubAction] = []
            while taken < pendingFrames.count {
                let frame = pendingFrames[taken]
                taken += 1
                timings.frameWait.record(EventLoop.monotonicMicroseconds() - frame.receivedAt)
                actions += hub.received(frame.text, prepared: frame.prepared, on: frame.connection, time: now())
                // The thread's CPU clock is a system call; it is read only once the wall
                // time alone could have used the budget (``BatchCut/mayBeFull``).
                let elapsed = EventLoop.monotonicMicroseconds() - bodyStarted
                if batchCut.mayBeFull(frames: taken, wallElapsed: elapsed),
                   batchCut.isFull(frames: taken, startedAt: cpuStarted, now: BatchCut.threadCPUMicroseconds()) { break }
            }
            purgeInBatch(frames: taken, time: now())
            bodyEnded = EventLoop.monotonicMicroseconds()
            return actions
        }
        // Arrival times only: a slice would keep the queue's storage shared and make its
        // compaction copy it.
        let received = pendingFrames.prefix(taken).map(\.receivedAt)
        let connections = pendingFrames.prefix(taken).map(\.connection)
        pendingFrames.removeFirst(taken)
        let committed = EventLoop.monotonicMicroseconds()
        timings.batchFrames.record(Int64(received.count))
        timings.batchWork.record(bodyEnded - bodyStarted)
        timings.begin.record(bodyStarted - started)
        timings.commit.record(committed - bodyEnded)
        carryOut(actions)
        handHeartbeatsToShards(connections)
        let done = EventLoop.monotonicMicroseconds()
        timings.carryOut.record(done - committed)
        for receivedAt in received { commandTimes.record(done - receivedAt) }
    }

    /// Runs hub work in one storage transaction. If the final commit fails, nothing was
    /// durable: the hub forgets its cached call states and the connections involved are
    /// closed, so their devices reconnect and retry with the same eventIDs.
    func inBatch(connections: () -> [ConnectionID], _ body: () -> [HubAction]) -> [HubAction] {
        do {
            return try store.batch(body)
        } catch {
            let connections = connections()
            log.error("batch commit failed", ["error": .string("\(error)"), "frames": .int(Int64(connections.count))])
            hub.discardCachedState()
            return Set(connections).map { .close($0, code: 1011, reason: "storage failure; reconnect and retry") }
        }
    }

    /// Carries out the hub's decisions, in order. Runs on the loop thread, after the batch's
    /// COMMIT.
    ///
    /// The sends and closes go through one ``WebSocketSendBatch``: each event loop that owns
    /// some of the connections (the hub's own loop with `http.shards = 1`, else the shard
    /// threads) gets ONE job with its part, run on that loop inside
    /// ``EventLoop/coalescingWebSocketWrites(_:)`` (each connection context re-registered
    /// with epoll once) with every connection that gets at least
    /// ``WebSocketSendBatch/defaultCorkingMinimum`` frames corked, so that its frames leave in one TCP
    /// segment; before, with shards, every frame was its own `execute` on the shard and the
    /// cork and the coalescing ran on the hub thread, where nothing was written
    /// (docs/benchmarks.md, "Batched sends to shards"). Guarantees kept: frames leave in
    /// order per connection (a connection lives on one loop, a loop runs its jobs in FIFO
    /// order), nothing leaves before the COMMIT (the batch is built here, after it), and the
    /// bytes are the same. A `.media` action may make the room coordinator send frames
    /// itself, so the batch so far is submitted before it runs.
    func carryOut(_ actions: [HubAction]) {
        loop.coalescingWebSocketWrites {
            let writes = shardWrites
            var batch = WebSocketSendBatch(onPartWritten: { writes.record($0) })
            for action in actions {
                switch action {
                case .send(let id, let frame):
                    if let socket = sockets[id] { batch.send(utf8: frame.bytes, to: socket) }
                case .close(let id, let code, let reason):
                    if let socket = sockets[id] { batch.close(socket, code: code, reason: reason) }
                case .push(let request):
                    push?.enqueue(request)
                case .media(let request):
                    batch.submit()
                    rooms.handle(request)
                }
            }
            batch.submit()
        }
    }
}

extension SwitchboardServer: WebSocketServerDelegate {
    public func webSocketDidOpen(_ connection: WebSocketConnection, request: HTTPRequest) {
        sockets[connection.id] = connection
        hub.connectionOpened(connection.id, time: now())
    }

    public func webSocket(_ connection: WebSocketConnection, didReceiveText text: String) {
        webSocket(connection, didReceiveText: text, prepared: nil, readAtMicros: EventLoop.monotonicMicroseconds())
    }

    public func webSocket(_ connection: WebSocketConnection, didReceiveText text: String, prepared: (any Sendable)?,
                          readAtMicros: Int64) {
        let frame = PendingFrame(connection: connection.id, text: text, prepared: prepared as? PreparedFrame,
                                 receivedAt: EventLoop.monotonicMicroseconds())
        timings.handoff.record(max(0, frame.receivedAt - readAtMicros))
        if isHeartbeat(text, on: connection.id) {
            pendingPings.append(frame)
        } else {
            pendingFrames.append(frame)
        }
        if !flushScheduled {
            flushScheduled = true
            loop.execute { [weak self] in self?.flushFrames() }
        }
    }

    public func webSocket(_ connection: WebSocketConnection, didReceiveBinary data: Data) {
        carryOut([.close(connection.id, code: 1003, reason: "text frames only")])
    }

    public func webSocketDidClose(_ connection: WebSocketConnection, code: UInt16, reason: String) {
        sockets[connection.id] = nil
        heartbeatsOnShard.remove(connection.id)
        if let device = hub.device(on: connection.id) { rooms.deviceDisconnected(device) }
        hub.connectionClosed(connection.id, time: now())
    }
}

extension HubConfig {
    init(_ c: ServerConfig) {
        self.init(call: CallConfig(ringTimeout: c.calls.ring.milliseconds,
                                   inviteLifetime: c.calls.inviteLifetime.milliseconds,
                                   connectTimeout: c.calls.connect.milliseconds,
                                   reconnectTimeout: c.calls.reconnect.milliseconds,
                                   deliveryGrace: c.calls.deliveryGrace.milliseconds,
                                   candidateBufferLimit: c.limits.maxCandidatesPerCallAndDevice,
                                   tombstoneRetention: c.calls.tombstoneRetention.milliseconds),
                  maxMessageBytes: c.limits.maxMessageBytes,
                  commandsPerSecond: Double(c.limits.commandsPerSecond),
                  commandBurst: Double(c.limits.commandBurst),
                  heartbeatIntervalMs: c.limits.heartbeatInterval.milliseconds,
                  idleTimeoutMs: c.limits.idleTimeout.milliseconds,
                  maxDevicesPerAccount: c.limits.maxDevicesPerAccount,
                  mediaPolicy: {
                      switch c.callMediaPolicy {
                      case .client: return .clientChoice(default: .p2p)
                      case .p2p: return .always(.p2p)
                      case .sfu: return .always(.sfu)
                      }
                  }())
    }
}

extension Duration {
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}

extension SwitchboardServer {
    /// The `serve` subcommand's runner: logs JSON lines to stderr at the configured level.
    public static func serve(_ config: ServerConfig) -> Int32 {
        let log = Logger(subsystem: "server", sink: .stderr, minimumLevel: config.logLevel)
        do {
            return try SwitchboardServer(config: config, log: log).run()
        } catch {
            log.error("cannot start", ["error": .string("\(error)")])
            FileHandle.standardError.write(Data("switchboard: cannot start: \(error)\n".utf8))
            return 1
        }
    }
}
