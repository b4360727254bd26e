import Foundation
#if canImport(Storage)
import Storage
#endif

/// Replays the store traffic of complete call setups as the signaling hub produces it, for the
/// storage benchmark (`SQLiteBenchmarkTests.testSetupReplay`, or a standalone `swiftc -O`
/// build of this file with Sources/Storage, see docs/benchmarks.md).
///
/// One setup = 12 commands and 25 deliveries, the shape of `scripts/bench-signaling.sh`'s
/// call: caller account with 3 devices (d0 places the call), callee account with 3 devices.
///   1. invite: insert (state ~0.6 KB, descriptions 4 KB offer), 4 KB `call.incoming` to the
///      3 callee devices, 0.3 KB to the caller's 2 other devices, ring deadline (5 deliveries);
///      the hub's reads around it: `devices(of:)` ×2, `activeCalls(involving:)`;
///   2–4. ringing from each callee device: 0.3 KB to the caller device (3);
///   5. answer from b0: descriptions += 3.5 KB answer, 3.5 KB to d0, 0.3 KB to d1, d2, b1, b2,
///      ring deadline cancelled (5);
///   6–11. 6 ICE candidates alternating, 0.4 KB to the other side's active device (6);
///   12. hangup from d0: terminal, 0.3 KB to b0 and the 2 other devices of each side plus d0
///      (6 deliveries).
/// Each command records its eventID with a ~150-byte result. `inFlight` setups run
/// interleaved, `stepsPerBatch` steps share one `batch`, and once a setup has ended its 6
/// devices acknowledge everything they received (cumulative acks, as the bench's devices
/// send them; those ack every 8 setups, this replay after every one).
struct SetupReplay {
    var setups: Int
    var inFlight = 8
    var stepsPerBatch = 8
    var pairs = 20
    /// Every op (step, the reads before an invite, a setup's acks) in a batch of its own, as
    /// the server runs them at low load (one frame per loop turn); `stepsPerBatch` is then
    /// ignored.
    var everyOpAlone = false
    /// Called after each batch with the labels of the ops in it (`invite`, `ringing`,
    /// `answer`, `candidate`, `hangup`, `reads`, `acks`), outside the measurement's batches.
    var afterBatch: ((_ labels: [String]) throws -> Void)?

    struct Figures {
        var setups: Int
        var steps: Int
        var batches: Int
        var cpuMicroseconds: Double
        var walBytes: Int64
        var microsecondsPerSetup: Double { cpuMicroseconds / Double(setups) }
        var walBytesPerSetup: Double { Double(walBytes) / Double(setups) }
    }

    /// One unit of work in the interleaving: a step (commit) or the reads before an invite.
    private enum Op {
        case reads(callee: String, caller: String)
        case step(StepCommit, label: String)
        case acks([StoredDeviceKey])

        var label: String {
            switch self {
            case .reads: return "reads"
            case .step(_, let label): return label
            case .acks: return "acks"
            }
        }
    }

    static func blob(_ size: Int, _ tag: UInt8) -> Data {
        Data((0..<size).map { 0x61 &+ UInt8(($0 &+ Int(tag)) % 26) })
    }

    private static func ops(setup: Int, pair: Int, start: Int64) -> [Op] {
        let id = "call-\(setup)-\(UUID().uuidString)"
        let caller = "caller-\(pair)", callee = "callee-\(pair)"
        let d = (0..<3).map { StoredDeviceKey(account: caller, device: "d\($0)") }
        let b = (0..<3).map { StoredDeviceKey(account: callee, device: "b\($0)") }
        let small = blob(300, UInt8(setup % 251))
        let incoming = blob(4_000, UInt8(setup % 249))
        let answerBody = blob(3_500, UInt8(setup % 247))
        let candidate = blob(400, UInt8(setup % 241))
        let state = blob(600, 1)
        var revision: Int64 = 0
        var time = start
        var ops: [Op] = [.reads(callee: callee, caller: caller)]
        func step(_ label: String, from sender: StoredDeviceKey, descriptions: Data? = nil, terminal: Bool = false,
                  outbox: [(StoredDeviceKey, Data)], set: [Deadline] = [], cancel: [(callID: String, kind: String)] = []) {
            time += 7
            let expected = revision == 0 ? nil : revision
            revision += 1
            var call = StoredCall(callID: id, revision: revision, state: state, isTerminal: terminal,
                                  participants: [caller, callee], createdAt: start, updatedAt: time)
            if let descriptions { call.descriptions = descriptions }
            ops.append(.step(StepCommit(
                callID: id, expectedRevision: expected, call: call,
                processedEvent: ProcessedEvent(account: sender.account, device: sender.device,
                                               eventID: UUID().uuidString, payloadHash: "h\(revision)",
                                               result: blob(150, UInt8(revision)), processedAt: time),
                outbox: outbox, setDeadlines: set, cancelDeadlines: cancel, now: time,
                descriptionsChanged: descriptions != nil), label: label))
        }
        let offer = blob(4_000, 7)
        step("invite", from: d[0], descriptions: offer,
             outbox: b.map { ($0, incoming) } + [(d[1], small), (d[2], small)],
             set: [Deadline(callID: id, kind: "ring", dueAt: start + 60_000)])
        for device in b { step("ringing", from: device, outbox: [(d[0], small)]) }
        step("answer", from: b[0], descriptions: offer + answerBody,
             outbox: [(d[0], answerBody), (d[1], small), (d[2], small), (b[1], small), (b[2], small)],
             cancel: [(id, "ring")])
        for index in 0..<6 {
            let (from, to) = index % 2 == 0 ? (d[0], b[0]) : (b[0], d[0])
            step("candidate", from: from, outbox: [(to, candidate)])
        }
        step("hangup", from: d[0], descriptions: Data(), terminal: true,
             outbox: [(b[0], small), (b[1], small), (b[2], small), (d[1], small), (d[2], small), (d[0], small)])
        ops.append(.acks(d + b))
        return ops
    }

