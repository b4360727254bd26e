import XCTest
@testable import NetEmu

/// The relay as a clean NAT: real UDP on 127.0.0.1.
final class RelayPassThroughTests: XCTestCase {
    func testTenThousandDatagramsArriveInOrderUnchanged() throws {
        let server = try TestEndpoint()
        let client = try TestEndpoint()
        let relay = try ImpairmentRelay(targetPort: server.port)
        try relay.start()
        defer { relay.stop(); server.close(); client.close() }

        let sizes = (0..<10_000).map { 12 + ($0 * 37) % 1189 }
        var sent: [[UInt8]] = []
        var i = 0
        while i < sizes.count {
            for j in i..<min(i + 250, sizes.count) {
                let p = payload(UInt32(j), size: sizes[j])
                sent.append(p)
                client.send(p, toPort: relay.port)
            }
            i = min(i + 250, sizes.count)
            waitUntil { server.count >= i }
        }
        XCTAssertTrue(waitUntil { server.count == 10_000 })
        let got = server.received
        XCTAssertEqual(got.count, 10_000)
        XCTAssertEqual(got.map(\.bytes), sent, "same bytes, same order")
        let upstream = Set(got.map(\.fromPort))
        XCTAssertEqual(upstream.count, 1)
        XCTAssertNotEqual(upstream.first, client.port, "the server sees the relay's upstream port")

        let c = relay.counters.uplink
        XCTAssertEqual(c.received, 10_000)
        XCTAssertEqual(c.sent, 10_000)
        XCTAssertEqual(c.forwardedImmediately, 10_000)
        XCTAssertEqual(c.dropped, 0)
        let log = relay.log
        XCTAssertEqual(log.count, 10_000)
        XCTAssertEqual(log.map(\.size), sizes)
        XCTAssertTrue(log.allSatisfy { $0.action == .forwarded && $0.direction == .uplink && $0.clientPort == client.port })
    }

    func testEachClientGetsItsOwnUpstreamPortAndRepliesRouteBack() throws {
        let server = try TestEndpoint(echo: true)
        let alice = try TestEndpoint()
        let bob = try TestEndpoint()
        let relay = try ImpairmentRelay(targetPort: server.port)
        try relay.start()
        defer { relay.stop(); server.close(); alice.close(); bob.close() }

        for i in 0..<20 {
            alice.send(Array("alice \(i)".utf8), toPort: relay.port)
            bob.send(Array("bob \(i)".utf8), toPort: relay.port)
        }
        XCTAssertTrue(waitUntil { alice.count == 20 && bob.count == 20 })

        let mappings = relay.mappings
        XCTAssertEqual(Set(mappings.map(\.clientPort)), [alice.port, bob.port])
        let alicePort = try XCTUnwrap(mappings.first { $0.clientPort == alice.port }?.upstreamPort)
        let bobPort = try XCTUnwrap(mappings.first { $0.clientPort == bob.port }?.upstreamPort)
        XCTAssertNotEqual(alicePort, bobPort)
        // The server saw each client from its own upstream port, consistently.
        let seen = server.received
        XCTAssertTrue(seen.filter { String(decoding: $0.bytes, as: UTF8.self).hasPrefix("alice") }.allSatisfy { $0.fromPort == alicePort })
        XCTAssertTrue(seen.filter { String(decoding: $0.bytes, as: UTF8.self).hasPrefix("bob") }.allSatisfy { $0.fromPort == bobPort })
        // Replies came back to the right client, from the relay's port.
        XCTAssertEqual(alice.received.map { String(decoding: $0.bytes, as: UTF8.self) }, (0..<20).map { "alice \($0)" })
        XCTAssertEqual(bob.received.map { String(decoding: $0.bytes, as: UTF8.self) }, (0..<20).map { "bob \($0)" })
        XCTAssertTrue((alice.received + bob.received).allSatisfy { $0.fromPort == relay.port })
        XCTAssertEqual(relay.counters.downlink.sent, 40)
    }

    func testMappingLimitDropsNewClients() throws {
        let server = try TestEndpoint()
        let first = try TestEndpoint()
        let second = try TestEndpoint()
        let relay = try ImpairmentRelay(targetPort: server.port, limits: .init(maxMappings: 1))
        try relay.start()
        defer { relay.stop(); server.close(); first.close(); second.close() }
        first.send([1], toPort: relay.port)
        XCTAssertTrue(waitUntil { server.count == 1 })
        second.send([2], toPort: relay.port)
        XCTAssertTrue(waitUntil { relay.counters.uplink.received == 2 })
        XCTAssertEqual(relay.counters.uplink.droppedNoMapping, 1)
        XCTAssertEqual(relay.log.last?.action, .dropped(.noMapping))
    }

    func testStartTwiceAndBadAddressAreTypedErrors() throws {
        XCTAssertThrowsError(try ImpairmentRelay(targetHost: "localhost", targetPort: 9)) { XCTAssertEqual($0 as? NetEmuError, .badAddress("localhost")) }
        let relay = try ImpairmentRelay(targetPort: 9)
        try relay.start()
        XCTAssertThrowsError(try relay.start()) { XCTAssertEqual($0 as? NetEmuError, .notRestartable) }
        relay.stop()
        relay.stop()
        XCTAssertThrowsError(try relay.start()) { XCTAssertEqual($0 as? NetEmuError, .notRestartable) }
        XCTAssertThrowsError(try relay.setImpairment(direction: .uplink, Impairment(loss: 2))) { XCTAssertEqual($0 as? NetEmuError, .badImpairment("loss")) }
    }

    func testStopDiscardsDelayedDatagramsAndClosesTheMapping() throws {
        let server = try TestEndpoint()
        let client = try TestEndpoint()
        let relay = try ImpairmentRelay(targetPort: server.port)
        try relay.setImpairment(direction: .uplink, Impairment(delayMs: 300))
        try relay.start()
        defer { server.close(); client.close() }
        for i in 0..<10 { client.send(payload(UInt32(i)), toPort: relay.port) }
        XCTAssertTrue(waitUntil { relay.counters.uplink.received == 10 })
        relay.stop()
        usleep(400_000)
        XCTAssertEqual(server.count, 0, "held datagrams die with the relay")
        XCTAssertEqual(relay.counters.uplink.delayed, 10)
        XCTAssertEqual(relay.counters.uplink.sent, 0)
    }

    func testImpairmentsCanChangeWhileTrafficFlows() throws {
        let server = try TestEndpoint()
        let client = try TestEndpoint()
        let relay = try ImpairmentRelay(targetPort: server.port)
        try relay.start()
        defer { relay.stop(); server.close(); client.close() }
        let flipper = Thread {
            for i in 0..<2000 {
                try? relay.setImpairment(direction: i % 2 == 0 ? .uplink : .downlink,
                                         Impairment(loss: Double(i % 3) / 10, delayMs: Double(i % 4), jitterMs: 1, allowReordering: i % 5 == 0))
            }
        }
        flipper.start()
        pump(3000, from: client, toPort: relay.port) { sent in
            let c = relay.counters.uplink
            return c.received == UInt64(sent) && c.sent + c.dropped == UInt64(sent)
        }
        let c = relay.counters.uplink
        XCTAssertEqual(c.received, 3000)
        XCTAssertEqual(c.sent + c.dropped, 3000, "every datagram accounted for")
        XCTAssertTrue(waitUntil { server.count == Int(relay.counters.uplink.sent) })
    }
}
