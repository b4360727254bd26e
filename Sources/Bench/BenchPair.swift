import Auth
import IO

/// One caller account and one callee account with several devices, running complete call
/// setups back to back (closed loop, docs/protocol.md §4–§5):
///
/// invite → every callee device gets `call.incoming` and sends `call.ringing` → device 0
/// answers with the revision it saw → the others get `call.stopRinging`, the caller gets
/// `call.answered` → each side trickles 2 candidates (generation 1) → each side sends
/// `call.mediaConnected` once it has the peer's candidates → the caller hangs up → the
/// callee gets `call.ended` → the next setup starts.
///
/// Runs on one event loop; every method is called on that loop's thread.
final class BenchPair {
    /// 2 candidates per side: host + server-reflexive, the usual first trickle.
    static let candidatesPerSide = 2
    /// Commands the busiest device sends per setup (caller: invite, 2 candidates,
    /// mediaConnected, hangup; the answering device: ringing, answer, 2 candidates,
    /// mediaConnected).
    static let commandsPerDevicePerSetup = 5

    /// Shortest time between two setup starts of this pair, so that no device exceeds the
    /// server's per-device command rate (`limits.commands_per_second`): a closed loop on a
    /// fast server would otherwise be `rateLimited`, which no real device provokes.
    static func minimumSetupIntervalMs(commandsPerSecond: Int64) -> Int64 {
        // 90 % of the limit: headroom for the token bucket's millisecond rounding.
        let rate = max(1, Double(commandsPerSecond) * 0.9)
        return Int64((Double(commandsPerDevicePerSetup) * 1000 / rate).rounded(.up))
    }

    let index: Int
    let caller: BenchDevice
    /// `callees[0]` is the device that answers.
    let callees: [BenchDevice]
    let metrics: BenchMetrics
    let loop: EventLoop
    let setupTimeoutMs: Int64
    /// When setups start (``SetupPacing``, its interval from
    /// ``minimumSetupIntervalMs(commandsPerSecond:)``); set before `start()`.
    var setupPacing = SetupPacing(intervalMs: 0)
    private var lastSetupStart: Int64 = 0
    /// Gap drawn at the last setup's start: the next one starts no earlier.
    private var nextGapMs: Int64 = 0
    private var random = SystemRandomNumberGenerator()
    private let calleeAccount: String
    private let callerUfrag: String
    private let calleeUfrag: String
    private let offerJSON: String
    private let answerJSON: String

    /// Set by the run: no new setup starts; `onStopped` fires when the pair is quiet.
    private(set) var stopping = false
    private(set) var stopped = false
    var onStopped: (() -> Void)?

    private var eventCounter = 0
    private var setupNumber = 0
    private var setup: SetupState?
    private var watchdog: TimerHandle?
    private var pacingTimer: TimerHandle?

    private enum Command { case invite, ringing(Int), answer, candidate(caller: Bool), mediaConnected(caller: Bool), hangup, cleanup }
    private struct Pending { let command: Command; let sentAt: Int64; let callID: String }
    /// Outstanding commands by eventID (results of abandoned setups are still matched).
    private var pending: [String: Pending] = [:]

    /// What one setup has seen so far.
    private struct SetupState {
        let callID: String
        let callIDBytes: [UInt8]
        let startedAt: Int64
        var inviteSentAt: Int64 = 0
        var revisionSeen: [Int64?]
        var incomingCount = 0
        var answerSentAt: Int64 = 0
        var answeredAtCaller = false
        var callerCandidatesSentAt: [Int64] = []
        var calleeCandidatesSentAt: [Int64] = []
        var candidatesAtCaller = 0
        var candidatesAtCallee = 0
        var callerMediaSent = false
        var calleeMediaSent = false
        var callerMediaAccepted = false
        var calleeMediaAccepted = false
        var hangupSentAt: Int64 = 0
        var hangupAccepted = false
        var endedAtCallee = false
        var stopRinging = 0
        var outstanding = 0
    }

    init(index: Int, caller: BenchDevice, callees: [BenchDevice], metrics: BenchMetrics, loop: EventLoop,
         setupTimeoutMs: Int64) {
        self.index = index
        self.caller = caller
        self.callees = callees
        self.metrics = metrics
        self.loop = loop
        self.setupTimeoutMs = setupTimeoutMs
        calleeAccount = callees.first?.account ?? ""
        callerUfrag = "bA\(index)x"
        calleeUfrag = "bB\(index)y"
        offerJSON = SessionDescriptions.jsonEscaped(SessionDescriptions.offer(ufrag: callerUfrag, sessionID: index * 2))
        answerJSON = SessionDescriptions.jsonEscaped(SessionDescriptions.answer(ufrag: calleeUfrag, sessionID: index * 2 + 1))
        // Strong captures, a cycle that `detach()` breaks: a weak reference would move the
        // pair's reference count to a side table for good, and every frame's retain and
        // release would take Swift's slow path (~5 % of the benchmark's CPU in perf).
        caller.onFrame = { [self] _, scan, _ in callerFrame(scan) }
        for (k, device) in callees.enumerated() {
            device.onFrame = { [self] _, scan, _ in calleeFrame(k, scan) }
        }
    }

