import Foundation
import NetEmu
import Peer
import XCTest

/// What the relay's log says happened to one SSRC in one direction: ground truth for what
/// the path dropped and what crossed it again (resent originals).
struct RelayLedger: CustomStringConvertible {
    var arrived = 0
    var dropped = 0
    /// Distinct sequence numbers dropped at least once.
    var droppedSequences = Set<UInt16>()
    /// Delivered datagrams whose sequence number had reached the relay before (resent originals).
    var repeats = 0
    /// Sequence numbers delivered at least once.
    var deliveredSequences = Set<UInt16>()
    /// Dropped and never delivered afterwards (only meaningful without RTX: an RTX packet's
    /// original sequence number is encrypted).
    var neverDelivered: Int { droppedSequences.subtracting(deliveredSequences).count }
    var reordered = 0

    init(_ log: [RelayLogEntry], direction: Direction, ssrc: UInt32) {
        var seen = Set<UInt16>()
        for entry in log where entry.direction == direction {
            guard let rtp = entry.rtp, rtp.ssrc == ssrc else { continue }
            arrived += 1
            if !seen.insert(rtp.sequence).inserted, !entry.action.isDropped { repeats += 1 }
            if !entry.action.isDropped { deliveredSequences.insert(rtp.sequence) }
            switch entry.action {
            case .dropped:
                dropped += 1
                droppedSequences.insert(rtp.sequence)
            case .reordered:
                reordered += 1
            case .forwarded, .delayed:
                break
            }
        }
    }

    var description: String {
        "\(arrived) arrived, \(dropped) dropped (\(droppedSequences.count) distinct, \(neverDelivered) never delivered), \(repeats) resent originals, \(reordered) reordered"
    }
}

/// Residual loss of one received stream over the measured window only: from a snapshot
/// taken once the stream is up to the end. Whatever was missing at the snapshot (lost, or
/// still pending and lost later) belongs to the start-up and is reported apart.
struct SteadyStateLoss: CustomStringConvertible {
    let expected: UInt64
    let residualLost: UInt64
    /// Residual loss of the whole stream, start-up included.
    let wholeStreamLost: UInt64
    let startupLost: UInt64

    init(start: ReceivedStreamReport, end: ReceivedStreamReport) {
        expected = end.expectedPackets - min(end.expectedPackets, start.expectedPackets)
        startupLost = min(end.residualLost, start.residualLost + start.pendingMissing)
        residualLost = end.residualLost - startupLost
        wholeStreamLost = end.residualLost
    }

    var ratio: Double { expected > 0 ? Double(residualLost) / Double(expected) : 0 }

    var description: String {
        "steady state \(residualLost)/\(expected) (\(ImpairedRoomCase.percent(ratio))); start-up \(startupLost), whole stream \(wholeStreamLost)"
    }
}

/// Synthetic peers in rooms of the real server binary, some of them behind NetEmu's
/// `ImpairmentRelay` (issue 4: "under emulated networks"). A peer given `relayPort` sends to
/// the relay instead of the server's candidate; the relay forwards to the server's media port
/// and applies the impairment per direction (uplink = peer → server).
class ImpairedRoomCase: RoomPeerCase {
    private var ownMembers: [RoomPeerMember] = []
    private var relays: [ImpairmentRelay] = []

    override func tearDown() {
        for member in ownMembers {
            member.peer.close()
            member.signaling.close()
        }
        ownMembers.removeAll()
        for relay in relays { relay.stop() }
        relays.removeAll()
        super.tearDown()
    }

    /// The server's media UDP port, from its "media listening" log line.
    func mediaPort(_ server: ServerProcess) throws -> UInt16 {
        for line in server.logLines where line.contains("\"msg\":\"media listening\"") {
            guard let data = line.data(using: .utf8),
                  let object = try JSONSerialization.jsonObject(with: data) as? [String: Any],
                  let fields = object["fields"] as? [String: Any], let port = fields["port"] as? Int,
                  let value = UInt16(exactly: port) else { continue }
            return value
        }
        throw XCTSkip("the server logged no media port")
    }

    /// A started relay in front of the server's media port. `mediaOnly` impairments leave ICE
    /// and DTLS alone, so the scenario measures media repair only.
    func startRelay(_ server: ServerProcess, seed: UInt64, uplink: Impairment = .none, downlink: Impairment = .none) throws -> ImpairmentRelay {
        let relay = try ImpairmentRelay(targetPort: mediaPort(server), seed: seed)
        try relay.setImpairment(direction: .uplink, uplink)
        try relay.setImpairment(direction: .downlink, downlink)
        try relay.start()
        relays.append(relay)
        return relay
    }

