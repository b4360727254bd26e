import Foundation
import Glibc
import ICE
import STUN
import XCTest
@testable import Media

/// SFUWorkerPool on 127.0.0.1: several workers on one UDP port (SO_REUSEPORT), rooms placed
/// on workers, datagrams the kernel gives to a non-owner handed to the owner.
final class SFUWorkerPoolTests: XCTestCase {
    var pool: SFUWorkerPool!
    let events = ServerEvents()
    var spare: [SyntheticClient] = []

    func startPool(workers: Int) throws {
        pool = try SFUWorkerPool(configuration: MediaConfiguration(host: "127.0.0.1", port: 0, ssrcSeed: 42), workers: workers)
        events.attach(to: pool)
        pool.start()
    }

    override func tearDown() {
        pool?.stop()
        pool = nil
        spare = []
    }

    func testWorkersShareOnePortAndOneFingerprint() throws {
        try startPool(workers: 3)
        XCTAssertEqual(pool.workers.count, 3)
        XCTAssertNotEqual(pool.port, 0)
        XCTAssertEqual(Set(pool.workers.map(\.port)), [pool.port])
        XCTAssertEqual(Set(pool.workers.map(\.fingerprint)), [pool.fingerprint])
        XCTAssertEqual(Set(pool.workers.compactMap { $0.configuration.ssrcSeed }).count, 3, "distinct SSRC seeds")
        XCTAssertGreaterThanOrEqual(SFUWorkerPool.onlineProcessors, 1)
        let single = try SFUWorkerPool(configuration: MediaConfiguration(host: "127.0.0.1", port: 0), workers: 0)
        XCTAssertEqual(single.workers.count, 1, "clamped to at least one worker")
        XCTAssertNil(single.group, "one worker: no directory, no handoff")
    }

    func testRoomsArePlacedOnTheLeastLoadedWorkerAndReleasedWhenEmpty() throws {
        try startPool(workers: 2)
        let a = try SyntheticClient("a/1", serverPort: pool.port)
        let b = try SyntheticClient("b/1", serverPort: pool.port)
        let c = try SyntheticClient("c/1", serverPort: pool.port)
        XCTAssertNoThrow(try pool.joinSync(room: "one", member: a.member, offer: a.offer()).get())
        XCTAssertNoThrow(try pool.joinSync(room: "one", member: b.member, offer: b.offer()).get())
        XCTAssertNoThrow(try pool.joinSync(room: "two", member: c.member, offer: c.offer()).get())
        XCTAssertEqual(pool.worker(ofRoom: "one"), 0, "first room: all workers empty, lowest index")
        XCTAssertEqual(pool.worker(of: a.member), 0)
        XCTAssertEqual(pool.worker(of: b.member), 0, "members of a room share its worker")
        XCTAssertEqual(pool.worker(ofRoom: "two"), 1, "a new room goes to the worker with fewer members")
        XCTAssertEqual(pool.membersPerWorker, [2, 1])
        XCTAssertEqual(pool.workers[0].stats().members.map(\.member).sorted { $0.description < $1.description }, [a.member, b.member])
        XCTAssertEqual(pool.workers[1].stats().members.map(\.member), [c.member])
        // A member in a room cannot join another (its worker says so, as a lone server).
        XCTAssertEqual(pool.joinSync(room: "two", member: a.member, offer: a.offer()).failureValue, .wrongRoom)
        // A failed first join does not keep a placement.
        XCTAssertEqual(pool.joinSync(room: "three", member: MemberID("x/1")!, offer: "garbage").failureValue?.code, "sdp_invalid")
        XCTAssertNil(pool.worker(ofRoom: "three"))
        XCTAssertEqual(pool.membersPerWorker, [2, 1])

        XCTAssertNoThrow(try pool.leaveSync(member: a.member).get())
        XCTAssertEqual(pool.worker(ofRoom: "one"), 0, "still has b")
        XCTAssertNoThrow(try pool.leaveSync(member: b.member).get())
        XCTAssertEqual(events.leaveReason(b.member), .left)
        XCTAssertNil(pool.worker(ofRoom: "one"), "placement released when the room empties")
        XCTAssertNil(pool.worker(of: a.member))
        XCTAssertEqual(pool.leaveSync(member: a.member).failureValue, .unknownMember)
        XCTAssertEqual(pool.applyAnswerSync(member: a.member, generation: 1, sdp: "x").failureValue, .unknownMember)
        XCTAssertEqual(pool.membersPerWorker, [0, 1])
        let d = try SyntheticClient("d/1", serverPort: pool.port)
        XCTAssertNoThrow(try pool.joinSync(room: "one", member: d.member, offer: d.offer()).get())
        XCTAssertEqual(pool.worker(ofRoom: "one"), 0, "re-placed on the now emptier worker 0")
        XCTAssertEqual(pool.group?.directory.counts.ufrags, 2, "c's and d's ufrags; a's and b's released")

        // Leave and rejoin without waiting (the coordinator may do so on a reconnect): the
        // worker removes, then re-adds; the placement must end up present and counted once.
        for _ in 0..<5 {
            pool.leave(member: c.member)
            XCTAssertNoThrow(try pool.joinSync(room: "two", member: c.member, offer: c.offer()).get())
            XCTAssertEqual(pool.worker(of: c.member), 1)
            XCTAssertEqual(pool.membersPerWorker, [1, 1])
            XCTAssertEqual(pool.workers[1].stats().members.map(\.member), [c.member])
        }
    }