    /// Breaks the cycle between the pair and its devices' `onFrame` (the run's end, after
    /// `stop()`); frames arriving later are dropped.
    func detach() {
        caller.onFrame = nil
        for device in callees { device.onFrame = nil }
    }

    static func now() -> Int64 { EventLoop.monotonicMicroseconds() }

    // MARK: Lifecycle

    func start() {
        let delay = setupPacing.firstDelayMs(using: &random)
        guard delay > 0 else { startSetup(); return }
        // Timers capture the pair strongly (see `init`): a pending timer holds it until it
        // fires or is cancelled.
        pacingTimer = loop.schedule(afterMilliseconds: delay) { [self] in
            pacingTimer = nil
            startSetup()
        }
    }

    func stop() {
        stopping = true
        pacingTimer?.cancel()
        pacingTimer = nil
        if setup == nil { finishStopping() }
    }

    private func finishStopping() {
        guard !stopped else { return }
        stopped = true
        watchdog?.cancel()
        caller.ackIfNeeded()
        for device in callees { device.ackIfNeeded() }
        onStopped?()
    }

    private func startSetup() {
        guard !stopping else { finishStopping(); return }
        let sinceLast = (Self.now() - lastSetupStart) / 1000
        if lastSetupStart > 0, sinceLast < nextGapMs {
            pacingTimer = loop.schedule(afterMilliseconds: nextGapMs - sinceLast) { [self] in
                pacingTimer = nil
                startSetup()
            }
            return
        }
        lastSetupStart = Self.now()
        nextGapMs = setupPacing.gapMs(using: &random)
        setupNumber += 1
        let callID = Self.timeOrderedID(wallMillis: EventLoop.wallClockMilliseconds(), pair: index, counter: setupNumber)
        var state = SetupState(callID: callID, callIDBytes: Array(callID.utf8), startedAt: Self.now(), revisionSeen: Array(repeating: nil, count: callees.count))
        state.inviteSentAt = state.startedAt
        setup = state
        send(.invite, from: caller, callID: callID,
             body: "\"type\":\"call.invite\",\"callID\":\"\(callID)\",\"callee\":\"\(calleeAccount)\",\"sdp\":\"\(offerJSON)\"")
        watchdog?.cancel()
        let number = setupNumber
        watchdog = loop.schedule(afterMilliseconds: setupTimeoutMs) { [self] in timedOut(setupNumber: number) }
    }

    private func completeIfDone() {
        guard let s = setup, s.hangupAccepted, s.endedAtCallee, s.stopRinging == callees.count - 1,
              s.outstanding == 0 else { return }
        watchdog?.cancel()
        watchdog = nil
        if metrics.measuring {
            metrics.setupsCompleted += 1
            metrics.record(.setup, Self.now() - s.startedAt)
        }
        setup = nil
        // Cumulative acks every 8 setups: real devices ack, and unacked outboxes would make
        // the next run replay them; every 8th keeps the extra writes small.
        if setupNumber % 8 == 0 {
            caller.ackIfNeeded()
            for device in callees { device.ackIfNeeded() }
        }
        startSetup()
    }

    private func timedOut(setupNumber number: Int) {
        guard number == setupNumber, let s = setup else { return }
        metrics.error("setupTimeout(\(missingStage(s)))")
        // Leave the server clean: end the abandoned call so the callee is not "busy".
        if s.answeredAtCaller || s.answerSentAt > 0 {
            send(.cleanup, from: caller, callID: s.callID, body: "\"type\":\"call.hangup\",\"callID\":\"\(s.callID)\"")
        } else {
            send(.cleanup, from: caller, callID: s.callID, body: "\"type\":\"call.cancel\",\"callID\":\"\(s.callID)\"")
        }
        setup = nil
        // 200 ms pause so a struggling server is not hammered by an instant retry.
        loop.schedule(afterMilliseconds: 200) { [self] in startSetup() }
    }

    private func missingStage(_ s: SetupState) -> String {
        if s.incomingCount < callees.count { return "incoming" }
        if !s.answeredAtCaller { return "answered" }
        if s.candidatesAtCaller < Self.candidatesPerSide || s.candidatesAtCallee < Self.candidatesPerSide { return "candidates" }
        if !s.hangupAccepted { return s.hangupSentAt > 0 ? "hangupResult" : "media" }
        if !s.endedAtCallee { return "ended" }
        if s.stopRinging < callees.count - 1 { return "stopRinging" }
        return "results"
    }

