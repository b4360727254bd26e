import Foundation
import Glibc
@testable import Media
import SRTP

/// Load generator of the memory benchmark: rooms of synthetic members on one `SFUServer`,
/// each member publishing Opus audio + 3-layer VP8 simulcast with RTX (a Chromium-shaped
/// offer, `audioVideoOffer`) and receiving everyone else, over real ICE checks, DTLS and
/// SRTP on 127.0.0.1. Reuses the forwarding benchmark's parts (`SyntheticClient`,
/// `RTPStreamWriter`, `BenchReceiver` for loss + NACKs); unlike `ForwardingBench` it drives
/// several rooms at once at a real-time pace (one 20 ms cycle of audio + video per member).
final class MemoryBenchRooms {
    let server: SFUServer
    let events: ServerEvents
    let sizes: [Int]
    let tag: String
    /// VP8 packets per 20 ms cycle on layers 0/1/2: with 800-byte payloads ≈ 0.3/0.3/0.6
    /// Mbit/s, the shape (not the exact rates) of a 180p/360p/720p simulcast.
    static let packetsPerCycle = [1, 1, 2]
    private(set) var rooms: [[SyntheticClient]] = []
    private var ssrcs: [ObjectIdentifier: PublishedSSRCs] = [:]
    private var audio: [RTPStreamWriter] = []
    private var video: [[RTPStreamWriter]] = []
    private var cycle = 0

    var members: [SyntheticClient] { rooms.flatMap { $0 } }

    /// Creates the members' clients (sockets, certificates): the generator's static share.
    init(server: SFUServer, events: ServerEvents, tag: String, sizes: [Int]) throws {
        self.server = server
        self.events = events
        self.sizes = sizes
        self.tag = tag
        for (room, size) in sizes.enumerated() {
            rooms.append(try (0..<size).map { try SyntheticClient("\(tag)r\(room)m\($0)/d", serverPort: server.port) })
        }
        for client in members {
            let set = PublishedSSRCs(audio: client.ssrc, layers: 3)
            ssrcs[ObjectIdentifier(client)] = set
            audio.append(RTPStreamWriter(ssrc: set.audio, payloadType: 111, timestampStep: 960))
            video.append(set.video.map { RTPStreamWriter(ssrc: $0, payloadType: 96, timestampStep: 3_000) })
        }
    }

    /// Joins every member (ICE check, DTLS handshake, SRTP keys) and answers the server's
    /// renegotiation offers until they stop.
    func join() throws {
        // Everyone joined so far is pumped (consent checks: RFC 7675 drops a member after 30 s
        // without one, and joining many rooms takes a while in debug builds).
        var everyone: [SyntheticClient] = []
        for (index, room) in rooms.enumerated() {
            var joined: [SyntheticClient] = []
            for client in room {
                guard let set = ssrcs[ObjectIdentifier(client)] else { continue }
                let answer = try server.joinSync(room: "\(tag)room\(index)", member: client.member, offer: client.audioVideoOffer(set)).get()
                try client.accept(serverDescription: answer.sdp)
                try client.sendCheck(now: MediaLoop.monotonicMilliseconds())
                guard try drive([client] + everyone, until: { client.checkAnswered }) else { throw BenchSetupError(reason: "no STUN answer") }
                try client.startDTLS(now: MediaLoop.monotonicMilliseconds())
                guard try drive([client] + everyone, until: { client.srtp != nil && events.hasJoined(client.member) }) else {
                    throw BenchSetupError(reason: "DTLS did not connect for \(client.member)")
                }
                joined.append(client)
                everyone.append(client)
            }
            try settleOffers(joined, server: server, events: events)
        }
        // The server's offer SDPs were allocated on its loop thread: the clients must not keep
        // them, or they would count in the server's arena (the generator's copy is not state).
        for client in members {
            client.keepAlive = false
            client.serverOffers.removeAll()
        }
    }

