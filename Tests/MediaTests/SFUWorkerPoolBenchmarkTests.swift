import Foundation
import Glibc
import XCTest
@testable import Media

/// Worker-pool forwarding benchmark (skipped unless SWITCHBOARD_BENCH=1; run in release):
///   SWITCHBOARD_BENCH=1 swift test -c release --filter SFUWorkerPoolBenchmarkTests
/// SWITCHBOARD_BENCH_WORKERS workers (2) on one port, one room per worker, each with
/// SWITCHBOARD_BENCH_POOL_PUBLISHERS (2) publishers and SWITCHBOARD_BENCH_POOL_SUBSCRIBERS
/// (8) receive-only subscribers; SWITCHBOARD_BENCH_PACKETS (10000) pre-protected 160-byte
/// SRTP packets per publisher. The kernel hashes each member's flow to any worker, so part
/// of the input arrives at a non-owner and is handed over. Prints forwarded packets/s (wall),
/// the loops' total CPU per forward, and how many inputs were handed over.
final class SFUWorkerPoolBenchmarkTests: XCTestCase {
    func testPoolForwardingThroughput() throws {
        guard ProcessInfo.processInfo.environment["SWITCHBOARD_BENCH"] == "1" else {
            throw XCTSkip("benchmark: set SWITCHBOARD_BENCH=1 (and use -c release)")
        }
        let workers = SFUServerBenchmarkTests.env("SWITCHBOARD_BENCH_WORKERS", 2)
        let publishers = SFUServerBenchmarkTests.env("SWITCHBOARD_BENCH_POOL_PUBLISHERS", 2)
        let subscribers = SFUServerBenchmarkTests.env("SWITCHBOARD_BENCH_POOL_SUBSCRIBERS", 8)
        let packetsPerPublisher = SFUServerBenchmarkTests.env("SWITCHBOARD_BENCH_PACKETS", 10_000)
        let pool = try SFUWorkerPool(configuration: MediaConfiguration(host: "127.0.0.1", port: 0), workers: workers)
        let events = ServerEvents()
        events.attach(to: pool)
        pool.start()
        defer { pool.stop() }

        var pubs: [SyntheticClient] = []
        var everyone: [SyntheticClient] = []
        for room in 0..<pool.workers.count {
            var joined: [SyntheticClient] = []
            for index in 0..<(publishers + subscribers) {
                let publisher = index < publishers
                let client = try SyntheticClient("r\(room)\(publisher ? "pub" : "sub")\(index)/d", serverPort: pool.port)
                let answer = try pool.joinSync(room: "bench\(room)", member: client.member,
                                               offer: client.offer(direction: publisher ? "sendonly" : "recvonly")).get()
                try client.accept(serverDescription: answer.sdp)
                try client.sendCheck(now: MediaLoop.monotonicMilliseconds())
                XCTAssertTrue(try drive([client] + joined) { client.checkAnswered })
                try client.startDTLS(now: MediaLoop.monotonicMilliseconds())
                XCTAssertTrue(try drive([client] + joined) { client.srtp != nil && events.hasJoined(client.member) })
                joined.append(client)
                if publisher { pubs.append(client) }
            }
            everyone += joined
        }
        try settleOffers(everyone, server: pool, events: events)
        XCTAssertEqual(Set((0..<pool.workers.count).compactMap { pool.worker(ofRoom: "bench\($0)") }).count, pool.workers.count,
                       "one room per worker")

        let payload = [UInt8](repeating: 0xAB, count: 160)
        let packets = try pubs.map { pub in try (0..<packetsPerPublisher).map { _ in try pub.rtpPacket(payload: payload) } }
        for client in everyone { client.keepAlive = false }
        let fanOut = publishers - 1 + subscribers
        func datagramsIn() -> UInt64 { pool.workers.reduce(0) { $0 + $1.loop.counters.datagramsIn } }
        func datagramsOut() -> UInt64 { pool.workers.reduce(0) { $0 + $1.loop.counters.datagramsOut } }

        let start = pool.stats()
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
            // At most ~2,000 datagrams ahead of the workers (forwarding, not kernel drops).
            while sent - Int(datagramsIn() - start.total.loop.datagramsIn) > 2_000 { usleep(50) }
        }
        // Until everything left, or nothing moved for 300 ms (drops): the wall time ends at
        // the last datagram out, so drops do not stretch it.
        var lastOut = datagramsOut()
        var lastProgress = Date()
        while lastOut < start.total.loop.datagramsOut + UInt64(sent * fanOut), Date().timeIntervalSince(lastProgress) < 0.3 {
            usleep(1_000)
            let now = datagramsOut()
            if now != lastOut { lastOut = now; lastProgress = Date() }
        }
        let wall = lastProgress.timeIntervalSince(wallStart)
        let end = pool.stats()
        let forwarded = end.total.counters.forwarded - start.total.counters.forwarded
        let cpu = Double(end.total.loop.loopCPUNanoseconds - start.total.loop.loopCPUNanoseconds)
        let handoffs = end.handoffs - start.handoffs
        let perWorker = zip(end.workers, start.workers).map { $0.counters.forwarded - $1.counters.forwarded }
        print("""
            SFU worker pool benchmark (\(pool.workers.count) workers, one room each: \(publishers) publishers × \(fanOut) \
            receivers, 160-byte payloads):
              sent \(sent), forwarded \(forwarded) (expected \(sent * fanOut)), per worker \(perWorker), \
            handed over \(handoffs) (\(String(format: "%.0f", 100 * Double(handoffs) / Double(max(sent, 1)))) % of inputs), \
            handoff drops \(end.total.loop.handoffDrops - start.total.loop.handoffDrops), \
            send drops \(end.total.loop.sendDrops - start.total.loop.sendDrops)
              wall \(String(format: "%.3f", wall)) s → \(String(format: "%.0f", Double(forwarded) / wall)) forwarded SRTP packets/s
              loops' CPU \(String(format: "%.3f", cpu / 1e9)) s → \(String(format: "%.3f", cpu / 1e3 / Double(max(forwarded, 1)))) µs \
            per forwarded packet
            """)
        XCTAssertEqual(end.total.counters.forwardErrors, start.total.counters.forwardErrors)
        XCTAssertGreaterThan(forwarded, 0)
    }
}
