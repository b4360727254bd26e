import XCTest
@testable import NetEmu

/// Rate cap and run-time changes through the real relay.
final class RelayRateTests: XCTestCase {
    func testRateCapBehavesLikeABottleneck() throws {
        let server = try TestEndpoint()
        let client = try TestEndpoint()
        let relay = try ImpairmentRelay(targetPort: server.port)
        // 15,000-byte queue: at most 400 ms of queueing at 300 kbit/s.
        let cap = RateCap(bitsPerSecond: 300_000, burstBytes: 1500, queueLimitBytes: 15_000)
        try relay.setImpairment(direction: .uplink, Impairment(rate: cap))
        try relay.start()
        defer { relay.stop(); server.close(); client.close() }

        // 1200-byte datagrams every 9.6 ms = 1 Mbit/s offered, for 3 s.
        let offered = 313
        pace(offered, intervalMs: 9.6, from: client, toPort: relay.port, size: 1200)
        XCTAssertTrue(waitUntil(3) {
            let c = relay.counters.uplink
            return c.received == UInt64(offered) && c.sent + c.dropped == UInt64(offered) && server.count == Int(c.sent)
        })
        let received = server.received
        let c = relay.counters.uplink
        let span = Double(received.last!.at - received.first!.at) / 1e9
        let rate = Double(received.count - 1) * 1200 * 8 / span
        let delays = received.map(\.oneWayMs).sorted()
        // The relay's own schedule (log): departure = arrival + logged delay.
        let scheduled = relay.log.compactMap { e -> (departNs: Double, waitMs: Double)? in
            switch e.action {
            case .forwarded: (Double(e.arrivalNs), 0)
            case .delayed(let ms), .reordered(let ms): (Double(e.arrivalNs) + ms * 1e6, ms)
            case .dropped: nil
            }
        }
        let scheduledRate = Double(scheduled.count - 1) * 9600 / ((scheduled.last!.departNs - scheduled.first!.departNs) / 1e9)
        let maxScheduledWait = scheduled.map(\.waitMs).max() ?? 0
        print("rate cap 300 kbit/s, 1 Mbit/s offered: delivered \(received.count)/\(offered) at \(Int(rate)) bit/s (schedule \(Int(scheduledRate))); queueing delay p50 \(percentile(delays, 0.5)) ms, max \(delays.last!) ms measured, \(maxScheduledWait) ms scheduled (bound \(cap.maxQueueDelayMs) ms); dropped \(c.droppedQueueFull)")
        XCTAssertEqual(scheduledRate, 300_000, accuracy: 3_000)
        XCTAssertLessThanOrEqual(maxScheduledWait, cap.maxQueueDelayMs + 32.1, "queue bound + one packet's serialisation")

        XCTAssertEqual(rate, 300_000, accuracy: 30_000)
        XCTAssertEqual(received.count, Int(c.sent))
        XCTAssertEqual(Int(c.droppedQueueFull), offered - received.count, "all excess was tail-dropped")
        XCTAssertEqual(relay.log.filter { $0.action == .dropped(.queueFull) }.count, Int(c.droppedQueueFull))
        XCTAssertGreaterThan(c.droppedQueueFull, 150, "≈ 70 % of 1 Mbit/s cannot pass 300 kbit/s")
        // Queueing delay grows to the queue bound (the relay never sends early, so this lower
        // bound holds on a loaded machine; the upper bound is checked on the schedule above).
        XCTAssertGreaterThan(delays.last!, cap.maxQueueDelayMs * 0.75)
        XCTAssertEqual(received.map(\.sequence), received.map(\.sequence).sorted(), "a bottleneck is FIFO")
    }

    func testChangingImpairmentsAtRunTimeTakesEffect() throws {
        let server = try TestEndpoint(echo: true)
        let client = try TestEndpoint()
        let relay = try ImpairmentRelay(targetPort: server.port)
        try relay.start()
        defer { relay.stop(); server.close(); client.close() }

        // Phase 1: the uplink is cut.
        try relay.setImpairment(direction: .uplink, Impairment(loss: 1))
        pump(100, from: client, toPort: relay.port) { relay.counters.uplink.received == UInt64($0) }
        XCTAssertEqual(server.count, 0)
        XCTAssertEqual(relay.counters.uplink.droppedRandom, 100)

        // Phase 2: uplink clean, downlink cut: the server echoes, the client hears nothing.
        try relay.setImpairment(direction: .uplink, .none)
        try relay.setImpairment(direction: .downlink, Impairment(loss: 1))
        pump(100, from: client, toPort: relay.port) { sent in server.count == sent && relay.counters.downlink.received == UInt64(sent) }
        XCTAssertEqual(server.count, 100)
        XCTAssertEqual(client.count, 0)
        XCTAssertEqual(relay.counters.downlink.droppedRandom, 100)

        // Phase 3: downlink delayed by 100 ms instead.
        try relay.setImpairment(direction: .downlink, Impairment(delayMs: 100))
        XCTAssertEqual(relay.impairment(direction: .downlink).delayMs, 100)
        relay.clearLog()
        pump(50, from: client, toPort: relay.port) { client.count == $0 }
        XCTAssertEqual(client.count, 50)
        let downlink = relay.log.filter { $0.direction == .downlink }
        XCTAssertEqual(downlink.count, 50)
        for entry in downlink {
            guard case .delayed(let ms) = entry.action else { XCTFail("\(entry.action)"); continue }
            XCTAssertEqual(ms, 100, accuracy: 0.01)
        }
        XCTAssertTrue(relay.log.filter { $0.direction == .uplink }.allSatisfy { $0.action == .forwarded })
        // Round trip now includes the 100 ms (never less).
        XCTAssertTrue(client.received.allSatisfy { $0.oneWayMs >= 99.9 })
    }
}
