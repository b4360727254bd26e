import Foundation
import Glibc
import ICE
import STUN
import XCTest
@testable import Media

final class MediaLoopTests: XCTestCase {
    func makeLoop() throws -> (MediaLoop, Recorder, ICESessionID) {
        let loop = try MediaLoop(configuration: MediaLoopConfiguration(host: "127.0.0.1", port: 0))
        let recorder = Recorder()
        recorder.attach(to: loop)
        loop.start()
        let session = try loop.sync { loop in
            Result { try loop.ice.register(localUfrag: Creds.serverUfrag, localPassword: Creds.serverPassword,
                                           remoteUfrag: Creds.clientUfrag, now: MediaLoop.monotonicMilliseconds()) }
        }.get()
        return (loop, recorder, session)
    }

    /// A check with USE-CANDIDATE makes the client's address known; then DTLS, RTP and RTCP
    /// from it reach their handlers tagged with the session, while the same bytes from an
    /// unknown address, an unknown first byte and an oversized datagram are counted drops.
    func testDemultiplexByFirstByteAndFiveTuple() throws {
        let (loop, recorder, session) = try makeLoop()
        defer { loop.stop() }
        let client = try TestClient()
        let stranger = try TestClient()
        let server = loop.localAddress

        client.send(try Creds.check(useCandidate: true, transaction: 1), to: server)
        let reply = try STUNMessage(parsing: try XCTUnwrap(client.receive()))
        XCTAssertEqual(reply.type, .bindingSuccess)
        XCTAssertEqual(reply.xorMappedAddress, .ipv4(address: 0x7F00_0001, port: client.address.port))
        XCTAssertNoThrow(try reply.verifyMessageIntegrity(key: Array(Creds.serverPassword.utf8)))
        XCTAssertTrue(eventually { recorder.allEvents.contains(.pathChanged(session, old: nil, new: client.address)) })
        XCTAssertEqual(recorder.allEvents.first, .checkValidated(session, client.address, nominated: true))

        let dtls: [UInt8] = [0x16, 0xFE, 0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]  // handshake record header, DTLS 1.2
        let rtp: [UInt8] = [0x80, 0x6F, 0x00, 0x01, 0, 0, 0, 0, 0xDE, 0xAD, 0xBE, 0xEF]  // PT 111
        let rtcp: [UInt8] = [0x80, 0xC9, 0x00, 0x01, 0xDE, 0xAD, 0xBE, 0xEF]  // RR (201), no blocks
        for packet in [dtls, rtp, rtcp] {
            client.send(packet, to: server)
            stranger.send(packet, to: server)
        }
        client.send([0x50, 1, 2, 3], to: server)  // TURN ChannelData range: not ours
        client.send([UInt8](repeating: 0x80, count: 1600), to: server)  // larger than the 1500-byte slot
        XCTAssertTrue(eventually { recorder.allPackets.count == 3 && loop.counters.oversizedDrops == 1 && loop.counters.unknownKindDrops == 1 })
        XCTAssertEqual(recorder.allPackets, [Recorder.Packet(kind: "dtls", session: session, bytes: dtls),
                                             Recorder.Packet(kind: "rtp", session: session, bytes: rtp),
                                             Recorder.Packet(kind: "rtcp", session: session, bytes: rtcp)])
        let counters = loop.counters
        XCTAssertEqual(counters.unknownPeerDrops, 3)
        XCTAssertEqual(counters.stunIn, 1)
        XCTAssertEqual(counters.stunErrors, 0)
        XCTAssertEqual(counters.datagramsIn, 1 + 6 + 2)
        XCTAssertEqual(counters.datagramsOut, 1)

        // Server → client over the nominated path, queued from the loop thread.
        let media: [UInt8] = [0x80, 0x60, 0, 9, 0, 0, 0, 1, 0, 0, 0, 2, 0x42]
        XCTAssertTrue(loop.sync { $0.send(media, to: session) })
        XCTAssertEqual(client.receive(), media)
        XCTAssertTrue(eventually { loop.counters.datagramsOut == 2 })
    }

