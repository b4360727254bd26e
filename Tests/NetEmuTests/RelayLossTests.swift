import XCTest
@testable import NetEmu

/// Loss through the real relay: the receiver's gaps must match the relay's log exactly (the
/// test paces sending so the kernel drops nothing), and the rates must match the model.
final class RelayLossTests: XCTestCase {
    /// Sends 20,000 numbered datagrams through a relay with `impairment` on the uplink and
    /// returns, per sequence number, whether the server missed it, plus the relay.
    private func run(_ impairment: Impairment, seed: UInt64) throws -> (missing: [Bool], relay: ImpairmentRelay) {
        let server = try TestEndpoint()
        let client = try TestEndpoint()
        let relay = try ImpairmentRelay(targetPort: server.port, seed: seed)
        try relay.setImpairment(direction: .uplink, impairment)
        try relay.start()
        defer { relay.stop(); server.close(); client.close() }
        pump(20_000, from: client, toPort: relay.port) { sent in
            let c = relay.counters.uplink
            return c.received == UInt64(sent) && server.count == Int(c.sent)
        }
        var missing = [Bool](repeating: true, count: 20_000)
        let got = server.received
        for r in got { missing[Int(r.sequence)] = false }
        XCTAssertEqual(got.map(\.sequence), got.map(\.sequence).sorted(), "loss alone never reorders")
        return (missing, relay)
    }

    func testTenPercentRandomLoss() throws {
        let (missing, relay) = try run(Impairment(loss: 0.1), seed: 42)
        let lost = missing.filter { $0 }.count
        let c = relay.counters.uplink
        print("random loss: \(lost) of 20000 = \(Double(lost) / 200) %")
        XCTAssertEqual(Double(lost) / 20_000, 0.10, accuracy: 0.01)
        XCTAssertEqual(c.received, 20_000)
        XCTAssertEqual(c.droppedRandom, UInt64(lost))
        // Ground truth: the log names exactly the datagrams the server never saw.
        let log = relay.log
        XCTAssertEqual(log.count, 20_000)
        XCTAssertEqual(log.map { $0.action == .dropped(.randomLoss) }, missing)
    }

    func testGilbertElliottProducesBursts() throws {
        let ge = GilbertElliott(goodToBad: 0.02, badToGood: 0.25) // mean burst 4, loss ≈ 7.4 %
        let (missing, relay) = try run(Impairment(burstLoss: ge), seed: 9)
        let bursts = runLengths(missing)
        let mean = Double(bursts.reduce(0, +)) / Double(max(bursts.count, 1))
        let loss = Double(missing.filter { $0 }.count) / 20_000
        print("GE relay: loss \(loss) (model \(ge.stationaryLoss)), \(bursts.count) bursts, mean length \(mean) (model 4.0), longest \(bursts.max() ?? 0)")
        // ~370 bursts of geometric length (σ ≈ 3.5): the mean's standard error is ≈ 0.18.
        XCTAssertEqual(mean, 1 / ge.badToGood, accuracy: 0.6)
        XCTAssertEqual(loss, ge.stationaryLoss, accuracy: 0.015)
        XCTAssertEqual(relay.log.map { $0.action == .dropped(.burstLoss) }, missing)
        XCTAssertEqual(relay.counters.uplink.droppedBurst, UInt64(missing.filter { $0 }.count))
    }

    func testSameSeedSameDrops() throws {
        let a = try run(Impairment(loss: 0.05), seed: 5).missing
        let b = try run(Impairment(loss: 0.05), seed: 5).missing
        XCTAssertEqual(a, b)
    }
}
