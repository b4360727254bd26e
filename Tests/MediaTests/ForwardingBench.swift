import CAllocationCounter
import Foundation
import Glibc
@testable import Media
import SRTP
import XCTest

/// A forwarding benchmark room: the real `SFUServer` on 127.0.0.1, in-process synthetic
/// members (STUN checks, DTLS client, libsrtp2), the SFU loop pinned to CPU 0 and the load
/// generator (senders and receivers, one thread) to CPU 1 when there are two.
final class ForwardingBench {
    struct Config {
        var publishers = 4
        var subscribers = 16
        /// Send cycles measured; a cycle sends `audioBurst` audio packets per publisher
        /// (audio-only), or 1 audio + 1/2/4 packets on layers 0/1/2 (simulcast).
        var cycles = 625
        /// Unmeasured cycles first (caches, SRTP windows, keyframes).
        var warmupCycles = 60
        var simulcast = false
        var audioBurst = 16
        /// Share of RTP datagrams each member drops before SRTP (then NACKs them).
        var lossRate = 0.0
        var seed: UInt64 = 1
        var audioPayload = 160
        /// 800 bytes: a mid-size VP8 packet (full ones are ~1,100).
        var videoPayload = 800
        /// Datagrams the generator may be ahead of the server's receive counter: bounded so
        /// the server socket never overflows (we measure forwarding, not kernel drops).
        var window = 1_500
        /// 0: closed loop at saturation (throughput; latency then includes the server's input
        /// queue). > 0: one datagram at a time, evenly spaced at this many per second (latency
        /// at a load below capacity).
        var pacedDatagramsPerSecond = 0.0
    }

    struct Result {
        var profile: String
        var sent: Int
        var inputs: UInt64
        var forwarded: UInt64
        var retransmitted: UInt64
        var wall: Double
        var cpuNanoseconds: Double
        var latencies: [UInt32]
        var expected: UInt64
        var simulatedDrops: UInt64
        var residual: UInt64
        var repairsReceived: UInt64
        var nackedSequenceNumbers: UInt64
        var sendDrops: UInt64
        var forwardErrors: UInt64
        var pinned: Bool
        /// Time the loop thread waited runnable for its CPU (schedstat field 2): what other
        /// processes on this shared host took from the forwarding core.
        var loopRunQueueWaitNanoseconds: Double

        /// Nearest-rank percentile of the latency samples, in µs.
        func latency(_ percentile: Double) -> Double {
            guard !latencies.isEmpty else { return .nan }
            let sorted = latencies.sorted()
            let rank = min(sorted.count - 1, max(0, Int((percentile / 100 * Double(sorted.count)).rounded(.up)) - 1))
            return Double(sorted[rank]) / 1_000
        }

        var forwardsPerSecond: Double { Double(forwarded) / wall }
        var retransmissionsPerSecond: Double { Double(retransmitted) / wall }
        /// Server-thread CPU per packet sent to a subscriber (forwards and resends).
        var cpuMicrosecondsPerSend: Double { cpuNanoseconds / 1_000 / Double(max(forwarded + retransmitted, 1)) }
        /// First-time forwards per CPU-second of the server thread.
        var forwardsPerCPUSecond: Double { Double(forwarded) / (cpuNanoseconds / 1e9) }
    }

    let config: Config
    let server: SFUServer
    let events = ServerEvents()
    private(set) var publishers: [SyntheticClient] = []
    private(set) var members: [SyntheticClient] = []
    private var ssrcs: [PublishedSSRCs] = []
    private(set) var receivers: [BenchReceiver] = []
    let pinned: Bool
    let loopThreadID: Int32

    init(_ config: Config) throws {
        self.config = config
        // RFC 7675's 30 s consent timeout, or SWITCHBOARD_BENCH_CONSENT_TIMEOUT_MS: under callgrind
        // the set-up alone takes minutes without a consent check between some members' turns.
        let consent = ProcessInfo.processInfo.environment["SWITCHBOARD_BENCH_CONSENT_TIMEOUT_MS"].flatMap(Int64.init) ?? 30_000
        server = try SFUServer(configuration: MediaConfiguration(host: "127.0.0.1", port: 0, consentTimeoutMilliseconds: consent,
                                                                 ssrcSeed: config.seed))
        events.attach(to: server)
        server.start()
        // One core each: the loop on CPU 0, this (generator) thread on CPU 1.
        pinned = sb_allowed_cpu_count() >= 2
        loopThreadID = server.loop.sync { _ in sb_current_tid() }
        if pinned {
            let loopResult = server.loop.sync { _ in sb_pin_this_thread_to_cpu(0) }
            let ownResult = sb_pin_this_thread_to_cpu(1)
            guard loopResult == 0, ownResult == 0 else { throw BenchSetupError(reason: "affinity: \(loopResult) \(ownResult)") }
        }
    }