    // MARK: Commands

    private func send(_ command: Command, from device: BenchDevice, callID: String, body: String) {
        eventCounter += 1
        let eventID = Self.timeOrderedID(wallMillis: EventLoop.wallClockMilliseconds(), pair: index, counter: eventCounter)
        let sentAt = Self.now()
        pending[eventID] = Pending(command: command, sentAt: sentAt, callID: callID)
        if case .cleanup = command {} else { setup?.outstanding += 1 }
        metrics.commandsSent += 1
        device.send("{\"v\":1,\"eventID\":\"\(eventID)\"," + body + "}")
    }

    /// A command's eventID or a call's callID: the wall-clock time in milliseconds as 12 hex
    /// digits, then the pair and its command or setup counter (which make it unique, also
    /// across runs against the same database: a later run starts at a later millisecond;
    /// eventIDs are remembered 24 h, and a repeat would be answered `duplicate`).
    /// Time-ordered, as docs/protocol.md recommends to clients: the server's processed-event
    /// key starts with the eventID and its call tables with the callID, so the new rows of a
    /// batch land in the same index leaves (docs/benchmarks.md, "Time-ordered eventIDs" and
    /// "Time-ordered callIDs").
    static func timeOrderedID(wallMillis: Int64, pair: Int, counter: Int) -> String {
        TimeOrderedID.prefix(wallMillis: wallMillis) + "-\(pair)-\(counter)"
    }

    private func sendCandidates(from device: BenchDevice, isCaller: Bool, callID: String) {
        let ufrag = isCaller ? callerUfrag : calleeUfrag
        for n in 0 ..< Self.candidatesPerSide {
            let candidate = n == 0
                ? "candidate:\(n + 1) 1 udp 2122260223 192.0.2.\(index % 250 + 1) \(50_000 + n) typ host generation 0 ufrag \(ufrag)"
                : "candidate:\(n + 1) 1 udp 1686052607 198.51.100.\(index % 250 + 1) \(60_000 + n) typ srflx raddr 192.0.2.1 rport 50000 generation 0 ufrag \(ufrag)"
            let now = Self.now()
            if isCaller { setup?.callerCandidatesSentAt.append(now) } else { setup?.calleeCandidatesSentAt.append(now) }
            send(.candidate(caller: isCaller), from: device, callID: callID,
                 body: "\"type\":\"ice.candidate\",\"callID\":\"\(callID)\",\"generation\":1,\"candidate\":\"\(candidate)\",\"sdpMid\":\"0\",\"sdpMLineIndex\":0,\"ufrag\":\"\(ufrag)\"")
        }
    }

    private func result(_ scan: FrameScan) {
        guard let eventID = scan.string(Keys.eventID), let p = pending.removeValue(forKey: eventID) else {
            metrics.error("unmatchedResult")
            return
        }
        metrics.record(.commandResult, Self.now() - p.sentAt)
        let current = setup?.callID == p.callID
        if current { setup?.outstanding -= 1 }
        let accepted = scan.stringEquals(Keys.status, Self.acceptedStatus)
        if accepted {
            metrics.accepted += 1
        } else {
            let code = scan.string(Keys.code) ?? (scan.string(Keys.status) ?? "unknown")
            metrics.rejectedByCode[code, default: 0] += 1
            if metrics.rejectionExamples[code] == nil {
                metrics.rejectionExamples[code] = "\(Self.name(p.command)): \(scan.string(Keys.message) ?? "")"
            }
            if case .ringing(let k) = p.command, k > 0 {
                metrics.expectedRejections += 1  // a loser's ringing after the answer won
            } else if case .cleanup = p.command {
                metrics.expectedRejections += 1  // the abandoned call had ended meanwhile
            } else {
                metrics.error("rejected(\(Self.name(p.command)):\(code))")
            }
        }
        guard current, let s = setup else { return }
        switch p.command {
        case .ringing(0) where accepted:
            // The winner answers with the revision it saw in call.incoming (compare-and-set).
            guard let revision = s.revisionSeen[0] else { return }
            setup?.answerSentAt = Self.now()
            send(.answer, from: callees[0], callID: s.callID,
                 body: "\"type\":\"call.answer\",\"callID\":\"\(s.callID)\",\"revision\":\(revision),\"sdp\":\"\(answerJSON)\"")
        case .answer where accepted:
            sendCandidates(from: callees[0], isCaller: false, callID: s.callID)
        case .mediaConnected(let isCaller) where accepted:
            if isCaller { setup?.callerMediaAccepted = true } else { setup?.calleeMediaAccepted = true }
            if let s = setup, s.callerMediaAccepted, s.calleeMediaAccepted, s.hangupSentAt == 0 {
                setup?.hangupSentAt = Self.now()
                send(.hangup, from: caller, callID: s.callID, body: "\"type\":\"call.hangup\",\"callID\":\"\(s.callID)\"")
            }
        case .hangup where accepted:
            setup?.hangupAccepted = true
        default:
            break
        }
        completeIfDone()
    }