    /// Runs the replay against `store` (whose WAL is at `walPath`, not checkpointed meanwhile)
    /// and returns CPU time of this thread and WAL growth.
    func run(store: SQLiteCallStore, walPath: String) throws -> Figures {
        // Built before the measurement: only the store's work is timed.
        var pending = (0..<setups).map { Self.ops(setup: $0, pair: $0 % pairs, start: Int64(1_000_000 + $0 * 100)) }
        pending.reverse()
        var queues: [[Op]] = []
        var next = 0
        var steps = 0, batches = 0
        var received: [StoredDeviceKey: Int64] = [:]
        var carriedLane = 0
        let walBefore = Self.fileSize(walPath)
        let cpuBefore = Self.threadCPUMicroseconds()
        while next < setups || !queues.isEmpty {
            while queues.count < inFlight && next < setups {
                queues.append(pending.removeLast())
                next += 1
            }
            var labels: [String] = []
            try store.batch {
                var done = 0
                // Alone, ops rotate over the setups in flight across batches, as when each
                // loop turn takes the next frame of whichever client sent one.
                var lane = everyOpAlone ? carriedLane : 0
                defer { carriedLane = lane }
                while done < stepsPerBatch && !queues.isEmpty && !(everyOpAlone && !labels.isEmpty) {
                    lane %= queues.count
                    let op = queues[lane].removeFirst()
                    labels.append(op.label)
                    switch op {
                    case .reads(let callee, let caller):
                        _ = try store.devices(of: callee)
                        _ = try store.devices(of: caller)
                        _ = try store.activeCalls(involving: callee)
                    case .step(let commit, _):
                        for entry in try store.commit(commit) {
                            received[entry.device] = max(received[entry.device] ?? 0, entry.seq)
                        }
                        steps += 1
                        done += 1
                    case .acks(let devices):
                        for device in devices {
                            try store.acknowledge(device: device, upTo: received[device] ?? 0)
                        }
                    }
                    if queues[lane].isEmpty { queues.remove(at: lane) } else { lane += 1 }
                }
            }
            batches += 1
            try afterBatch?(labels)
        }
        let cpu = Self.threadCPUMicroseconds() - cpuBefore
        return Figures(setups: setups, steps: steps, batches: batches, cpuMicroseconds: cpu,
                       walBytes: Self.fileSize(walPath) - walBefore)
    }

    /// Registers the devices of every pair (as their hello does), outside the measurement.
    func registerDevices(in store: SQLiteCallStore) throws {
        for pair in 0..<pairs {
            for index in 0..<3 {
                try store.registerDevice(StoredDeviceKey(account: "caller-\(pair)", device: "d\(index)"), now: 1)
                try store.registerDevice(StoredDeviceKey(account: "callee-\(pair)", device: "b\(index)"), now: 1)
            }
        }
    }

    static func fileSize(_ path: String) -> Int64 {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.int64Value ?? 0
    }

    /// User + system CPU of the calling thread (getrusage(RUSAGE_THREAD)).
    static func threadCPUMicroseconds() -> Double {
        var usage = rusage()
        // RUSAGE_THREAD (1, Linux) is not exported to Swift without _GNU_SOURCE.
        getrusage(__rusage_who_t(1), &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e6
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec)
    }
}
