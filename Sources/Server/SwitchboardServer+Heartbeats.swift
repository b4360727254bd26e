import Foundation
import IO
import Signaling
import Synchronization

/// Heartbeats outside the storage batch, and off the hub thread.
///
/// Every device sends `ping` at least every 15 s (docs/protocol.md §1): 10,000 idle devices
/// make ~670 pings/s. A ping touches no storage and its pong acknowledges nothing durable.
///
/// - Once a connection's `hello` is handled, its shard thread answers its pings itself
///   (``answerOnShard(_:_:)``, installed as the connection's
///   ``WebSocketConnection/localTextHandler`` by ``handHeartbeatsToShards(_:)``): before, each
///   ping crossed to the hub thread and its pong crossed back, and a burst of pings (the
///   benchmark's idle fleet sends each second's share at once) sat on the hub in front of
///   call frames (docs/benchmarks.md, "Heartbeats on the shards"). The hub's idle check
///   reads when the shard last answered one (``SignalingHub/lastFrameElsewhere``).
/// - Pings that still reach the hub (sent before the handler is installed) go to their own
///   queue, answered after each batch's sends for at most ``pingBudget`` of CPU per loop
///   pass: call frames go first.
///
/// Safety of the test below: a frame that is short and names "ping" but is something else
/// still goes through `SignalingHub.received`, outside a batch; any step it commits is then
/// its own transaction, committed before its actions come back — the same contract.
extension SwitchboardServer {
    /// 64 bytes: `{"v":1,"type":"ping"}` is 21; a command carries an eventID and a callID.
    static let heartbeatMaxBytes = 64
    /// 1 ms of CPU per pass: a burst of ~80 pings takes about three passes, each after a batch.
    static let pingBudget = BatchCut(budgetMicroseconds: 1_000, maxFrames: 256)

    /// Pongs sent by shard threads (``answerOnShard(_:_:)``), for /metrics.
    static let pongsOnShards = Atomic<Int>(0)

    /// A shard thread's answer to a ping of an authenticated connection; false (the frame
    /// goes on to the hub) for anything else, including a malformed ping, which gets the
    /// hub's typed error. Runs on the connection's loop thread.
    static func answerOnShard(_ connection: WebSocketConnection, _ text: String, maxBytes: Int) -> Bool {
        guard text.utf8.count <= min(heartbeatMaxBytes, maxBytes), namesPing(text),
              case .success(.ping) = ClientMessage.parse(text) else { return false }
        connection.send(utf8: SignalingHub.pong(serverTime: EventLoop.wallClockMilliseconds()).bytes)
        pongsOnShards.add(1, ordering: .relaxed)
        return true
    }

    /// True when `text` holds `"ping"` (quotes included). A byte search of the (short) frame
    /// with `memchr` for the opening quote and `memcmp` for the rest. Not
    /// `String.contains(_:)`, which goes through Foundation's `CFStringFind` on Linux (~1 % of
    /// a shard thread's CPU with 10,000 idle devices), nor the standard library's generic
    /// `firstRange(of:)`, which took 5.4 % of a shard thread's samples answering those
    /// devices' pings (docs/benchmarks.md, "WAL frames in one write").
    static func namesPing(_ text: String) -> Bool {
        var text = text  // withUTF8 is mutating: a native string is not copied
        return text.withUTF8 { bytes in
            guard let base = bytes.baseAddress, bytes.count >= pingNeedle.count else { return false }
            let needleCount = pingNeedle.count
            var offset = 0
            while offset + needleCount <= bytes.count {
                guard let quote = memchr(base + offset, 0x22, bytes.count - offset - needleCount + 1) else { return false }
                let at = base.distance(to: quote.assumingMemoryBound(to: UInt8.self))
                if pingNeedle.withUnsafeBufferPointer({ memcmp(base + at, $0.baseAddress!, needleCount) }) == 0 { return true }
                offset = at + 1
            }
            return false
        }
    }

    private static let pingNeedle: [UInt8] = Array("\"ping\"".utf8)

    /// After a batch: the connections among `ids` whose `hello` the hub has handled get
    /// their pings answered by their shard from now on. The handler is installed by a job
    /// on the shard's loop, queued after the batch's sends (``carryOut(_:)``), so no pong
    /// can overtake the `welcome`.
    func handHeartbeatsToShards<S: Sequence>(_ ids: S) where S.Element == ConnectionID {
        for id in ids where !heartbeatsOnShard.contains(id) {
            guard hub.device(on: id) != nil, let socket = sockets[id] else { continue }
            heartbeatsOnShard.insert(id)
            let maxBytes = hub.config.maxMessageBytes
            socket.loop.execute {
                socket.localTextHandler = { connection, text in Self.answerOnShard(connection, text, maxBytes: maxBytes) }
            }
        }
    }

    /// True for a frame answered outside the batch: a short frame naming `"ping"` from a
    /// connection whose `hello` was handled (before it, every frame goes in order through the
    /// batch, so a ping cannot overtake its connection's hello).
    func isHeartbeat(_ text: String, on id: ConnectionID) -> Bool {
        text.utf8.count <= Self.heartbeatMaxBytes && Self.namesPing(text) && hub.device(on: id) != nil
    }

    /// Answers queued pings, oldest first, for up to ``pingBudget`` of the thread's CPU.
    func answerPings() {
        let started = EventLoop.monotonicMicroseconds()
        let cpuStarted = BatchCut.threadCPUMicroseconds()
        var taken = 0
        var actions: [HubAction] = []
        while taken < pendingPings.count {
            let frame = pendingPings[taken]
            taken += 1
            actions += hub.received(frame.text, prepared: frame.prepared, on: frame.connection, time: now())
            if Self.pingBudget.mayBeFull(frames: taken, wallElapsed: EventLoop.monotonicMicroseconds() - started),
               Self.pingBudget.isFull(frames: taken, startedAt: cpuStarted, now: BatchCut.threadCPUMicroseconds()) { break }
        }
        let received = pendingPings.prefix(taken).map(\.receivedAt)
        let connections = pendingPings.prefix(taken).map(\.connection)
        pendingPings.removeFirst(taken)
        carryOut(actions)
        handHeartbeatsToShards(connections)
        timings.pings.record(Int64(taken))
        let done = EventLoop.monotonicMicroseconds()
        for receivedAt in received { commandTimes.record(done - receivedAt) }
    }
}