    // MARK: Frames

    private func callerFrame(_ scan: FrameScan) {
        if scan.stringEquals(Keys.type, Self.resultType) { result(scan); return }
        if scan.stringEquals(Keys.type, Self.errorType) { metrics.error("errorFrame(\(scan.string(Keys.code) ?? "?"))"); return }
        guard let s = setup, scan.stringEquals(Keys.callID, s.callIDBytes) else { return }
        if scan.stringEquals(Keys.type, Self.answeredType) {
            guard !s.answeredAtCaller else { return }
            setup?.answeredAtCaller = true
            if s.answerSentAt > 0 { metrics.record(.answerAnswered, Self.now() - s.answerSentAt) }
            sendCandidates(from: caller, isCaller: true, callID: s.callID)
        } else if scan.stringEquals(Keys.type, Self.candidateType) {
            let n = scan.count(Keys.candidate)
            let now = Self.now()
            for i in s.candidatesAtCaller ..< min(s.candidatesAtCaller + n, s.calleeCandidatesSentAt.count) {
                metrics.record(.candidateRelay, now - s.calleeCandidatesSentAt[i])
            }
            setup?.candidatesAtCaller += n
            if let s = setup, s.candidatesAtCaller >= Self.candidatesPerSide, !s.callerMediaSent {
                setup?.callerMediaSent = true
                send(.mediaConnected(caller: true), from: caller, callID: s.callID,
                     body: "\"type\":\"call.mediaConnected\",\"callID\":\"\(s.callID)\"")
            }
        }
        completeIfDone()
    }

    private func calleeFrame(_ k: Int, _ scan: FrameScan) {
        if scan.stringEquals(Keys.type, Self.resultType) { result(scan); return }
        if scan.stringEquals(Keys.type, Self.errorType) { metrics.error("errorFrame(\(scan.string(Keys.code) ?? "?"))"); return }
        guard let s = setup, scan.stringEquals(Keys.callID, s.callIDBytes) else { return }
        if scan.stringEquals(Keys.type, Self.incomingType) {
            guard s.revisionSeen[k] == nil else { return }
            setup?.revisionSeen[k] = scan.integer(Keys.revision) ?? 1
            setup?.incomingCount += 1
            metrics.record(.inviteIncoming, Self.now() - s.inviteSentAt)
            send(.ringing(k), from: callees[k], callID: s.callID,
                 body: "\"type\":\"call.ringing\",\"callID\":\"\(s.callID)\"")
        } else if scan.stringEquals(Keys.type, Self.stopRingingType) {
            setup?.stopRinging += 1
        } else if k == 0, scan.stringEquals(Keys.type, Self.candidateType) {
            let n = scan.count(Keys.candidate)
            let now = Self.now()
            for i in s.candidatesAtCallee ..< min(s.candidatesAtCallee + n, s.callerCandidatesSentAt.count) {
                metrics.record(.candidateRelay, now - s.callerCandidatesSentAt[i])
            }
            setup?.candidatesAtCallee += n
            if let s = setup, s.candidatesAtCallee >= Self.candidatesPerSide, !s.calleeMediaSent {
                setup?.calleeMediaSent = true
                send(.mediaConnected(caller: false), from: callees[0], callID: s.callID,
                     body: "\"type\":\"call.mediaConnected\",\"callID\":\"\(s.callID)\"")
            }
        } else if k == 0, scan.stringEquals(Keys.type, Self.endedType) {
            guard !s.endedAtCallee else { return }
            setup?.endedAtCallee = true
            if s.hangupSentAt > 0 { metrics.record(.hangupEnded, Self.now() - s.hangupSentAt) }
        }
        completeIfDone()
    }

    private static func name(_ command: Command) -> String {
        switch command {
        case .invite: return "call.invite"
        case .ringing: return "call.ringing"
        case .answer: return "call.answer"
        case .candidate: return "ice.candidate"
        case .mediaConnected: return "call.mediaConnected"
        case .hangup: return "call.hangup"
        case .cleanup: return "cleanup"
        }
    }

    private static let resultType = Array("result".utf8)
    private static let errorType = Array("error".utf8)
    private static let acceptedStatus = Array("accepted".utf8)
    private static let incomingType = Array("call.incoming".utf8)
    private static let answeredType = Array("call.answered".utf8)
    private static let stopRingingType = Array("call.stopRinging".utf8)
    private static let endedType = Array("call.ended".utf8)
    private static let candidateType = Array("ice.candidate".utf8)
}
