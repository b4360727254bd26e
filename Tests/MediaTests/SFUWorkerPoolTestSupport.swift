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
