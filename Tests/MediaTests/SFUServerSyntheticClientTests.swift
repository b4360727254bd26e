import DTLS
import Foundation
import Glibc
import ICE
import SDP
import SRTP
import STUN
import XCTest
@testable import Media

/// A minimal WebRTC endpoint for SFUServer tests (the `Peer` module was not on main yet):
/// a real UDP socket on 127.0.0.1, ICE as a controlling agent driven by hand with the STUN
/// module (Binding requests with USE-CANDIDATE and MESSAGE-INTEGRITY, as a browser sends
/// to an ICE-lite server), a DTLS client (`DTLSEndpoint(role: .client)`), libsrtp2, and RTP
/// packets. Single-threaded: the test drives it with `pump`.
final class SyntheticClient {
    struct Received: Equatable {
        var ssrc: UInt32
        var sequenceNumber: UInt16
        var payloadType: UInt8
        var payload: [UInt8]
    }

    let member: MemberID
    let socket: UDPSocket
    private let receiveBatch = UDPReceiveBatch(capacity: 64, slotSize: 2048)
    private let sendBatch = UDPSendBatch(capacity: 64, slotSize: 8192)
    let certificate: DTLSCertificate
    var ufrag = SFUServer.randomICEString(8)
    let password = SFUServer.randomICEString(24)
    let ssrc: UInt32
    let server: SocketAddress
    var serverUfrag = ""
    var serverPassword = ""
    var serverFingerprint: DTLSFingerprint?
    var dtls: DTLSEndpoint?
    var srtp: SRTPSession?
    var checkAnswered = false
    /// Send a consent check every `checkInterval` ms (RFC 7675: browsers send ~every 5 s).
    var keepAlive = true
    var checkInterval: Int64 = 300
    private var lastCheck: Int64 = 0
    private var transaction: UInt64 = 1
    private var sequence: UInt16 = 1000
    private var timestamp: UInt32 = 90_000

    /// Leave the a=ssrc lines out of the offer and tag packets with the mid extension
    /// (RFC 8843 §9.2: the SFU must learn the SSRC from the mid, as with unsignaled SSRCs).
    var signalSSRC = true
    var received: [Received] = []
    /// Sequence numbers to drop on arrival, before SRTP (simulated downlink loss).
    var dropOnArrival: Set<UInt16> = []
    var rtcpReceived = 0
    var unprotectFailures = 0
    /// SSRC → stream id (publisher "account%2Fdevice", `MemberID.streamID`) from the server's offers.
    var offeredStreams: [UInt32: String] = [:]
    /// Every server offer answered, as received.
    var serverOffers: [String] = []

    init(_ member: String, serverPort: UInt16) throws {
        self.member = MemberID(member)!
        socket = try UDPSocket(host: "127.0.0.1", port: 0)
        certificate = try DTLSCertificate.generate(commonName: member)
        ssrc = UInt32.random(in: 1...0x7FFF_FFFF)
        server = SocketAddress(host: "127.0.0.1", port: serverPort)!
    }

    /// A Chromium-shaped audio offer (BUNDLE, rtcp-mux, mid extension, opus 111, a=ssrc).
    func offer(fingerprint: String? = nil, direction: String = "sendonly") -> String {
        let fp = fingerprint ?? certificate.sha256Fingerprint.sdpValue
        return [
            "v=0", "o=- 4611731400430051336 2 IN IP4 127.0.0.1", "s=-", "t=0 0", "a=group:BUNDLE 0",
            "a=msid-semantic: WMS \(member.account)", "m=audio 9 UDP/TLS/RTP/SAVPF 111", "c=IN IP4 0.0.0.0",
            "a=ice-ufrag:\(ufrag)", "a=ice-pwd:\(password)", "a=fingerprint:\(fp)", "a=setup:actpass", "a=mid:0",
            "a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:mid",
            "a=extmap:3 http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01",
            "a=\(direction)", "a=msid:\(member.account) mic", "a=rtcp-mux", "a=rtcp-rsize",
            "a=rtpmap:111 opus/48000/2", "a=rtcp-fb:111 transport-cc", "a=fmtp:111 minptime=10;useinbandfec=1",
        ].joined(separator: "\r\n") + "\r\n"
            + (signalSSRC ? "a=ssrc:\(ssrc) cname:\(member.account)\r\na=ssrc:\(ssrc) msid:\(member.account) mic\r\n" : "")
    }