    /// One receiver per member for the tracks the server forwards it; `lossRate` of RTP is
    /// dropped on arrival and NACKed (`BenchReceiver`).
    func receivers(lossRate: Double, seed: UInt64) throws -> [BenchReceiver] {
        try members.enumerated().map { index, client in
            let done = DispatchSemaphore(value: 0)
            var tracks: Result<[SFUServer.ReceivedTrack], SFUServerError> = .failure(.notRunning)
            server.receivedTracks(of: client.member) { tracks = $0; done.signal() }
            done.wait()
            return try BenchReceiver(client: client, tracks: tracks.get(), lossRate: lossRate, seed: seed &* 1_000 &+ UInt64(index))
        }
    }

    /// Sends `seconds` of media in 20 ms cycles (per member: 1 Opus packet, 1 + 1 + 2 VP8
    /// packets on layers 0/1/2, keyframes at the start and every 64 packets of a layer),
    /// drains and NACKs at the receivers, keeps consent alive; then waits until the server
    /// took every datagram and `tail` seconds of repair traffic are over.
    func traffic(seconds: Double, receivers: [BenchReceiver], tail: Double) throws {
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 2_048, alignment: 16)
        defer { scratch.deallocate() }
        let batch = UDPSendBatch(capacity: 64, slotSize: 1_500)
        var latencies: [UInt32] = []
        let everyone = members
        var sent = 0
        let datagramsBase = server.loop.counters.datagramsIn
        var lastConsent = MediaLoop.monotonicMilliseconds()
        let nackBase = receivers.reduce(0) { $0 + $1.nackPackets }
        func service() throws {
            let now = MediaLoop.monotonicMilliseconds()
            if now - lastConsent >= 2_000 {
                // RFC 7675: the server drops a member after 30 s without a consent check.
                lastConsent = now
                for client in everyone { try client.sendCheck(now: now); sent += 1 }
            }
            for receiver in receivers {
                receiver.drain(measureFrom: .max, latencies: &latencies)
                if receiver.lossRate > 0 { try receiver.sendNACKs(now: monotonicNanoseconds()) }
            }
        }
        func backlog() -> Int {
            let nacks = receivers.reduce(0) { $0 + $1.nackPackets } - nackBase
            return sent + Int(nacks) - Int(server.loop.counters.datagramsIn - datagramsBase)
        }
        let cycles = Int(seconds / 0.02)
        var next = monotonicNanoseconds()
        for _ in 0..<cycles {
            while monotonicNanoseconds() < next { try service(); usleep(500) }
            next += 20_000_000
            for (index, client) in everyone.enumerated() {
                guard let session = client.srtp else { throw BenchSetupError(reason: "\(client.member) without SRTP") }
                func queue(_ length: Int) {
                    _ = batch.enqueue(UnsafeRawBufferPointer(rebasing: scratch[0..<length]), to: client.server, on: client.socket)
                    sent += 1
                }
                queue(try audio[index].write(into: scratch, payloadLength: 160, session: session) { BenchPayload.audio($0, stamp: 0) })
                for layer in video[index].indices {
                    for _ in 0..<Self.packetsPerCycle[layer] {
                        let keyframe = video[index][layer].sequence % 64 == 0 || cycle < 2
                        queue(try video[index][layer].write(into: scratch, payloadLength: 800, session: session) {
                            BenchPayload.video($0, stamp: 0, keyframe: keyframe)
                        })
                    }
                }
                _ = batch.flush(on: client.socket)
            }
            cycle += 1
            try service()
            // Bounded lead over the server so its socket never overflows (uplink loss would
            // be the kernel's, not the scenario's).
            while backlog() > 2_000 { try service() }
        }
        let deadline = Date().addingTimeInterval(30)
        while backlog() > 0, Date() < deadline { try service(); usleep(200) }
        let end = Date().addingTimeInterval(tail)
        while Date() < end { try service(); usleep(500) }
    }

    /// Every member leaves; offers the server queued for them are dropped.
    func leave() {
        for client in members { _ = server.leaveSync(member: client.member) }
        _ = server.loop.sync { _ in 0 }
        for client in members { _ = events.takeOffers(for: client.member) }
    }
}
