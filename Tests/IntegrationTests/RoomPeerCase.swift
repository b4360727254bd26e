import Foundation
import IO
import Peer
import SignalingClient
import XCTest

/// One synthetic peer in a room through the IM channel: its WebSocket, its media agent and
/// the room driver.
final class RoomPeerMember {
    let account: String
    let device: String
    let frequency: Double
    let signaling: SignalingClient
    let peer: SyntheticPeer
    let room: RoomClient
    var key: String { "\(account)/\(device)" }

    init(account: String, device: String, frequency: Double, signaling: SignalingClient, peer: SyntheticPeer, room: RoomClient) {
        self.account = account
        self.device = device
        self.frequency = frequency
        self.signaling = signaling
        self.peer = peer
        self.room = room
    }

    /// The audio stream received from `publisher` (msid stream id = account/device, protocol §9).
    func stream(from publisher: String, analyzingTone: Bool = false) -> ReceivedStreamReport? {
        peer.report(analyzingTones: analyzingTone).streams.first { $0.streamID == publisher && $0.codec == .opus }
    }

    /// The video stream received from `publisher`.
    func videoStream(from publisher: String) -> ReceivedStreamReport? {
        peer.report(analyzingTones: false).streams.first { $0.streamID == publisher && $0.codec == .vp8 }
    }
}

/// Synthetic peers (Sources/Peer) in SFU rooms of the real server binary, over real UDP on
/// 127.0.0.1: helpers to join, pump negotiation and check decoded tones.
class RoomPeerCase: IntegrationCase {
    /// The peers' loop (libnice, DTLS, SRTP, Opus), apart from the signaling clients' loop so
    /// a slow Opus tick never delays a WebSocket frame and the other way round.
    static let peerLoop: EventLoop = {
        let loop = EventLoop(name: "it-peers")
        loop.start()
        return loop
    }()

    /// 1 s of decoded audio per stream before the tone is judged: twice the peer's 500 ms
    /// analysis window, so the window holds steady tone only (no start-up silence).
    static let decodedBeforeCheck: UInt64 = 48_000
    /// 2 %: on loopback nothing should be lost; a few packets may fall around the moment a
    /// renegotiation lands on a busy 2-core CI machine.
    static let maximumLossRatio = 0.02

    private var members: [RoomPeerMember] = []
    private var servers: [ServerProcess] = []

    /// The real server binary (see `ServerProcess`); its log is printed when the test fails.
    func startServer(settings: [String: String] = [:]) throws -> ServerProcess {
        let server = try ServerProcess(settings: settings)
        servers.append(server)
        return server
    }

    override func tearDown() {
        if let run = testRun, run.failureCount + run.unexpectedExceptionCount > 0 {
            for server in servers {
                // The server's own account of the test (info and above: rooms, media sessions, removals).
                let lines = server.logLines.filter { !$0.contains("\"level\":\"debug\"") }
                print("server log (\(lines.count) lines, last 80):\n" + lines.suffix(80).joined(separator: "\n"))
            }
        }
        servers.removeAll()
        // Peers hold a libnice agent on the shared loop: release them even when a test failed.
        for member in members {
            member.peer.close()
            member.signaling.close()
        }
        members.removeAll()
        super.tearDown()
    }

    /// Connects `account/device`, joins `room`, publishes its tone (sfu.offer → answer) and
    /// starts sending. Server offers are answered by `pump`.
    func join(_ server: ServerProcess, _ account: String, _ device: String, frequency: Double, room: String,
              video: Bool = false) throws -> RoomPeerMember {
        let signaling = try self.device(server, account, device)
        let peer = try SyntheticPeer(configuration: .init(name: "\(account)/\(device)", audioFrequency: frequency, sendVideo: video),
                                     loop: Self.peerLoop)
        let client = try RoomClient(signaling: signaling, peer: peer, room: room)
        let member = RoomPeerMember(account: account, device: device, frequency: frequency, signaling: signaling,
                                    peer: peer, room: client)
        members.append(member)
        try client.join()
        try client.publish()
        try peer.startSending()
        return member
    }

