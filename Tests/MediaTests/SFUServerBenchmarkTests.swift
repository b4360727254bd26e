import Foundation
import Glibc
import XCTest
@testable import Media

/// Forwarding benchmarks (skipped unless SWITCHBOARD_BENCH=1; run in release):
///   SWITCHBOARD_BENCH=1 swift test -c release --filter SFUServerBenchmarkTests
/// Members join one room over real DTLS-SRTP (GCM preferred, as with browsers); publishers
/// send SRTP whose payload carries the CLOCK_MONOTONIC send time; every member drains its
/// socket, unprotects and records receive − send (added forwarding latency, warm-up
/// excluded). The SFU loop runs pinned to CPU 0 and the load generator to CPU 1, so the
/// wall-clock rate is what one core forwards. Prints forwarded SRTP packets/s (wall), the
/// loop thread's CPU per forward (CLOCK_THREAD_CPUTIME_ID; on loopback it also pays the
/// kernel's delivery into the receivers' sockets), forwards per CPU-second and latency
/// p50/p99/max. Sizes: SWITCHBOARD_BENCH_PUBLISHERS (4), SWITCHBOARD_BENCH_SUBSCRIBERS (16),
/// SWITCHBOARD_BENCH_CYCLES (625 measured send cycles).
final class SFUServerBenchmarkTests: XCTestCase {
    static func env(_ name: String, _ fallback: Int) -> Int {
        ProcessInfo.processInfo.environment[name].flatMap(Int.init) ?? fallback
    }

    func skipUnlessBenchmark() throws {
        guard ProcessInfo.processInfo.environment["SWITCHBOARD_BENCH"] == "1" else {
            throw XCTSkip("benchmark: set SWITCHBOARD_BENCH=1 (and use -c release)")
        }
    }

    func baseConfig() -> ForwardingBench.Config {
        var config = ForwardingBench.Config()
        config.publishers = Self.env("SWITCHBOARD_BENCH_PUBLISHERS", 4)
        config.subscribers = Self.env("SWITCHBOARD_BENCH_SUBSCRIBERS", 16)
        config.cycles = Self.env("SWITCHBOARD_BENCH_CYCLES", 625)
        return config
    }

    func measure(_ config: ForwardingBench.Config) throws -> ForwardingBench.Result {
        let bench = try ForwardingBench(config)
        defer { bench.stop() }
        try bench.setUp()
        let result = try bench.run()
        XCTAssertEqual(result.forwardErrors, 0)
        XCTAssertGreaterThan(result.forwarded, 0)
        return result
    }

    static func f(_ value: Double, _ digits: Int = 0) -> String { String(format: "%.\(digits)f", value) }

    static func describe(_ r: ForwardingBench.Result) -> String {
        """
              sent \(r.sent) datagrams incl. warm-up, measured inputs \(r.inputs), forwarded \(r.forwarded), resent \(r.retransmitted), send drops \(r.sendDrops), \
        forward errors \(r.forwardErrors)\(r.pinned ? "" : " (NOT pinned: fewer than 2 CPUs)")
              wall \(f(r.wall, 3)) s → \(f(r.forwardsPerSecond)) forwarded SRTP packets/s, \(f(r.retransmissionsPerSecond)) resends/s
              server thread CPU \(f(r.cpuNanoseconds / 1e9, 3)) s → \(f(r.cpuMicrosecondsPerSend, 2)) µs per packet sent \
        → \(f(r.forwardsPerCPUSecond)) forwards per CPU-second; \
        loop thread waited \(f(r.loopRunQueueWaitNanoseconds / 1e9, 3)) s runnable for its core (shared host)
              added latency (send → receiver after SRTP, \(r.latencies.count) samples): p50 \(f(r.latency(50), 1)) µs, \
        p99 \(f(r.latency(99), 1)) µs, max \(f(r.latency(100), 1)) µs
        """
    }

