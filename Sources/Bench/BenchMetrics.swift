/// The stages whose latency the benchmark reports.
enum Stage: String, CaseIterable {
    /// Command sent → its `result` received (business ack, includes the SQLite commit).
    case commandResult = "command→result"
    /// `call.invite` sent by the caller → `call.incoming` received, per callee device.
    case inviteIncoming = "invite→incoming"
    /// `call.answer` sent by the winning device → `call.answered` at the caller.
    case answerAnswered = "answer→answered"
    /// `ice.candidate` sent → received by the peer device.
    case candidateRelay = "candidate relay"
    /// `call.hangup` sent by the caller → `call.ended` at the callee.
    case hangupEnded = "hangup→ended"
    /// `call.invite` sent → `call.ended` received: one complete setup.
    case setup = "complete setup"
}

/// Counters and samples of one event loop. Only touched on that loop's thread.
final class BenchMetrics {
    var framesReceived = 0
    var framesSent = 0
    var commandsSent = 0
    var setupsCompleted = 0
    var accepted = 0
    var rejectedByCode: [String: Int] = [:]
    /// The first rejection of each code: which command and the server's message.
    var rejectionExamples: [String: String] = [:]
    var errors: [String: Int] = [:]
    /// Rejections the flow can legitimately produce (a loser's `call.ringing` arriving after
    /// the answer already moved the call on).
    var expectedRejections = 0
    /// Samples are only kept while measuring (after warm-up, before the drain).
    var measuring = false
    private(set) var latencies: [Stage: LatencyRecorder] = [:]

    func record(_ stage: Stage, _ micros: Int64) {
        guard measuring else { return }
        latencies[stage, default: LatencyRecorder()].record(micros)
    }

    func error(_ key: String) { errors[key, default: 0] += 1 }

    func resetSamples() {
        for key in latencies.keys { latencies[key]?.reset() }
    }

    /// Adds `other`'s counters, rejections, errors and latency samples to these (one
    /// benchmark's pair loops, ``PairLoops/merged()``). Call where both are safe to read.
    func absorb(_ other: BenchMetrics) {
        framesReceived += other.framesReceived
        framesSent += other.framesSent
        commandsSent += other.commandsSent
        setupsCompleted += other.setupsCompleted
        accepted += other.accepted
        expectedRejections += other.expectedRejections
        for (code, n) in other.rejectedByCode { rejectedByCode[code, default: 0] += n }
        for (code, example) in other.rejectionExamples where rejectionExamples[code] == nil { rejectionExamples[code] = example }
        for (key, n) in other.errors { errors[key, default: 0] += n }
        for (stage, recorder) in other.latencies { latencies[stage, default: LatencyRecorder()].absorb(recorder) }
    }

    /// The monotonic counters at one instant, for per-window rates.
    struct Counts {
        var framesReceived = 0, framesSent = 0, commandsSent = 0, setupsCompleted = 0
        static func - (a: Counts, b: Counts) -> Counts {
            Counts(framesReceived: a.framesReceived - b.framesReceived, framesSent: a.framesSent - b.framesSent,
                   commandsSent: a.commandsSent - b.commandsSent, setupsCompleted: a.setupsCompleted - b.setupsCompleted)
        }
        static func + (a: Counts, b: Counts) -> Counts {
            Counts(framesReceived: a.framesReceived + b.framesReceived, framesSent: a.framesSent + b.framesSent,
                   commandsSent: a.commandsSent + b.commandsSent, setupsCompleted: a.setupsCompleted + b.setupsCompleted)
        }
    }

    var counts: Counts {
        Counts(framesReceived: framesReceived, framesSent: framesSent, commandsSent: commandsSent,
               setupsCompleted: setupsCompleted)
    }
}