    /// Takes the server's answer (or offer): ICE credentials and fingerprint.
    func accept(serverDescription sdp: String) throws {
        let description = try SessionDescription(parsing: sdp)
        let section = try XCTUnwrap(description.media.first { !$0.isRejected })
        serverUfrag = try XCTUnwrap(description.iceUfrag(for: section))
        serverPassword = try XCTUnwrap(description.icePwd(for: section))
        let fingerprint = try XCTUnwrap(description.fingerprints(for: section).first)
        serverFingerprint = DTLSFingerprint(algorithm: .sha256, bytes: fingerprint.bytes)
        XCTAssertTrue(description.iceLite)
        XCTAssertEqual(try section.candidates().first?.port, server.port)
    }

    /// Our answer to a server offer: every section mirrored, SSRCs of forwarded tracks noted.
    func answer(serverOffer sdp: String) throws -> String {
        serverOffers.append(sdp)
        let offer = try SessionDescription(parsing: sdp)
        var lines = ["v=0", "o=- 77 3 IN IP4 127.0.0.1", "s=-", "t=0 0",
                     "a=group:BUNDLE " + offer.media.filter { !$0.isRejected }.compactMap(\.mid).joined(separator: " ")]
        for section in offer.media {
            let direction = (section.explicitDirection ?? .sendrecv).reversed
            lines += ["m=\(section.media) \(section.isRejected ? 0 : 9) \(section.proto) \(section.formats.joined(separator: " "))",
                      "c=IN IP4 0.0.0.0", "a=ice-ufrag:\(ufrag)", "a=ice-pwd:\(password)",
                      "a=fingerprint:\(certificate.sha256Fingerprint.sdpValue)", "a=setup:active",
                      "a=mid:\(section.mid ?? "")", "a=\(section.isRejected ? "inactive" : direction.rawValue)", "a=rtcp-mux"]
            for map in try section.rtpMaps() { lines.append("a=rtpmap:\(map.attributeValue)") }
            let msid = try section.msids().first
            for attribute in try section.ssrcAttributes() where attribute.attribute == "cname" {
                if let msid, (section.explicitDirection ?? .sendrecv).sends { offeredStreams[attribute.ssrc] = msid.streamID }
            }
        }
        lines.append("")
        return lines.joined(separator: "\r\n")
    }

    func send(_ bytes: [UInt8], to destination: SocketAddress? = nil) {
        bytes.withUnsafeBytes { _ = sendBatch.enqueue($0, to: destination ?? server, on: socket) }
        sendBatch.flush(on: socket)
    }

    /// An authenticated Binding request with USE-CANDIDATE (RFC 8445 §7.2.2, §8.1.1).
    func sendCheck(now: Int64, nominate: Bool = true) throws {
        var builder = STUNMessageBuilder(type: .bindingRequest, transactionID: STUNTransactionID(high: 0xC11E, low: transaction))
        transaction += 1
        try builder.appendUsername("\(serverUfrag):\(ufrag)")
        try builder.appendPriority(0x6E7F_00FF)
        try builder.appendICEControlling(tieBreaker: 0x1234_5678)
        if nominate { try builder.appendUseCandidate() }
        send(try builder.build(integrityKey: Array(serverPassword.utf8), fingerprint: true))
        lastCheck = now
    }

    func startDTLS(now: Int64) throws {
        let endpoint = try DTLSEndpoint(role: .client, certificate: certificate, expectedRemoteFingerprint: serverFingerprint)
        dtls = endpoint
        handle(endpoint.start(now: now))
    }

    private func handle(_ outputs: [DTLSOutput]) {
        for output in outputs {
            switch output {
            case .send(let datagram): send(datagram)
            case .connected(let keys):
                srtp = try? SRTPSession(profile: SRTPProfile(rawValue: keys.profile.rawValue)!, localKey: keys.localKey,
                                        localSalt: keys.localSalt, remoteKey: keys.remoteKey, remoteSalt: keys.remoteSalt)
            default: break
            }
        }
    }

