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

    func testLogNamesTheDroppedRTPPackets() throws {
        let server = try TestEndpoint()
        let client = try TestEndpoint()
        let relay = try ImpairmentRelay(targetPort: server.port, seed: 3)
        try relay.setImpairment(direction: .uplink, Impairment(loss: 0.2))
        try relay.start()
        defer { relay.stop(); server.close(); client.close() }
        // RTP (V=2, PT 111, SSRC 0x11223344), sequence numbers wrapping past 65535; then one
        // RTCP receiver report (PT 201) and one STUN binding request, which get no tag.
        for i in 0..<1000 {
            let seq = UInt16(truncatingIfNeeded: 65_000 + i)
            client.send([0x80, 111, UInt8(seq >> 8), UInt8(seq & 0xFF), 0, 0, 0, 0, 0x11, 0x22, 0x33, 0x44] + [UInt8](repeating: 0xAB, count: 160), toPort: relay.port)
        }
        client.send([0x81, 201, 0, 1, 0, 0, 0, 1], toPort: relay.port)
        client.send([0x00, 0x01, 0, 0, 0x21, 0x12, 0xA4, 0x42, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], toPort: relay.port)
        XCTAssertTrue(waitUntil { relay.counters.uplink.received == 1002 && server.count == Int(relay.counters.uplink.sent) })

        let arrived = Set(server.received.filter { $0.bytes.count > 100 }.map { UInt16($0.bytes[2]) << 8 | UInt16($0.bytes[3]) })
        let log = relay.log
        let droppedRTP = Set(log.filter { $0.action.isDropped }.compactMap { $0.rtp?.sequence })
        let allRTP = Set(log.compactMap { $0.rtp?.sequence })
        XCTAssertEqual(allRTP.count, 1000)
        XCTAssertEqual(droppedRTP, allRTP.subtracting(arrived), "the log names exactly the RTP packets that never arrived")
        XCTAssertEqual(Double(droppedRTP.count) / 1000, 0.2, accuracy: 0.04)
        XCTAssertTrue(log.compactMap(\.rtp).allSatisfy { $0.ssrc == 0x1122_3344 && $0.payloadType == 111 })
        XCTAssertEqual(log.filter { $0.rtp == nil }.count, 2, "RTCP and STUN are not tagged")
    }

    func testMediaOnlyLetsSTUNAndDTLSThrough() throws {
        let server = try TestEndpoint()
        let client = try TestEndpoint()
        let relay = try ImpairmentRelay(targetPort: server.port)
        try relay.setImpairment(direction: .uplink, Impairment(loss: 1, mediaOnly: true))
        try relay.start()
        defer { relay.stop(); server.close(); client.close() }
        let stun: [UInt8] = [0x00, 0x01, 0, 0, 0x21, 0x12, 0xA4, 0x42] + [UInt8](repeating: 7, count: 12)
        let dtls: [UInt8] = [22, 0xFE, 0xFD] + [UInt8](repeating: 0, count: 20)
        let rtp: [UInt8] = [0x80, 111, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0xAA]
        let rtcp: [UInt8] = [0x81, 201, 0, 1, 0, 0, 0, 1]
        for datagram in [stun, rtp, dtls, rtcp] { client.send(datagram, toPort: relay.port) }
        XCTAssertTrue(waitUntil { relay.counters.uplink.received == 4 && server.count == 2 })
        XCTAssertEqual(server.received.map(\.bytes), [stun, dtls])
        XCTAssertEqual(relay.log.map(\.action), [.forwarded, .dropped(.randomLoss), .forwarded, .dropped(.randomLoss)])
    }
}