    func stop() {
        server.stop()
        if pinned { _ = sb_unpin_this_thread() }
    }

    /// Joins publishers then subscribers, answers the server's offers, pins subscribers'
    /// simulcast layers (subscriber i gets layer i mod 3 of every publisher), builds receivers.
    func setUp() throws {
        publishers = try (0..<config.publishers).map { try SyntheticClient("pub\($0)/d", serverPort: server.port) }
        let subscribers = try (0..<config.subscribers).map { try SyntheticClient("sub\($0)/d", serverPort: server.port) }
        ssrcs = publishers.map { PublishedSSRCs(audio: $0.ssrc, layers: config.simulcast ? 3 : 0) }
        var joined: [SyntheticClient] = []
        for (index, client) in (publishers + subscribers).enumerated() {
            let offer: String
            if index < publishers.count {
                offer = config.simulcast ? client.audioVideoOffer(ssrcs[index]) : client.offer(direction: "sendonly")
            } else {
                offer = client.offer(direction: "recvonly")
            }
            let answer = try server.joinSync(room: "bench", member: client.member, offer: offer).get()
            try client.accept(serverDescription: answer.sdp)
            try client.sendCheck(now: MediaLoop.monotonicMilliseconds())
            guard try drive([client] + joined, until: { client.checkAnswered }) else { throw BenchSetupError(reason: "no STUN answer") }
            try client.startDTLS(now: MediaLoop.monotonicMilliseconds())
            guard try drive([client] + joined, until: { client.srtp != nil && events.hasJoined(client.member) }) else {
                throw BenchSetupError(reason: "DTLS did not connect")
            }
            joined.append(client)
        }
        try settleOffers(joined, server: server, events: events)
        members = joined
        if config.simulcast {
            for (index, subscriber) in subscribers.enumerated() {
                for publisher in publishers {
                    try syncResult { done in
                        server.setTargetLayer(subscriber: subscriber.member, publisher: publisher.member, track: "1", layer: index % 3, completion: done)
                    }
                }
            }
        }
        for client in members { client.keepAlive = false }
        receivers = try members.enumerated().map { index, client in
            let tracks = try syncResult { done in server.receivedTracks(of: client.member, completion: done) }
            return try BenchReceiver(client: client, tracks: tracks, lossRate: config.lossRate, seed: config.seed &* 1_000 &+ UInt64(index))
        }
    }

    /// Sends warm-up then measured cycles, draining receivers between them; waits for the
    /// server to take every input, then (with loss) lets repairs finish for 0.6 s.
    func run() throws -> Result {
        let profile = members.first?.srtp?.profile.rawValue ?? "?"
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 2_048, alignment: 16)
        defer { scratch.deallocate() }
        let batches = publishers.map { _ in UDPSendBatch(capacity: 64, slotSize: 1_500) }
        var audio = ssrcs.indices.map { RTPStreamWriter(ssrc: publishers[$0].ssrc, payloadType: 111, timestampStep: 960) }
        var video = ssrcs.map { set in set.video.map { RTPStreamWriter(ssrc: $0, payloadType: 96, timestampStep: 3_000) } }
        let perCycle = config.simulcast ? 1 + 1 + 2 + 4 : config.audioBurst
        var latencies: [UInt32] = []
        latencies.reserveCapacity(config.cycles * perCycle * publishers.count * (members.count - 1) + 1_024)
        var measureFrom = UInt64.max
        var sent = 0
        var startStats = server.stats()
        var wallStart = Date()
        var waitStart = 0.0
        let inBase = server.loop.counters.datagramsIn
        let paced = config.pacedDatagramsPerSecond > 0
        let interval = paced ? UInt64(1e9 / config.pacedDatagramsPerSecond) : 0
        var nextSend = monotonicNanoseconds()

        // RFC 7675: without a consent check every few seconds the server drops a member after
        // 30 s; browsers send one every ~5 s, the generator every 2 s (counted as sent).
        var consentChecks = 0
        var lastConsent = MediaLoop.monotonicMilliseconds()
        func serviceReceivers() throws {
            let nowMilliseconds = MediaLoop.monotonicMilliseconds()
            if nowMilliseconds - lastConsent >= 2_000 {
                lastConsent = nowMilliseconds
                for member in members { try member.sendCheck(now: nowMilliseconds, nominate: false) }
                consentChecks += members.count
            }
            for receiver in receivers { receiver.drain(measureFrom: measureFrom, latencies: &latencies) }
            if config.lossRate > 0 {
                let now = monotonicNanoseconds()
                for receiver in receivers { try receiver.sendNACKs(now: now) }
            }
        }
        func nacksSent() -> UInt64 { receivers.reduce(0) { $0 + $1.nackPackets } }
        func backlog() -> Int { sent + consentChecks + Int(nacksSent()) - Int(server.loop.counters.datagramsIn - inBase) }