    /// Receives and processes everything pending; drives timers.
    func pump(now: Int64) throws {
        if keepAlive, !serverUfrag.isEmpty, now - lastCheck >= checkInterval { try sendCheck(now: now) }
        if let dtls, let deadline = dtls.nextTimeout, now >= deadline { handle(dtls.handleTimeout(now: now)) }
        while true {
            let count = receiveBatch.receive(from: socket)
            guard count > 0 else { break }
            for index in 0..<count {
                var bytes = Array(receiveBatch.datagram(at: index).bytes)
                guard let first = bytes.first else { continue }
                switch first {
                case 0...3: checkAnswered = true
                case 20...63: if let dtls { handle(dtls.handle(datagram: bytes, now: now)) }
                case 128...191:
                    guard let srtp else { continue }
                    if bytes.count > 1, (192...223).contains(bytes[1]) {
                        if (try? srtp.unprotectRTCP(&bytes)) != nil { rtcpReceived += 1 } else { unprotectFailures += 1 }
                    } else {
                        if bytes.count >= 4, dropOnArrival.remove(UInt16(bytes[2]) << 8 | UInt16(bytes[3])) != nil { continue }
                        do { try srtp.unprotectRTP(&bytes) } catch { unprotectFailures += 1; continue }
                        let headerLength = 12 + 4 * Int(bytes[0] & 0x0F)
                        var payloadStart = headerLength
                        if bytes[0] & 0x10 != 0, bytes.count >= headerLength + 4 {
                            payloadStart += 4 + 4 * (Int(bytes[headerLength + 2]) << 8 | Int(bytes[headerLength + 3]))
                        }
                        received.append(Received(
                            ssrc: UInt32(bytes[8]) << 24 | UInt32(bytes[9]) << 16 | UInt32(bytes[10]) << 8 | UInt32(bytes[11]),
                            sequenceNumber: UInt16(bytes[2]) << 8 | UInt16(bytes[3]), payloadType: bytes[1] & 0x7F,
                            payload: Array(bytes[min(payloadStart, bytes.count)...])))
                    }
                default: break
                }
            }
        }
    }

    /// A plain RTP packet (opus PT 111, 20 ms timestamps), SRTP-protected with `session`.
    func rtpPacket(payload: [UInt8], session: SRTPSession? = nil) throws -> [UInt8] {
        sequence &+= 1
        timestamp &+= 960
        var packet: [UInt8] = [0x80, 111, UInt8(sequence >> 8), UInt8(sequence & 0xFF),
                               UInt8(timestamp >> 24), UInt8(timestamp >> 16 & 0xFF), UInt8(timestamp >> 8 & 0xFF), UInt8(timestamp & 0xFF),
                               UInt8(ssrc >> 24), UInt8(ssrc >> 16 & 0xFF), UInt8(ssrc >> 8 & 0xFF), UInt8(ssrc & 0xFF)]
        if !signalSSRC {
            // One-byte header extension (RFC 8285 §4.2): id 4 = mid, value "0", padded.
            packet[0] |= 0x10
            packet += [0xBE, 0xDE, 0x00, 0x01, 0x40, UInt8(ascii: "0"), 0x00, 0x00]
        }
        packet += payload
        packet.reserveCapacity(packet.count + 32)
        try XCTUnwrap(session ?? srtp).protectRTP(&packet)
        return packet
    }

    func sendRTP(payload: [UInt8]) throws { send(try rtpPacket(payload: payload)) }
}

/// Records the server's callbacks (they run on the loop thread).
final class ServerEvents {
    private let lock = NSLock()
    private var offers: [(member: MemberID, generation: UInt64, sdp: String)] = []
    private var joined: [MemberID] = []
    private var left: [(MemberID, SFULeaveReason)] = []

    func attach(to server: SFUServer) {
        server.onOffer = { [unowned self] member, generation, sdp in lock.lock(); offers.append((member, generation, sdp)); lock.unlock() }
        server.onMemberJoined = { [unowned self] _, member in lock.lock(); joined.append(member); lock.unlock() }
        server.onMemberLeft = { [unowned self] _, member, reason in lock.lock(); left.append((member, reason)); lock.unlock() }
    }

    /// Removes and returns the offers received so far for `member`.
    func takeOffers(for member: MemberID) -> [(generation: UInt64, sdp: String)] {
        lock.lock()
        defer { lock.unlock() }
        let mine = offers.filter { $0.member == member }.map { ($0.generation, $0.sdp) }
        offers.removeAll { $0.member == member }
        return mine
    }

    /// Waits (bounded) for at least one offer for `member`, then takes them all.
    func waitOffers(for member: MemberID) -> [(generation: UInt64, sdp: String)] {
        var taken: [(generation: UInt64, sdp: String)] = []
        _ = eventually { taken += takeOffers(for: member); return !taken.isEmpty }
        return taken
    }