    /// Answers server offers of every member and collects room events until `done` holds
    /// (checked every 100 ms) or `timeout` passes; false on timeout.
    /// Members also send a `ping` every second, so servers with a short idle timeout keep them.
    @discardableResult
    func pump(_ members: [RoomPeerMember], timeout: TimeInterval, until done: () -> Bool) throws -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        var nextPing = Date()
        while true {
            for member in members { try member.room.answerServerOffers(timeout: 0) }
            if Date() >= nextPing {
                for member in members where !member.signaling.isClosed {
                    member.signaling.sendRaw("{\"v\":1,\"type\":\"ping\"}")
                    while (try? member.signaling.waitFor(timeout: 0, { $0.type == "pong" })) != nil {}
                }
                nextPing = Date(timeIntervalSinceNow: 1)
            }
            if done() { return true }
            if Date() > deadline { return false }
            // 100 ms: a server offer waits at most this long for its answer; polling faster
            // only takes CPU from the peers and the server on a 2-core machine.
            Thread.sleep(forTimeInterval: 0.1)
        }
    }

    /// True when `member` has decoded at least `decodedBeforeCheck` samples of the stream of
    /// each of `publishers` and its tone is that publisher's frequency. Tones are analysed
    /// only once every count is there (the analysis is the costly part of a report).
    func hears(_ member: RoomPeerMember, _ publishers: [(key: String, frequency: Double)]) -> Bool {
        func enough(_ report: PeerReport) -> Bool {
            publishers.allSatisfy { publisher in
                report.streams.contains { $0.streamID == publisher.key && $0.codec == .opus && $0.decodedSamplesPerChannel >= Self.decodedBeforeCheck }
            }
        }
        guard enough(member.peer.report(analyzingTones: false)) else { return false }
        let report = member.peer.report()
        return publishers.allSatisfy { publisher in
            report.streams.first { $0.streamID == publisher.key && $0.codec == .opus }?.tone?.matches(frequency: publisher.frequency) == true
        }
    }

    /// Pumps until every member hears every other one, then asserts it stream by stream
    /// (codec, tone within ±3 %, loss, decode errors) and prints what was measured.
    func assertEveryoneHearsEveryone(_ members: [RoomPeerMember], timeout: TimeInterval = 20,
                                     file: StaticString = #filePath, line: UInt = #line) throws {
        let started = Date()
        let heard = try pump(members, timeout: timeout) {
            members.allSatisfy { member in
                hears(member, members.filter { $0 !== member }.map { ($0.key, $0.frequency) })
            }
        }
        let elapsed = Date().timeIntervalSince(started)
        for member in members {
            let report = member.peer.report()
            XCTAssertEqual(report.state, .connected, "\(member.key): \(report.failure ?? "-")", file: file, line: line)
            print("\(member.key) sent \(report.sentAudioPackets) audio packets, skipped \(report.skippedFrames) ticks, send failures \(report.sendFailures), srtp failures \(report.srtpUnprotectFailures)")
            for publisher in members where publisher !== member {
                guard let stream = report.streams.first(where: { $0.streamID == publisher.key && $0.codec == .opus }) else {
                    XCTFail("\(member.key) received no stream labelled \(publisher.key); streams: \(report.streams.map { "\($0.ssrc) \($0.streamID ?? "?") \($0.packets)" })",
                            file: file, line: line)
                    continue
                }
                XCTAssertEqual(stream.codec, .opus, file: file, line: line)
                XCTAssertEqual(stream.decodeErrors, 0, "\(member.key) ← \(publisher.key)", file: file, line: line)
                let tone = try XCTUnwrap(stream.tone, "\(member.key) ← \(publisher.key): no decoded audio", file: file, line: line)
                XCTAssertTrue(tone.matches(frequency: publisher.frequency),
                              "\(member.key) ← \(publisher.key): dominant \(tone.dominantFrequency) Hz (want \(publisher.frequency) ±3 %), rms \(tone.rms)",
                              file: file, line: line)
                let loss = stream.expectedPackets > 0 ? Double(max(0, stream.lost)) / Double(stream.expectedPackets) : 1
                XCTAssertLessThanOrEqual(loss, Self.maximumLossRatio, "\(member.key) ← \(publisher.key): lost \(stream.lost) of \(stream.expectedPackets)",
                                         file: file, line: line)
                // One publisher's packets go through one room worker and loopback UDP keeps
                // order: reordering means the forwarding path shuffles them.
                XCTAssertLessThanOrEqual(stream.outOfOrder, stream.packets / 100, "\(member.key) ← \(publisher.key): \(stream.outOfOrder) out of order",
                                         file: file, line: line)
                print("\(member.key) ← \(publisher.key): \(stream.packets) packets, lost \(stream.lost)/\(stream.expectedPackets), out of order \(stream.outOfOrder), max gap \(stream.maxArrivalGapMicroseconds / 1000) ms, jitter \(stream.jitter), dominant \(tone.dominantFrequency) Hz (sent \(publisher.frequency)), purity \(String(format: "%.2f", tone.purity)), rms \(Int(tone.rms)), srtp \(report.srtpProfile.map { "\($0)" } ?? "-")")
            }
        }
        XCTAssertTrue(heard, "not every member heard every other within \(timeout) s", file: file, line: line)
        print("\(members.count) peers heard each other after \(String(format: "%.1f", elapsed)) s of pumping")
    }

    /// Pumps until `member` got `room.memberLeft` for `leaver` and answered a server offer in
    /// which no section sends `leaver`'s stream any more; returns the reason given.
    func awaitDeparture(of leaver: String, at member: RoomPeerMember, among members: [RoomPeerMember], timeout: TimeInterval,
                        file: StaticString = #filePath, line: UInt = #line) throws -> String? {
        var reason: String?
        var left = false
        let done = try pump(members, timeout: timeout) {
            for event in member.room.events {
                if case .memberLeft(_, let who, let why) = event, who == leaver { left = true; reason = why }
            }
            return left && !Self.offer(member.room.lastServerOffer, sends: leaver)
        }
        XCTAssertTrue(left, "\(member.key): no room.memberLeft for \(leaver); events \(member.room.events)", file: file, line: line)
        XCTAssertTrue(done, "\(member.key): no server offer without \(leaver)'s track; last offer:\n\(member.room.lastServerOffer ?? "none")",
                      file: file, line: line)
        return reason
    }

    /// True when `sdp` has a live section that sends stream `streamID` (msid, RFC 8830).
    static func offer(_ sdp: String?, sends streamID: String) -> Bool {
        guard let sdp, let description = try? RemoteDescription(parsing: sdp) else { return false }
        return description.sections.contains { !$0.rejected && $0.direction.sends && $0.streamID == streamID }
    }

    /// Packets received from `publisher` by `member` over `interval` seconds.
    func packetGrowth(_ member: RoomPeerMember, from publisher: String, over interval: TimeInterval) -> UInt64 {
        let before = member.stream(from: publisher)?.packets ?? 0
        Thread.sleep(forTimeInterval: interval)
        let after = member.stream(from: publisher)?.packets ?? 0
        return after &- before
    }
}