    /// Bad credentials get a 401 (counted as a STUN error) and teach the loop nothing.
    func testBadCheckCountedAndPeerStaysUnknown() throws {
        let (loop, recorder, session) = try makeLoop()
        defer { loop.stop() }
        let client = try TestClient()
        var builder = STUNMessageBuilder(type: .bindingRequest, transactionID: STUNTransactionID(high: 1, low: 1))
        try builder.appendUsername("\(Creds.serverUfrag):\(Creds.clientUfrag)")
        client.send(try builder.build(integrityKey: Array("wrong-password-wrong-password".utf8), fingerprint: true), to: loop.localAddress)
        let reply = try STUNMessage(parsing: try XCTUnwrap(client.receive()))
        XCTAssertEqual(reply.errorCode?.code, 401)
        client.send([0x80, 0x60, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1], to: loop.localAddress)
        XCTAssertTrue(eventually { loop.counters.unknownPeerDrops == 1 })
        XCTAssertEqual(loop.counters.stunErrors, 1)
        XCTAssertEqual(recorder.allEvents, [.reject(.badIntegrity(session))])
        XCTAssertFalse(loop.sync { $0.send([0x80, 0x60], to: session) }, "no path before a valid nominated check")
        XCTAssertTrue(eventually { loop.counters.noPathDrops == 1 })
    }

    /// A client's network switch: a nominated check from a new socket moves media there;
    /// the old address still maps to the session (it was validated) until it goes quiet.
    func testPathChangeMovesMediaToNewAddress() throws {
        let (loop, recorder, session) = try makeLoop()
        defer { loop.stop() }
        let oldClient = try TestClient()
        let newClient = try TestClient()
        oldClient.send(try Creds.check(useCandidate: true, transaction: 1), to: loop.localAddress)
        XCTAssertNotNil(oldClient.receive())
        newClient.send(try Creds.check(useCandidate: true, transaction: 2), to: loop.localAddress)
        XCTAssertNotNil(newClient.receive())
        XCTAssertTrue(eventually { recorder.allEvents.contains(.pathChanged(session, old: oldClient.address, new: newClient.address)) })
        let media: [UInt8] = [0x80, 0x60, 0, 1, 0, 0, 0, 0, 0, 0, 0, 5]
        XCTAssertTrue(loop.sync { $0.send(media, to: session) })
        XCTAssertEqual(newClient.receive(), media)
        XCTAssertNil(oldClient.receive(timeout: 0.2), "nothing to the old path")
    }

    /// After consent expiry (RFC 7675) the loop neither sends to nor accepts media from the
    /// peer. The 30 s are skipped by ticking the loop's agent with a later `now`.
    func testConsentExpiryStopsMediaBothWays() throws {
        let (loop, recorder, session) = try makeLoop()
        defer { loop.stop() }
        let client = try TestClient()
        client.send(try Creds.check(useCandidate: true, transaction: 1), to: loop.localAddress)
        XCTAssertNotNil(client.receive())
        XCTAssertTrue(eventually { recorder.allEvents.contains(.pathChanged(session, old: nil, new: client.address)) })
        let expired = loop.sync { $0.ice.tick(now: MediaLoop.monotonicMilliseconds() + ICELiteAgent.consentTimeout + 1) }
        XCTAssertEqual(expired, [.consentExpired(session)])
        XCTAssertFalse(loop.sync { $0.send([0x80, 0x60, 0, 1], to: session) })
        client.send([0x80, 0x60, 0, 2, 0, 0, 0, 0, 0, 0, 0, 1], to: loop.localAddress)
        XCTAssertTrue(eventually { loop.counters.unknownPeerDrops == 1 && loop.counters.noPathDrops == 1 })
        XCTAssertEqual(recorder.count("rtp"), 0)
    }

    /// The candidate advertised in SDP uses the announced address (NAT / container) and the
    /// bound port.
    func testAnnouncedAddressAndCandidate() throws {
        let loop = try MediaLoop(configuration: MediaLoopConfiguration(host: "0.0.0.0", port: 0, announcedHost: "203.0.113.5"))
        let port = loop.localAddress.port
        XCTAssertNotEqual(port, 0)
        XCTAssertEqual(loop.announcedAddress, SocketAddress(ipv4: 0xCB00_7105, port: port))
        XCTAssertEqual(loop.candidateAttribute(), "candidate:1 1 udp 2130706431 203.0.113.5 \(port) typ host")
        let wildcard = try MediaLoop(configuration: MediaLoopConfiguration(host: "0.0.0.0", port: 0))
        XCTAssertNil(wildcard.announcedAddress, "a wildcard bind is no candidate")
        let mapped = try MediaLoop(configuration: MediaLoopConfiguration(host: "127.0.0.1", port: 0, announcedPort: 40_000))
        XCTAssertEqual(mapped.candidateAttribute(), "candidate:1 1 udp 2130706431 127.0.0.1 40000 typ host")
    }