    /// Clients whose datagrams the kernel hashes to each worker: probes fresh sockets until
    /// `wanted[w]` clients land on worker `w` (the 4-tuple hash is fixed while the sockets
    /// stay open, so the flow's worker is known before it joins).
    func clients(landingOn wanted: [Int], prefix: String) throws -> [[SyntheticClient]] {
        var found = Array(repeating: [SyntheticClient](), count: wanted.count)
        var attempts = 0
        while zip(found, wanted).contains(where: { $0.count < $1 }), attempts < 200 {
            attempts += 1
            let client = try SyntheticClient("\(prefix)\(attempts)/1", serverPort: pool.port)
            guard let worker = receivingWorker(of: client, in: pool) else { continue }
            if found[worker].count < wanted[worker] { found[worker].append(client) } else { spare.append(client) }
        }
        XCTAssertFalse(zip(found, wanted).contains { $0.count < $1 }, "the kernel never chose some worker in \(attempts) sockets")
        return found
    }

    /// Every client sends `count` tagged packets; every other client must get all of them.
    func exchange(_ clients: [SyntheticClient], count: Int = 30) throws {
        for client in clients { client.received.removeAll() }
        for index in 0..<count {
            for client in clients { try client.sendRTP(payload: Array("\(client.member)#\(index)".utf8)) }
            _ = try drive(clients, timeout: 0.002) { false }
        }
        let expected = clients.count - 1
        XCTAssertTrue(try drive(clients) { clients.allSatisfy { $0.received.count >= count * expected } },
                      "received: \(clients.map { $0.received.count }), stats \(pool.stats().total.counters)")
        for receiver in clients {
            for sender in clients where sender !== receiver {
                guard let ssrc = receiver.offeredStreams.first(where: { $0.value == sender.member.streamID })?.key else {
                    XCTFail("\(receiver.member) got no offer for \(sender.member)")
                    continue
                }
                XCTAssertEqual(receiver.received.filter { $0.ssrc == ssrc }.map { String(decoding: $0.payload, as: UTF8.self) },
                               (0..<count).map { "\(sender.member)#\($0)" }, "\(receiver.member) ← \(sender.member)")
            }
        }
    }

