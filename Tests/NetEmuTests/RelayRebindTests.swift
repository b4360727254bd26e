import XCTest
@testable import NetEmu

/// NAT rebinding: the target sees the client from a new source port; the old one is gone.
final class RelayRebindTests: XCTestCase {
    func testRebindMovesTheClientToANewUpstreamPortAndRepliesFollowIt() throws {
        let server = try TestEndpoint(echo: true)
        let client = try TestEndpoint()
        let other = try TestEndpoint()
        let relay = try ImpairmentRelay(targetPort: server.port)
        try relay.start()
        defer { relay.stop(); server.close(); client.close(); other.close() }

        for i in 0..<10 {
            client.send(Array("before \(i)".utf8), toPort: relay.port)
            other.send(Array("other \(i)".utf8), toPort: relay.port)
        }
        XCTAssertTrue(waitUntil { client.count == 10 && other.count == 10 })
        let old = try XCTUnwrap(relay.mappings.first { $0.clientPort == client.port })
        let otherMapping = try XCTUnwrap(relay.mappings.first { $0.clientPort == other.port })

        let new = try relay.rebind(clientPort: client.port)
        XCTAssertEqual(new.clientPort, client.port)
        XCTAssertNotEqual(new.upstreamPort, old.upstreamPort, "a new source port")
        XCTAssertNotEqual(new.upstreamPort, otherMapping.upstreamPort)
        XCTAssertEqual(relay.mappings.count, 2, "the binding is replaced, not added")
        XCTAssertEqual(relay.mappings.first { $0.clientPort == client.port }, new)
        XCTAssertEqual(relay.mappings.first { $0.clientPort == other.port }, otherMapping, "other clients keep theirs")

        for i in 0..<10 { client.send(Array("after \(i)".utf8), toPort: relay.port) }
        XCTAssertTrue(waitUntil { client.count == 20 }, "echoes to the new port come back to the client")
        let seen = server.received
        let after = seen.filter { String(decoding: $0.bytes, as: UTF8.self).hasPrefix("after") }
        XCTAssertEqual(after.count, 10)
        XCTAssertTrue(after.allSatisfy { $0.fromPort == new.upstreamPort }, "the target sees the new source port")
        XCTAssertTrue(seen.filter { String(decoding: $0.bytes, as: UTF8.self).hasPrefix("before") }.allSatisfy { $0.fromPort == old.upstreamPort })
        XCTAssertEqual(client.received.suffix(10).map { String(decoding: $0.bytes, as: UTF8.self) }, (0..<10).map { "after \($0)" })

        // The old binding is closed: the target's datagrams to it reach nobody.
        let downlinkBefore = relay.counters.downlink.received
        server.send(Array("stale".utf8), toPort: old.upstreamPort)
        server.send(Array("fresh".utf8), toPort: new.upstreamPort)
        XCTAssertTrue(waitUntil { client.count == 21 })
        XCTAssertEqual(client.received.last.map { String(decoding: $0.bytes, as: UTF8.self) }, "fresh")
        usleep(50_000)
        XCTAssertEqual(client.count, 21, "nothing came through the closed binding")
        XCTAssertEqual(relay.counters.downlink.received, downlinkBefore + 1)
    }

    func testDelayedDatagramsLeaveThroughTheNewBinding() throws {
        let server = try TestEndpoint()
        let client = try TestEndpoint()
        let relay = try ImpairmentRelay(targetPort: server.port)
        try relay.start()
        defer { relay.stop(); server.close(); client.close() }
        client.send(Array("open".utf8), toPort: relay.port)
        XCTAssertTrue(waitUntil { server.count == 1 })
        try relay.setImpairment(direction: .uplink, Impairment(delayMs: 300))
        for i in 0..<5 { client.send(Array("held \(i)".utf8), toPort: relay.port) }
        XCTAssertTrue(waitUntil { relay.counters.uplink.received == 6 })
        let new = try relay.rebind(clientPort: client.port)
        XCTAssertTrue(waitUntil(3) { server.count == 6 })
        let held = server.received.dropFirst()
        XCTAssertEqual(held.map { String(decoding: $0.bytes, as: UTF8.self) }, (0..<5).map { "held \($0)" })
        XCTAssertTrue(held.allSatisfy { $0.fromPort == new.upstreamPort })
        XCTAssertEqual(relay.counters.uplink.sendErrors, 0)
    }

    func testRebindErrors() throws {
        let relay = try ImpairmentRelay(targetPort: 9)
        XCTAssertThrowsError(try relay.rebind(clientPort: 1234)) { XCTAssertEqual($0 as? NetEmuError, .notRunning) }
        try relay.start()
        XCTAssertThrowsError(try relay.rebind(clientPort: 1234)) { XCTAssertEqual($0 as? NetEmuError, .noMapping(1234)) }
        relay.stop()
        XCTAssertThrowsError(try relay.rebind(clientPort: 1234)) { XCTAssertEqual($0 as? NetEmuError, .notRunning) }
        XCTAssertEqual(NetEmuError.noMapping(1).code, "netemu_no_mapping")
    }
}
