import IO
import Signaling

/// Heartbeats outside the storage batch.
///
/// Every device sends `ping` at least every 15 s (docs/protocol.md §1): 10,000 idle devices
/// make ~670 pings/s, and the benchmark's idle fleet sends each second's share in a burst.
/// In the batch, a burst of ~80 pings (parse, pong, send; ~40 µs each) sat in front of the
/// call frames that arrived with it, and their pongs waited for a COMMIT they have no part
/// in. A ping touches no storage and its pong acknowledges nothing durable, so pings of
/// authenticated connections go to their own queue, answered after each batch's sends for
/// at most ``pingBudget`` of CPU per loop pass: call frames go first, pings lag by a few
/// passes at most (against a 45 s idle timeout).
///
/// Safety of the test below: a frame that is short and names "ping" but is something else
/// still goes through `SignalingHub.received`, outside a batch; any step it commits is then
/// its own transaction, committed before its actions come back — the same contract.
extension SwitchboardServer {
    /// 64 bytes: `{"v":1,"type":"ping"}` is 21; a command carries an eventID and a callID.
    static let heartbeatMaxBytes = 64
    /// 1 ms of CPU per pass: a burst of ~80 pings takes about three passes, each after a batch.
    static let pingBudget = BatchCut(budgetMicroseconds: 1_000, maxFrames: 256)

    /// True for a frame answered outside the batch: a short frame naming `"ping"` from a
    /// connection whose `hello` was handled (before it, every frame goes in order through the
    /// batch, so a ping cannot overtake its connection's hello).
    func isHeartbeat(_ text: String, on id: ConnectionID) -> Bool {
        text.utf8.count <= Self.heartbeatMaxBytes && text.contains("\"ping\"") && hub.device(on: id) != nil
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
            actions += hub.received(frame.text, on: frame.connection, time: now())
            if Self.pingBudget.mayBeFull(frames: taken, wallElapsed: EventLoop.monotonicMicroseconds() - started),
               Self.pingBudget.isFull(frames: taken, startedAt: cpuStarted, now: BatchCut.threadCPUMicroseconds()) { break }
        }
        let received = pendingPings.prefix(taken).map(\.receivedAt)
        pendingPings.removeFirst(taken)
        carryOut(actions)
        timings.pings.record(Int64(taken))
        let done = EventLoop.monotonicMicroseconds()
        for receivedAt in received { commandTimes.record(done - receivedAt) }
    }
}