    /// Handler deadlines fire on the loop thread.
    func testTimerDeadlineFires() throws {
        let loop = try MediaLoop(configuration: MediaLoopConfiguration(host: "127.0.0.1", port: 0))
        let fired = Recorder()
        var calls = 0
        loop.onTimer = { _, now in
            calls += 1
            fired.record("timer", ICESessionID(rawValue: 0), UnsafeRawBufferPointer(start: nil, count: 0), keep: false)
            return calls < 3 ? now + 10 : nil
        }
        loop.start()
        defer { loop.stop() }
        XCTAssertTrue(eventually { fired.count("timer") == 3 })
    }

    /// Benchmark (prints, asserts no speed): a client blasts RTP from a validated address;
    /// the loop echoes each packet back to the session (receive + demux + lookup + send).
    func testBenchmarkEchoThroughLoop() throws {
        let (loop, recorder, session) = try makeLoop()
        defer { loop.stop() }
        loop.onRTP = { loop, session, bytes, _ in loop.send(bytes, to: session) }
        let client = try TestClient()
        client.send(try Creds.check(useCandidate: true, transaction: 1), to: loop.localAddress)
        XCTAssertNotNil(client.receive())
        XCTAssertTrue(eventually { recorder.allEvents.contains(.pathChanged(session, old: nil, new: client.address)) })

        let total = 50_000
        let before = loop.counters
        let start = Date()
        var packet = [UInt8](repeating: 0xAB, count: 200)
        packet[0] = 0x80
        packet[1] = 0x6F
        var sent = 0
        var echoed = 0
        while sent < total {
            while sent < total && !client.sendBatch.isFull {
                packet.withUnsafeBytes { _ = client.sendBatch.enqueue($0, to: loop.localAddress, on: client.socket) }
                sent += 1
            }
            client.sendBatch.flush(on: client.socket)
            // Drain echoes so neither queue overflows for long.
            while case let count = client.receiveBatch.receive(from: client.socket), count > 0 { echoed += count }
        }
        // Until the loop has taken everything the kernel did not drop (no growth for 100 ms).
        var lastIn = loop.counters.datagramsIn
        var lastChange = Date()
        var lastEcho = Date()
        while Date().timeIntervalSince(lastChange) < 0.1 {
            while case let count = client.receiveBatch.receive(from: client.socket), count > 0 { echoed += count; lastEcho = Date() }
            let current = loop.counters.datagramsIn
            if current != lastIn { lastIn = current; lastChange = Date() }
            usleep(1_000)
        }
        let elapsed = lastEcho.timeIntervalSince(start)
        // The loop publishes its counters at the end of an iteration, after the sendmmsg that
        // carried the echoes we already hold: wait (bounded) for that snapshot.
        var after = loop.counters
        let settle = Date().addingTimeInterval(2)
        while after.datagramsOut - before.datagramsOut < UInt64(echoed), Date() < settle {
            usleep(1_000)
            after = loop.counters
        }
        let inCount = after.datagramsIn - before.datagramsIn
        let outCount = after.datagramsOut - before.datagramsOut
        let cpu = Double(after.loopCPUNanoseconds - before.loopCPUNanoseconds)
        XCTAssertGreaterThan(inCount, 0)
        XCTAssertLessThanOrEqual(UInt64(echoed), outCount)
        print(String(format: "loop echo benchmark: %d sent, %llu in, %llu out, %d echoed back, %.0f datagrams/s in, loop CPU %.2f µs per datagram in+out (%.2f s wall)",
                     total, inCount, outCount, echoed, Double(inCount) / elapsed, cpu / 1_000 / Double(max(1, inCount)), elapsed))
    }
}