    /// Issue 3: audio-only fan-out (every input to N−1+M receivers), 160-byte payloads. First
    /// closed-loop at saturation (throughput), then paced at half the inputs/s it reached,
    /// one datagram at a time (added latency below capacity, without the input queue).
    func testForwardingThroughput() throws {
        try skipUnlessBenchmark()
        var config = baseConfig()
        let result = try measure(config)
        config.pacedDatagramsPerSecond = Double(result.inputs) / result.wall / 2
        config.cycles = max(config.cycles / 4, 20)
        let paced = try measure(config)
        print("""
            SFU forwarding benchmark (\(result.profile), \(config.publishers) publishers × \
            \(config.publishers - 1 + config.subscribers) receivers each, \(config.subscribers) receive-only subscribers, \
            \(config.audioPayload)-byte payloads, loop on CPU 0, generator on CPU 1):
            saturation (closed loop, ≤ \(config.window) datagrams ahead of the server):
            \(Self.describe(result))
            paced at \(Self.f(config.pacedDatagramsPerSecond)) inputs/s (half of the above), one datagram at a time:
            \(Self.describe(paced))
            """)
    }

    /// Issue 4: publishers send audio + 3 simulcast layers (1/2/4 packets per cycle, 800-byte
    /// video payloads); subscriber i receives layer i mod 3. Run without loss, then with
    /// every member dropping 5 % of RTP (seeded) and NACKing it (RTX back for video, the
    /// original for audio); prints both and the cost of repair.
    func testForwardingWithLossAndSimulcast() throws {
        try skipUnlessBenchmark()
        var config = baseConfig()
        config.simulcast = true
        config.cycles = Self.env("SWITCHBOARD_BENCH_CYCLES", 1_250)
        let lossless = try measure(config)
        config.lossRate = Double(Self.env("SWITCHBOARD_BENCH_LOSS_PERMILLE", 50)) / 1_000
        config.seed = 7
        let lossy = try measure(config)
        let residual = Double(lossy.residual) / Double(max(lossy.expected, 1))
        let dropped = Double(lossy.simulatedDrops) / Double(max(lossy.expected, 1))
        print("""
            SFU simulcast benchmark (\(lossless.profile), \(config.publishers) publishers with audio + 3 VP8 layers, \
            \(config.subscribers) subscribers on layers i mod 3, loop on CPU 0, generator on CPU 1):
            lossless:
            \(Self.describe(lossless))
            \(Self.f(config.lossRate * 100, 1)) % loss at every member + generic NACK:
            \(Self.describe(lossy))
                  members dropped \(lossy.simulatedDrops) RTP datagrams (\(Self.f(dropped * 100, 2)) % of \(lossy.expected) expected), \
            NACKed \(lossy.nackedSequenceNumbers) sequence numbers, received \(lossy.repairsReceived) repairs; \
            residual loss after repair \(lossy.residual) (\(Self.f(residual * 100, 3)) %)
                  lossy/lossless: forwards per CPU-second \(Self.f(lossy.forwardsPerCPUSecond / lossless.forwardsPerCPUSecond * 100, 1)) %, \
            wall packets/s \(Self.f(lossy.forwardsPerSecond / lossless.forwardsPerSecond * 100, 1)) % (issue target: repair costs ≤ 20 %)
            """)
        XCTAssertGreaterThan(lossy.retransmitted, 0)
    }

    static func residentKilobytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE))) / 1024
    }

    /// Server-only memory: members joined (ICE session, DTLS endpoint, router state, track)
    /// without a client behind them.
    func testMemoryPerJoinedMember() throws {
        try skipUnlessBenchmark()
        let server = try SFUServer(configuration: MediaConfiguration(host: "127.0.0.1", port: 0))
        server.start()
        defer { server.stop() }
        let idleCount = 200
        let rssBeforeIdle = Self.residentKilobytes()
        for index in 0..<idleCount {
            let ghost = try SyntheticClient("ghost\(index)/d", serverPort: server.port)
            _ = try server.joinSync(room: "idle\(index % 20)", member: ghost.member, offer: ghost.offer()).get()
        }
        let idleKB = Double(Self.residentKilobytes() - rssBeforeIdle) / Double(idleCount)
        for index in 0..<idleCount { _ = server.leaveSync(member: MemberID("ghost\(index)/d")!) }
        print("SFU memory: \(Self.f(idleKB, 1)) KB RSS per joined (not connected) member, server only")
    }
}