    func hasJoined(_ member: MemberID) -> Bool { lock.lock(); defer { lock.unlock() }; return joined.contains(member) }
    func leaveReason(_ member: MemberID) -> SFULeaveReason? {
        lock.lock()
        defer { lock.unlock() }
        return left.first { $0.0 == member }?.1
    }
}

/// What the tests drive on a single `SFUServer` and on an `SFUWorkerPool` alike.
protocol SFUMembership: AnyObject {
    func join(room: String, member: MemberID, offer: String, completion: @escaping (Result<SFUAnswerResult, SFUServerError>) -> Void)
    func applyAnswer(member: MemberID, generation: UInt64, sdp: String, completion: @escaping (Result<Void, SFUServerError>) -> Void)
    func leave(member: MemberID, completion: @escaping (Result<Void, SFUServerError>) -> Void)
}

extension SFUServer: SFUMembership {}
extension SFUWorkerPool: SFUMembership {}

extension SFUMembership {
    /// Blocking join for tests.
    func joinSync(room: String, member: MemberID, offer: String) -> Result<SFUAnswerResult, SFUServerError> {
        awaitCompletion { join(room: room, member: member, offer: offer, completion: $0) }
    }

    func applyAnswerSync(member: MemberID, generation: UInt64, sdp: String) -> Result<Void, SFUServerError> {
        awaitCompletion { applyAnswer(member: member, generation: generation, sdp: sdp, completion: $0) }
    }

    func leaveSync(member: MemberID) -> Result<Void, SFUServerError> {
        awaitCompletion { leave(member: member, completion: $0) }
    }

    private func awaitCompletion<T>(_ start: (@escaping (Result<T, SFUServerError>) -> Void) -> Void) -> Result<T, SFUServerError> {
        let done = DispatchSemaphore(value: 0)
        var result: Result<T, SFUServerError> = .failure(.notRunning)
        start { value in result = value; done.signal() }
        done.wait()
        return result
    }
}

/// Drives `clients` until `condition` holds or `timeout` s pass (a bound for failure).
/// 10 s, or SWITCHBOARD_TEST_DRIVE_TIMEOUT seconds (runs under valgrind are ~50 × slower).
let driveTimeout = ProcessInfo.processInfo.environment["SWITCHBOARD_TEST_DRIVE_TIMEOUT"].flatMap(Double.init) ?? 10

func drive(_ clients: [SyntheticClient], timeout: Double = driveTimeout, until condition: () -> Bool) throws -> Bool {
    let end = Date().addingTimeInterval(timeout)
    while Date() < end {
        let now = MediaLoop.monotonicMilliseconds()
        for client in clients { try client.pump(now: now) }
        if condition() { return true }
        usleep(500)
    }
    return condition()
}

/// Joins `client` and connects ICE + DTLS.
func joinAndConnect(_ client: SyntheticClient, server: some SFUMembership, room: String, events: ServerEvents,
                    others: [SyntheticClient] = []) throws {
    let answer = try server.joinSync(room: room, member: client.member, offer: client.offer()).get()
    try client.accept(serverDescription: answer.sdp)
    try client.sendCheck(now: MediaLoop.monotonicMilliseconds())
    XCTAssertTrue(try drive([client] + others) { client.checkAnswered }, "no STUN response for \(client.member)")
    try client.startDTLS(now: MediaLoop.monotonicMilliseconds())
    XCTAssertTrue(try drive([client] + others) { client.srtp != nil && events.hasJoined(client.member) },
                  "DTLS did not connect for \(client.member)")
}

/// Answers every outstanding server offer of `clients` until none comes for a while.
func settleOffers(_ clients: [SyntheticClient], server: some SFUMembership, events: ServerEvents) throws {
    var quietSince = Date()
    while Date().timeIntervalSince(quietSince) < 0.4 {
        var any = false
        for client in clients {
            for offer in events.takeOffers(for: client.member) {
                any = true
                let sdp = try client.answer(serverOffer: offer.sdp)
                XCTAssertNoThrow(try server.applyAnswerSync(member: client.member, generation: offer.generation, sdp: sdp).get())
            }
        }
        if any { quietSince = Date() }
        _ = try drive(clients, timeout: 0.02) { false }
    }
}