        for cycle in 0..<(config.warmupCycles + config.cycles) {
            if cycle == config.warmupCycles {
                // Measured part starts: everything before is warm-up.
                try serviceReceivers()
                while backlog() > 0 { try serviceReceivers(); usleep(100) }
                for receiver in receivers { receiver.resetLossCounters() }
                startStats = server.stats()
                waitStart = loopRunQueueWait()
                measureFrom = monotonicNanoseconds()
                wallStart = Date()
            }
            for (index, publisher) in publishers.enumerated() {
                guard let session = publisher.srtp else { throw BenchSetupError(reason: "publisher without SRTP") }
                func queue(_ length: Int) {
                    _ = batches[index].enqueue(UnsafeRawBufferPointer(rebasing: scratch[0..<length]), to: publisher.server, on: publisher.socket)
                    sent += 1
                    if paced { _ = batches[index].flush(on: publisher.socket) }
                }
                /// Paced: waits (servicing receivers) for the next send slot before the
                /// packet is written, so its send stamp is the time it leaves.
                func pace() throws {
                    guard paced else { return }
                    while monotonicNanoseconds() < nextSend { try serviceReceivers() }
                    nextSend = max(nextSend + interval, monotonicNanoseconds() - 10 * interval)
                }
                let audioCount = config.simulcast ? 1 : config.audioBurst
                for _ in 0..<audioCount {
                    try pace()
                    queue(try audio[index].write(into: scratch, payloadLength: config.audioPayload, session: session) {
                        BenchPayload.audio($0, stamp: monotonicNanoseconds())
                    })
                }
                for layer in video[index].indices {
                    for _ in 0..<(1 << layer) {
                        // A keyframe every 64 packets per layer (≈ every 2 s on the top layer at
                        // 30 fps), and at the start so each subscriber can switch to its layer.
                        let keyframe = video[index][layer].sequence % 64 == 0 || cycle < 2
                        try pace()
                        queue(try video[index][layer].write(into: scratch, payloadLength: config.videoPayload, session: session) {
                            BenchPayload.video($0, stamp: monotonicNanoseconds(), keyframe: keyframe)
                        })
                    }
                }
                _ = batches[index].flush(on: publisher.socket)
            }
            try serviceReceivers()
            while backlog() > config.window { try serviceReceivers() }
        }
        let deadline = Date().addingTimeInterval(30)
        while backlog() > 0, Date() < deadline { try serviceReceivers() }
        let wall = Date().timeIntervalSince(wallStart)
        let end = server.stats()
        let waited = loopRunQueueWait() - waitStart
        if config.lossRate > 0 {
            let tail = Date().addingTimeInterval(0.6)
            while Date() < tail { try serviceReceivers(); usleep(200) }
        } else {
            let tail = Date().addingTimeInterval(0.1)
            while Date() < tail { try serviceReceivers(); usleep(200) }
        }
        return Result(
            profile: profile, sent: sent, inputs: end.counters.rtpIn - startStats.counters.rtpIn,
            forwarded: end.counters.forwarded - startStats.counters.forwarded,
            retransmitted: end.counters.retransmitted - startStats.counters.retransmitted, wall: wall,
            cpuNanoseconds: Double(end.loop.loopCPUNanoseconds - startStats.loop.loopCPUNanoseconds), latencies: latencies,
            expected: receivers.reduce(0) { $0 + $1.expected }, simulatedDrops: receivers.reduce(0) { $0 + $1.simulatedDrops },
            residual: receivers.reduce(0) { $0 + $1.residualLoss }, repairsReceived: receivers.reduce(0) { $0 + $1.repairsReceived },
            nackedSequenceNumbers: receivers.reduce(0) { $0 + $1.nackedSequenceNumbers },
            sendDrops: end.loop.sendDrops - startStats.loop.sendDrops, forwardErrors: end.counters.forwardErrors, pinned: pinned,
            loopRunQueueWaitNanoseconds: waited)
    }

    /// Run-queue wait of the loop thread so far, ns (/proc/<pid>/task/<tid>/schedstat).
    func loopRunQueueWait() -> Double {
        guard let text = try? String(contentsOfFile: "/proc/self/task/\(loopThreadID)/schedstat", encoding: .utf8) else { return .nan }
        let fields = text.split(separator: " ")
        return fields.count > 1 ? Double(fields[1]) ?? .nan : .nan
    }

    /// Blocks on a completion-style SFUServer call.
    private func syncResult<T>(_ call: (@escaping (Swift.Result<T, SFUServerError>) -> Void) -> Void) throws -> T {
        let done = DispatchSemaphore(value: 0)
        var result: Swift.Result<T, SFUServerError> = .failure(.notRunning)
        call { value in result = value; done.signal() }
        done.wait()
        return try result.get()
    }
}
