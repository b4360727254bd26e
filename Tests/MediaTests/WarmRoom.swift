import Dispatch
@testable import Media
import XCTest

/// A room on a running `SFUServer` for the handler-level tests (allocations, pacing): one
/// publisher sending Opus + one VP8 layer (with RTX) and `subscriberCount` receive-only
/// members, each joined over real UDP with ICE and DTLS, every server offer answered,
/// keep-alives off (so nothing but the test's own packets reaches the server), and a
/// `BenchReceiver` per subscriber that asks for 5 % of its video again by NACK.
struct WarmRoom {
    let publisher: SyntheticClient
    let subscribers: [SyntheticClient]
    let ssrcs: PublishedSSRCs
    let receivers: [BenchReceiver]

    /// - Parameters:
    ///   - tag: device name of the members (`pub/<tag>`, `sub<i>/<tag>`).
    ///   - seed: the first receiver's loss seed; the others count up from it.
    init(server: SFUServer, events: ServerEvents, room: String, tag: String, subscriberCount: Int, seed: UInt64) throws {
        publisher = try SyntheticClient("pub/\(tag)", serverPort: server.port)
        subscribers = try (0..<subscriberCount).map { try SyntheticClient("sub\($0)/\(tag)", serverPort: server.port) }
        let ssrcs = PublishedSSRCs(audio: publisher.ssrc, layers: 1)
        self.ssrcs = ssrcs
        var joined: [SyntheticClient] = []
        for client in [publisher] + subscribers {
            let offer = client === publisher ? client.audioVideoOffer(ssrcs, direction: "sendonly") : client.offer(direction: "recvonly")
            let answer = try server.joinSync(room: room, member: client.member, offer: offer).get()
            try client.accept(serverDescription: answer.sdp)
            try client.sendCheck(now: MediaLoop.monotonicMilliseconds())
            XCTAssertTrue(try drive([client] + joined) { client.checkAnswered })
            try client.startDTLS(now: MediaLoop.monotonicMilliseconds())
            XCTAssertTrue(try drive([client] + joined) { client.srtp != nil && events.hasJoined(client.member) })
            joined.append(client)
        }
        try settleOffers(joined, server: server, events: events)
        for client in joined { client.keepAlive = false }
        receivers = try subscribers.enumerated().map { index, client in
            let done = DispatchSemaphore(value: 0)
            var tracks: Result<[SFUServer.ReceivedTrack], SFUServerError> = .failure(.notRunning)
            server.receivedTracks(of: client.member) { tracks = $0; done.signal() }
            done.wait()
            return try BenchReceiver(client: client, tracks: tracks.get(), lossRate: 0.05, seed: seed + UInt64(index))
        }
    }

    /// The publisher's Opus stream as offered (PT 111, 20 ms at 48 kHz).
    func audioWriter() -> RTPStreamWriter { RTPStreamWriter(ssrc: ssrcs.audio, payloadType: 111, timestampStep: 960) }
    /// The publisher's VP8 layer as offered (PT 96, 30 fps at 90 kHz).
    func videoWriter() -> RTPStreamWriter { RTPStreamWriter(ssrc: ssrcs.video[0], payloadType: 96, timestampStep: 3_000) }
}