    /// Joins like `RoomPeerCase.join` with a configuration the test shapes (video, RTX,
    /// relay, feedback SSRC).
    func join(_ server: ServerProcess, _ account: String, _ device: String, frequency: Double, room: String,
              configure: (inout SyntheticPeer.Configuration) -> Void) throws -> RoomPeerMember {
        let signaling = try self.device(server, account, device)
        var configuration = SyntheticPeer.Configuration(name: "\(account)/\(device)", audioFrequency: frequency)
        configure(&configuration)
        let peer = try SyntheticPeer(configuration: configuration, loop: Self.peerLoop)
        let client = try RoomClient(signaling: signaling, peer: peer, room: room)
        let member = RoomPeerMember(account: account, device: device, frequency: frequency, signaling: signaling,
                                    peer: peer, room: client)
        ownMembers.append(member)
        try client.join()
        try client.publish()
        try peer.startSending()
        return member
    }

    /// Pumps until `subscriber` hears `publisher`'s tone and has received `videoPackets` of
    /// its video (when it sends video).
    func awaitMedia(_ members: [RoomPeerMember], subscriber: RoomPeerMember, publisher: RoomPeerMember, videoPackets: UInt64,
                    timeout: TimeInterval = 15, file: StaticString = #filePath, line: UInt = #line) throws {
        let ok = try pump(members, timeout: timeout) {
            (subscriber.videoStream(from: publisher.key)?.expectedPackets ?? 0) >= videoPackets
                && hears(subscriber, [(publisher.key, publisher.frequency)])
        }
        XCTAssertTrue(ok, "\(subscriber.key) did not get \(publisher.key)'s media within \(timeout) s: \(subscriber.peer.report(analyzingTones: false).streams)",
                      file: file, line: line)
    }

    /// The media SSRC and RTX SSRC (FID) under which `subscriber` receives `publisher`'s video,
    /// from the server offer it answered last.
    func videoSSRCs(at subscriber: RoomPeerMember, from publisher: RoomPeerMember) throws -> (media: UInt32, rtx: UInt32?) {
        let description = try RemoteDescription(parsing: XCTUnwrap(subscriber.room.lastServerOffer))
        let section = try XCTUnwrap(description.sections.first { $0.streamID == publisher.key && $0.payloadTypes.values.contains(.vp8) && !$0.rejected })
        let media = try XCTUnwrap(section.ssrcs.first { section.rtxSSRCs[$0] == nil })
        return (media, section.rtxSSRCs.first { $0.value == media }?.key)
    }

    /// The host's UDP receive-buffer overflows so far (/proc/net/snmp `Udp: RcvbufErrors`):
    /// datagrams the kernel dropped because a socket's owner (peer loop, server, relay) did not
    /// read in time — loss the relay never saw, on a loaded machine.
    static func udpReceiveBufferErrors() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/net/snmp", encoding: .utf8) else { return nil }
        let lines = text.split(separator: "\n").filter { $0.hasPrefix("Udp: ") }
        guard lines.count >= 2 else { return nil }
        let names = lines[0].split(separator: " "), values = lines[1].split(separator: " ")
        guard let index = names.firstIndex(of: "RcvbufErrors"), index < values.count else { return nil }
        return Int(values[index])
    }

    static func percent(_ value: Double) -> String { String(format: "%.2f %%", value * 100) }

    func describe(_ stream: ReceivedStreamReport) -> String {
        "\(stream.nackGenerator.map { "NACK gen requested \($0.requested) sent \($0.nackedSequenceNumbers) recovered \($0.recovered) reordered-before-NACK \($0.reorderedBeforeNACK) lost-after-retries \($0.lostAfterRetries) too-late \($0.tooLate); " } ?? "")\(stream.packets) packets, max gap \(stream.maxArrivalGapMicroseconds / 1000) ms, expected \(stream.expectedPackets), residual lost \(stream.residualLost) (\(Self.percent(stream.residualLossRatio))), repaired \(stream.repaired), pending \(stream.pendingMissing), RTX \(stream.retransmissionsReceived), duplicates \(stream.duplicates), RFC 3550 lost \(stream.lost), out of order \(stream.outOfOrder)"
    }
}
