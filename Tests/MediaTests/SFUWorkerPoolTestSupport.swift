import Foundation
import Glibc
import XCTest
@testable import Media

extension ServerEvents {
    /// Records the pool's callbacks (as `attach(to: SFUServer)`).
    func attach(to pool: SFUWorkerPool) {
        // Borrow the recording closures `attach(to: SFUServer)` builds, then give worker 0
        // its pool wiring back (it releases placements in onMemberLeft).
        let server = pool.workers[0]
        let saved = (server.onOffer, server.onMemberJoined, server.onMemberLeft)
        attach(to: server)
        pool.onOffer = server.onOffer
        pool.onMemberJoined = server.onMemberJoined
        pool.onMemberLeft = server.onMemberLeft
        (server.onOffer, server.onMemberJoined, server.onMemberLeft) = saved
    }
}


/// Joins `client` through the pool and connects ICE + DTLS.
func joinAndConnect(_ client: SyntheticClient, pool: SFUWorkerPool, room: String, events: ServerEvents,
                    others: [SyntheticClient] = []) throws {
    let answer = try pool.joinSync(room: room, member: client.member, offer: client.offer()).get()
    try client.accept(serverDescription: answer.sdp)
    try client.sendCheck(now: MediaLoop.monotonicMilliseconds())
    XCTAssertTrue(try drive([client] + others) { client.checkAnswered }, "no STUN response for \(client.member)")
    try client.startDTLS(now: MediaLoop.monotonicMilliseconds())
    XCTAssertTrue(try drive([client] + others) { client.srtp != nil && events.hasJoined(client.member) },
                  "DTLS did not connect for \(client.member)")
}

/// Answers every outstanding server offer until none comes for a while.
func settleOffers(_ clients: [SyntheticClient], pool: SFUWorkerPool, events: ServerEvents) throws {
    var quietSince = Date()
    while Date().timeIntervalSince(quietSince) < 0.4 {
        var any = false
        for client in clients {
            for offer in events.takeOffers(for: client.member) {
                any = true
                let sdp = try client.answer(serverOffer: offer.sdp)
                XCTAssertNoThrow(try pool.applyAnswerSync(member: client.member, generation: offer.generation, sdp: sdp).get())
            }
        }
        if any { quietSince = Date() }
        _ = try drive(clients, timeout: 0.02) { false }
    }
}

/// The worker whose socket the kernel gives `client`'s datagrams to (SO_REUSEPORT hashes
/// the 4-tuple, fixed while the group's sockets stay open): one datagram of an unknown
/// kind (first byte 0xFF, RFC 7983: no protocol) is sent, and the worker whose
/// `unknownKindDrops` moves received it. Nil if none saw it within the bound.
func receivingWorker(of client: SyntheticClient, in pool: SFUWorkerPool) -> Int? {
    let before = pool.workers.map { $0.loop.counters.unknownKindDrops }
    client.send([0xFF, 0x00, 0x00, 0x00])
    var found: Int?
    _ = eventually {
        let now = pool.workers.map { $0.loop.counters.unknownKindDrops }
        found = now.indices.first { now[$0] > before[$0] }
        return found != nil
    }
    return found
}
