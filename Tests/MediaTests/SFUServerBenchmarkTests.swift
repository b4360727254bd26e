import Foundation
import Glibc
import SRTP
import XCTest
@testable import Media

/// Forwarding benchmark (skipped unless SWITCHBOARD_BENCH=1; run in release):
///   SWITCHBOARD_BENCH=1 swift test -c release --filter SFUServerBenchmarkTests
/// N publishers and M receive-only subscribers join one room over real DTLS-SRTP (GCM
/// preferred, as with browsers); the publishers then blast pre-protected 160-byte Opus-sized
/// SRTP packets. Every input is forwarded to N−1+M members. Prints forwarded SRTP packets/s,
/// the server loop's CPU µs per forwarded packet (CLOCK_THREAD_CPUTIME_ID of the loop thread,
/// which on loopback also pays the kernel's delivery into the receiver's socket) and the
/// memory growth per participant. Sizes: SWITCHBOARD_BENCH_PUBLISHERS (4),
/// SWITCHBOARD_BENCH_SUBSCRIBERS (16), SWITCHBOARD_BENCH_PACKETS per publisher (10000).
final class SFUServerBenchmarkTests: XCTestCase {
    static func env(_ name: String, _ fallback: Int) -> Int {
        ProcessInfo.processInfo.environment[name].flatMap(Int.init) ?? fallback
    }

    static func residentKilobytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE))) / 1024
    }

    func testForwardingThroughput() throws {
        guard ProcessInfo.processInfo.environment["SWITCHBOARD_BENCH"] == "1" else {
            throw XCTSkip("benchmark: set SWITCHBOARD_BENCH=1 (and use -c release)")
        }
        let publishers = Self.env("SWITCHBOARD_BENCH_PUBLISHERS", 4)
        let subscribers = Self.env("SWITCHBOARD_BENCH_SUBSCRIBERS", 16)
        let packetsPerPublisher = Self.env("SWITCHBOARD_BENCH_PACKETS", 10_000)
        let server = try SFUServer(configuration: MediaConfiguration(host: "127.0.0.1", port: 0))
        let events = ServerEvents()
        events.attach(to: server)
        server.start()
        defer { server.stop() }

        // Server-only memory: members joined (ICE session, DTLS endpoint, router state, track)
        // without a client behind them.
        let idleCount = 200
        let rssBeforeIdle = Self.residentKilobytes()
        for index in 0..<idleCount {
            let ghost = try SyntheticClient("ghost\(index)/d", serverPort: server.port)
            _ = try server.joinSync(room: "idle\(index % 20)", member: ghost.member, offer: ghost.offer()).get()
        }
        let idleKB = Double(Self.residentKilobytes() - rssBeforeIdle) / Double(idleCount)
        for index in 0..<idleCount { _ = server.leaveSync(member: MemberID("ghost\(index)/d")!) }

        let rssBefore = Self.residentKilobytes()
        let pubs = try (0..<publishers).map { try SyntheticClient("pub\($0)/d", serverPort: server.port) }
        let subs = try (0..<subscribers).map { try SyntheticClient("sub\($0)/d", serverPort: server.port) }
        var joined: [SyntheticClient] = []
        for client in pubs + subs {
            let direction = pubs.contains { $0 === client } ? "sendonly" : "recvonly"
            let answer = try server.joinSync(room: "bench", member: client.member, offer: client.offer(direction: direction)).get()
            try client.accept(serverDescription: answer.sdp)
            try client.sendCheck(now: MediaLoop.monotonicMilliseconds())
            XCTAssertTrue(try drive([client] + joined) { client.checkAnswered })
            try client.startDTLS(now: MediaLoop.monotonicMilliseconds())
            XCTAssertTrue(try drive([client] + joined) { client.srtp != nil && events.hasJoined(client.member) })
            joined.append(client)
        }
        try settleOffers(joined, server: server, events: events)
        let connectedKB = Double(Self.residentKilobytes() - rssBefore) / Double(joined.count)
        let profile = try XCTUnwrap(pubs.first?.srtp?.profile)

        // Pre-protect the packets (the publishers' crypto is not what we measure).
        let payload = [UInt8](repeating: 0xAB, count: 160)
        var packets: [[[UInt8]]] = []
        for pub in pubs { packets.append(try (0..<packetsPerPublisher).map { _ in try pub.rtpPacket(payload: payload) }) }
        for client in joined { client.keepAlive = false }
        let fanOut = publishers - 1 + subscribers

        let start = server.stats()
        let wallStart = Date()
        let batch = UDPSendBatch(capacity: 64, slotSize: 512)
        var sent = 0
        for index in stride(from: 0, to: packetsPerPublisher, by: 16) {
            for (p, pub) in pubs.enumerated() {
                for packet in packets[p][index..<min(index + 16, packetsPerPublisher)] {
                    packet.withUnsafeBytes { _ = batch.enqueue($0, to: pub.server, on: pub.socket) }
                    sent += 1
                }
                batch.flush(on: pub.socket)
            }
            // Stay at most ~2,000 datagrams ahead of the server so its socket buffer never
            // overflows (we measure forwarding, not kernel drops).
            while sent - Int(server.loop.counters.datagramsIn - start.loop.datagramsIn) > 2_000 { usleep(50) }
        }
        let expected = start.counters.forwarded + UInt64(sent * fanOut)
        _ = try drive([], timeout: 10) { server.loop.counters.datagramsOut >= start.loop.datagramsOut + UInt64(sent * fanOut) }
        let wall = Date().timeIntervalSince(wallStart)
        let end = server.stats()
        let forwarded = end.counters.forwarded - start.counters.forwarded
        let cpu = Double(end.loop.loopCPUNanoseconds - start.loop.loopCPUNanoseconds)
        let inputs = end.counters.rtpIn - start.counters.rtpIn
        print("""
            SFU forwarding benchmark (\(profile.rawValue), \(publishers) publishers × \(fanOut) receivers each, \
            \(subscribers) receive-only subscribers, 160-byte payloads):
              inputs \(inputs) of \(sent) sent, forwarded \(forwarded) (expected \(expected - start.counters.forwarded)), \
            send drops \(end.loop.sendDrops - start.loop.sendDrops), errors \(end.counters.forwardErrors)
              wall \(String(format: "%.3f", wall)) s → \(String(format: "%.0f", Double(forwarded) / wall)) forwarded SRTP packets/s
              server loop CPU \(String(format: "%.3f", cpu / 1e9)) s → \(String(format: "%.3f", cpu / 1e3 / Double(max(forwarded, 1)))) µs per forwarded packet \
            → \(String(format: "%.0f", Double(forwarded) / (cpu / 1e9))) forwarded packets per CPU-second
              memory: \(String(format: "%.1f", idleKB)) KB RSS per joined (not connected) member, server only; \
            \(String(format: "%.1f", connectedKB)) KB RSS per connected member incl. its in-process synthetic client
            """)
        XCTAssertEqual(end.counters.forwardErrors, start.counters.forwardErrors)
        XCTAssertGreaterThan(forwarded, 0)
    }
}
