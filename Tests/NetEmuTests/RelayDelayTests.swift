import XCTest
@testable import NetEmu

/// Delay and jitter through the real relay. The relay can send late (scheduling) but never
/// early, so lower bounds are exact; upper figures are printed and checked loosely.
final class RelayDelayTests: XCTestCase {
    private func run(_ impairment: Impairment) throws -> (received: [Received], relay: ImpairmentRelay) {
        let server = try TestEndpoint()
        let client = try TestEndpoint()
        let relay = try ImpairmentRelay(targetPort: server.port, seed: 11)
        try relay.setImpairment(direction: .uplink, impairment)
        try relay.start()
        defer { relay.stop(); server.close(); client.close() }
        pace(1500, intervalMs: 1, from: client, toPort: relay.port, size: 200)
        XCTAssertTrue(waitUntil(3) { server.count == 1500 })
        return (server.received, relay)
    }

    private func describe(_ label: String, _ delays: [Double]) -> [Double] {
        let sorted = delays.sorted()
        let mean = delays.reduce(0, +) / Double(max(delays.count, 1))
        print("\(label): n \(delays.count) mean \(mean) ms, min \(sorted.first ?? .nan), p5 \(percentile(sorted, 0.05)), p50 \(percentile(sorted, 0.5)), p95 \(percentile(sorted, 0.95)), max \(sorted.last ?? .nan)")
        return sorted
    }

    func testJitterWithReordering() throws {
        let (received, relay) = try run(Impairment(delayMs: 50, jitterMs: 30))
        let sorted = describe("50±30 ms with reordering", received.map(\.oneWayMs))
        var late = 0, highest: UInt32 = 0
        for r in received {
            if r.sequence < highest { late += 1 } else { highest = r.sequence }
        }
        let logged = relay.counters.uplink.reordered
        print("reordering: \(late) datagrams arrived after a later one; relay logged \(logged) overtaking")
        XCTAssertGreaterThanOrEqual(sorted.first ?? 0, 19.9, "never earlier than 50 − 30 ms")
        // Measured delays can only be late (scheduling), so the mean is bounded below; the
        // uniform ±30 ms mean over 1500 draws has a standard error of 0.45 ms.
        XCTAssertGreaterThan(sorted.reduce(0, +) / Double(sorted.count), 48)
        XCTAssertGreaterThan(late, 100)
        XCTAssertGreaterThan(logged, 100)
        // The log's per-datagram delays are the model's: uniform over [20, 80] ms.
        var loggedDelays: [Double] = []
        for entry in relay.log {
            switch entry.action {
            case .delayed(let ms), .reordered(let ms): loggedDelays.append(ms)
            default: XCTFail("unexpected \(entry.action)")
            }
        }
        let model = describe("  relay log", loggedDelays)
        XCTAssertGreaterThanOrEqual(model.first ?? 0, 19.99)
        XCTAssertLessThanOrEqual(model.last ?? 0, 80.01)
        XCTAssertEqual(model.reduce(0, +) / Double(model.count), 50, accuracy: 2)
        XCTAssertEqual(percentile(model, 0.25), 35, accuracy: 3, "uniform: quartiles at 35 and 65 ms")
        XCTAssertEqual(percentile(model, 0.75), 65, accuracy: 3)
    }

    func testJitterWithoutReordering() throws {
        let (received, relay) = try run(Impairment(delayMs: 50, jitterMs: 30, allowReordering: false))
        let sorted = describe("50±30 ms without reordering", received.map(\.oneWayMs))
        XCTAssertEqual(received.map(\.sequence), (0..<1500).map { UInt32($0) }, "FIFO order kept")
        XCTAssertGreaterThanOrEqual(sorted.first ?? 0, 19.9)
        XCTAssertEqual(relay.counters.uplink.reordered, 0)
        XCTAssertTrue(relay.log.allSatisfy { if case .delayed = $0.action { true } else { false } })
    }
}