    /// One room (placed on worker 0) whose members' flows the kernel gives to every worker:
    /// STUN, DTLS, SRTP and SRTCP of the others reach worker 0 only by handoff, and the
    /// replies and forwards leave worker 0's socket on the same port.
    func runRoomAcrossWorkers(workers: Int) throws {
        try startPool(workers: workers)
        let byWorker = try clients(landingOn: [1] + Array(repeating: 1, count: workers - 1), prefix: "m")
        let members = byWorker.flatMap { $0 }
        guard members.count == workers else { return }
        for (index, client) in members.enumerated() {
            try joinAndConnect(client, server: pool, room: "room", events: events, others: Array(members[..<index]))
        }
        try settleOffers(members, server: pool, events: events)
        XCTAssertEqual(pool.worker(ofRoom: "room"), 0)
        XCTAssertTrue(members.allSatisfy { pool.worker(of: $0.member) == 0 })
        try exchange(members)

        let stats = pool.stats()
        XCTAssertGreaterThan(stats.handoffs, 0)
        XCTAssertEqual(stats.workers[0].loop.handoffsOut, 0, "the owner hands nothing over")
        for worker in 1..<workers {
            XCTAssertGreaterThan(stats.workers[worker].loop.handoffsOut, 30, "worker \(worker) passed its member's RTP on")
            XCTAssertEqual(stats.workers[worker].counters.rtpIn, 0, "worker \(worker) owns no session")
            XCTAssertEqual(stats.workers[worker].loop.unknownPeerDrops, 0)
        }
        XCTAssertGreaterThan(stats.workers[0].loop.handoffsIn, 0)
        XCTAssertLessThanOrEqual(stats.workers[0].loop.handoffsIn, stats.handoffs)
        XCTAssertEqual(stats.total.loop.handoffDrops, 0)
        XCTAssertEqual(stats.total.counters.srtpAuthFailures, 0)
        XCTAssertGreaterThanOrEqual(stats.workers[0].counters.forwarded, UInt64(30 * workers * (workers - 1)))
        XCTAssertEqual(stats.total.members.count, workers)
        XCTAssertTrue(stats.total.members.allSatisfy(\.connected))
        XCTAssertEqual(stats.placements, [workers] + Array(repeating: 0, count: workers - 1))
        XCTAssertEqual(pool.group?.directory.counts.ufrags, workers)
        print("pool of \(workers): handoffs \(stats.handoffs), forwarded \(stats.total.counters.forwarded)")

        // A member whose flow is handed over leaves: its directory entries go, and datagrams
        // from its address are unknown everywhere (counted, dropped).
        let leaving = byWorker[1][0]
        XCTAssertNoThrow(try pool.leaveSync(member: leaving.member).get())
        XCTAssertNil(pool.worker(of: leaving.member))
        XCTAssertEqual(pool.group?.directory.counts.ufrags, workers - 1)
        XCTAssertNil(pool.group?.directory.owner(of: leaving.socket.localAddress))
        let dropsBefore = pool.workers[1].loop.counters.unknownPeerDrops
        leaving.send([0x80, 0x6F, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0xAA])
        XCTAssertTrue(eventually { self.pool.workers[1].loop.counters.unknownPeerDrops > dropsBefore })
    }

    func testMediaForwardsAcrossTwoWorkers() throws {
        try runRoomAcrossWorkers(workers: 2)
    }

    func testMediaForwardsAcrossThreeWorkers() throws {
        try runRoomAcrossWorkers(workers: 3)
    }

    func testTwoRoomsOnTwoWorkersForwardIndependently() throws {
        try startPool(workers: 2)
        let found = try clients(landingOn: [2, 2], prefix: "p")
        guard found.allSatisfy({ $0.count == 2 }) else { return }
        // Room "x" (worker 0) gets one member landing on each socket, so does room "y" (worker 1).
        let x = [found[0][0], found[1][0]]
        let y = [found[1][1], found[0][1]]
        for (index, client) in x.enumerated() { try joinAndConnect(client, server: pool, room: "x", events: events, others: Array(x[..<index])) }
        for (index, client) in y.enumerated() { try joinAndConnect(client, server: pool, room: "y", events: events, others: Array(y[..<index])) }
        XCTAssertEqual(pool.worker(ofRoom: "x"), 0)
        XCTAssertEqual(pool.worker(ofRoom: "y"), 1)
        try settleOffers(x + y, server: pool, events: events)
        try exchange(x)
        try exchange(y)
        let stats = pool.stats()
        XCTAssertGreaterThan(stats.workers[0].loop.handoffsOut, 0)
        XCTAssertGreaterThan(stats.workers[1].loop.handoffsOut, 0)
        XCTAssertEqual(stats.workers[0].members.count, 2)
        XCTAssertEqual(stats.workers[1].members.count, 2)
        XCTAssertEqual(stats.total.rooms, 2)
        XCTAssertEqual(stats.total.loop.unknownPeerDrops, 0)
    }

    /// ICE restart of a member whose flow is handed over: the new server ufrag replaces the
    /// old one in the directory, and checks with it reach the owner.
    func testICERestartMovesTheUfragInTheDirectory() throws {
        try startPool(workers: 2)
        let found = try clients(landingOn: [1, 1], prefix: "i")
        guard found.allSatisfy({ $0.count == 1 }) else { return }
        let (owned, remote) = (found[0][0], found[1][0])
        try joinAndConnect(owned, server: pool, room: "r", events: events)
        try joinAndConnect(remote, server: pool, room: "r", events: events, others: [owned])
        try settleOffers([owned, remote], server: pool, events: events)
        let directory = try XCTUnwrap(pool.group?.directory)
        let oldUfrag = remote.serverUfrag
        XCTAssertEqual(directory.owner(ufrag: oldUfrag), 0)

        // A device re-offer with a new ufrag: its own section plus the server's section(s).
        remote.ufrag = SFUServer.randomICEString(8)
        var offer = remote.offer()
        let forwarded = remote.offeredStreams.count
        XCTAssertGreaterThan(forwarded, 0)
        for index in 1...forwarded {
            offer += ["m=audio 9 UDP/TLS/RTP/SAVPF 111", "c=IN IP4 0.0.0.0", "a=ice-ufrag:\(remote.ufrag)",
                      "a=ice-pwd:\(remote.password)", "a=fingerprint:\(remote.certificate.sha256Fingerprint.sdpValue)",
                      "a=setup:actpass", "a=mid:sfu\(index)", "a=recvonly", "a=rtcp-mux", "a=rtpmap:111 opus/48000/2", ""]
                .joined(separator: "\r\n")
        }
        offer = offer.replacingOccurrences(of: "a=group:BUNDLE 0", with: "a=group:BUNDLE 0 " + (1...forwarded).map { "sfu\($0)" }.joined(separator: " "))
        let answer = try pool.joinSync(room: "r", member: remote.member, offer: offer).get()
        try remote.accept(serverDescription: answer.sdp)
        XCTAssertNotEqual(remote.serverUfrag, oldUfrag)
        XCTAssertNil(directory.owner(ufrag: oldUfrag), "old ufrag released")
        XCTAssertEqual(directory.owner(ufrag: remote.serverUfrag), 0)
        let handoffsBefore = pool.workers[1].loop.counters.handoffsOut
        remote.checkAnswered = false
        try remote.sendCheck(now: MediaLoop.monotonicMilliseconds())
        XCTAssertTrue(try drive([owned, remote]) { remote.checkAnswered })
        XCTAssertGreaterThan(pool.workers[1].loop.counters.handoffsOut, handoffsBefore)
        XCTAssertEqual(pool.stats().total.loop.stunErrors, 0)
        try settleOffers([owned, remote], server: pool, events: events)
        try exchange([owned, remote])
    }

    func testSTUNForAnUnknownUfragIsDroppedAndCounted() throws {
        try startPool(workers: 2)
        let clients = try (0..<6).map { _ in try TestClient() }
        var builder = STUNMessageBuilder(type: .bindingRequest, transactionID: STUNTransactionID(high: 1, low: 2))
        try builder.appendUsername("nobody:cliU")
        try builder.appendICEControlling(tieBreaker: 1)
        let check = try builder.build(integrityKey: Array("someonesPassword0123456789".utf8), fingerprint: true)
        let server = SocketAddress(host: "127.0.0.1", port: pool.port)!
        for client in clients { client.send(check, to: server) }
        XCTAssertTrue(eventually { self.pool.stats().total.loop.stunErrors >= UInt64(clients.count) })
        for client in clients { XCTAssertNil(client.receive(timeout: 0.05), "no reply: the port is no oracle") }
        let stats = pool.stats()
        XCTAssertEqual(stats.total.loop.stunIn, UInt64(clients.count))
        XCTAssertEqual(stats.handoffs, 0)
        XCTAssertEqual(stats.total.loop.datagramsOut, 0)
    }

    func testLocalUfragIsReadFromTheSTUNUsername() throws {
        var builder = STUNMessageBuilder(type: .bindingRequest, transactionID: STUNTransactionID(high: 3, low: 4))
        try builder.appendPriority(1)  // an attribute before USERNAME
        try builder.appendUsername("abcDEF12:peer")
        let message = try builder.build(integrityKey: Array("p".utf8), fingerprint: true)
        XCTAssertEqual(message.withUnsafeBytes { MediaLoop.localUfrag(ofSTUN: $0) }, "abcDEF12")
        // Truncated anywhere, or without USERNAME: nil, never a trap.
        for length in 0..<message.count {
            let prefix = Array(message[..<length])
            let ufrag = prefix.withUnsafeBytes { MediaLoop.localUfrag(ofSTUN: $0) }
            XCTAssertTrue(ufrag == nil || ufrag == "abcDEF12")
        }
        var noUser = STUNMessageBuilder(type: .bindingRequest, transactionID: STUNTransactionID(high: 3, low: 5))
        try noUser.appendPriority(1)
        XCTAssertNil(try noUser.build().withUnsafeBytes { MediaLoop.localUfrag(ofSTUN: $0) })
        var lying = message
        lying[3] = 0xFF  // message length beyond the datagram
        XCTAssertEqual(lying.withUnsafeBytes { MediaLoop.localUfrag(ofSTUN: $0) }, "abcDEF12", "bounded by the datagram")
        var cut = message
        cut[30] = 0xFF  // USERNAME's length beyond the message
        XCTAssertNil(cut.withUnsafeBytes { MediaLoop.localUfrag(ofSTUN: $0) })
    }
}
