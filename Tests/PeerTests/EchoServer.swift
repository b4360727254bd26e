import DTLS
import Foundation
import ICE
import Media
import Peer
import RTP
import SDP
import SRTP

/// Test harness: an SFU-shaped server built from the real server-side parts — MediaLoop with
/// its ICE-lite agent on one UDP port of 127.0.0.1, one DTLS server endpoint and one SRTP
/// session per ICE session — that answers an offer with the real `SFUAnswerBuilder` and echoes
/// every SRTP packet back on a rewritten SSRC (unprotect → SSRC ^ `ssrcMask` → protect → send).
final class EchoServer {
    /// The echoed stream of SSRC s is s ^ this (distinct, and recoverable in assertions).
    static let ssrcMask: UInt32 = 0x5EED_5EED

    struct Stats {
        var echoed: UInt64 = 0
        var unprotectFailures: UInt64 = 0
        var profiles: [DTLSSRTPProfile] = []
        var dtlsFailures: [String] = []
        /// Authenticated connectivity/consent checks per ICE session (RFC 7675 §5.1).
        var validatedChecks: [ICESessionID: Int] = [:]
        /// Every RTCP packet the peers sent (parsed with the RTP module), and SRTCP failures.
        var rtcp: [RTCPPacket] = []
        var rtcpFailures: UInt64 = 0
    }

    /// SSRC of the receiver reports the harness answers sender reports with.
    static let reporterSSRC: UInt32 = 0xEC40_0001

    /// The ICE session registered by the last `answer(offer:)`.
    private(set) var lastSession: ICESessionID?

    let media: MediaLoop
    let certificate: DTLSCertificate
    let context: DTLSContext
    // Loop-thread state.
    private var endpoints: [ICESessionID: DTLSEndpoint] = [:]
    private var sessions: [ICESessionID: SRTPSession] = [:]
    private var scratch = [UInt8](repeating: 0, count: 1500)
    /// When set (server-offer test), every echoed packet goes out on this SSRC instead.
    private var fixedEchoSSRC: UInt32?
    private let lock = NSLock()
    private var statsStorage = Stats()

    var stats: Stats { lock.lock(); defer { lock.unlock() }; return statsStorage }

    init() throws {
        try SRTPLibrary.ensureInitialized()
        media = try MediaLoop(configuration: MediaLoopConfiguration(host: "127.0.0.1", port: 0))
        certificate = try DTLSCertificate.generate(commonName: "echo-server")
        context = try DTLSContext(certificate: certificate)
        media.onDTLS = { [unowned self] loop, session, bytes, now in
            guard let endpoint = endpoints[session] else { return }
            handle(endpoint.handle(datagram: bytes, now: now), session: session, loop: loop)
        }
        media.onRTP = { [unowned self] loop, session, bytes, _ in echo(bytes, session: session, loop: loop) }
        media.onRTCP = { [unowned self] loop, session, bytes, _ in rtcp(bytes, session: session, loop: loop) }
        media.onICEEvent = { [unowned self] _, event, _ in
            if case .checkValidated(let session, _, _) = event {
                lock.lock(); statsStorage.validatedChecks[session, default: 0] += 1; lock.unlock()
            }
        }
        media.onTimer = { [unowned self] loop, now in
            for (session, endpoint) in endpoints {
                if let deadline = endpoint.nextTimeout, deadline <= now {
                    handle(endpoint.handleTimeout(now: now), session: session, loop: loop)
                }
            }
            // 50 ms: DTLS retransmissions are ≥ 1 s apart; this is fine enough and cheap.
            return now + 50
        }
        media.start()
    }

    deinit { media.stop() }

    func stop() { media.stop() }

    /// Registers an ICE-lite session for the offer and answers it: ice-lite, our ufrag/pwd,
    /// the MediaLoop's one host candidate, our fingerprint, setup:passive, and sendrecv with an
    /// echo track per offered SSRC.
    func answer(offer text: String) throws -> String {
        let offer = try SessionDescription(parsing: text)
        guard let first = offer.media.first, let remoteUfrag = offer.iceUfrag(for: first),
              let fingerprint = try offer.fingerprints(for: first).first else { throw PeerError.invalidRemoteDescription("offer") }
        let expected = DTLSFingerprint(algorithm: .sha256, bytes: fingerprint.bytes)
        let ufrag = "echo" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
        let password = (0..<24).map { _ in "abcdefghijklmnopqrstuvwxyz0123456789".randomElement()! }.map(String.init).joined()
        let endpoint = try DTLSEndpoint(role: .server, context: context, expectedRemoteFingerprint: expected)
        let remotePassword = offer.icePwd(for: first)
        let session: ICESessionID = try run { loop in
            Result { try loop.ice.register(localUfrag: ufrag, localPassword: password, remoteUfrag: remoteUfrag,
                                           remotePassword: remotePassword, now: MediaLoop.monotonicMilliseconds()) }
        }.get()
        run { _ in self.endpoints[session] = endpoint }
        lastSession = session

        let candidate = try ICECandidate(attributeValue: try XCTUnwrapOrThrow(media.candidateAttribute()))
        let transport = SFUTransportParameters(
            iceUfrag: ufrag, icePwd: password,
            fingerprint: Fingerprint(hashFunction: "sha-256", bytes: certificate.sha256Fingerprint.bytes),
            candidates: [candidate])
        var directions: [String: Direction] = [:]
        var tracks: [String: ForwardedTrack] = [:]
        for section in offer.media {
            guard let mid = section.mid else { continue }
            directions[mid] = .sendrecv
            if let ssrc = try section.ssrcs().first {
                tracks[mid] = ForwardedTrack(streamID: "echo", trackID: "echo-\(mid)", ssrc: ssrc ^ Self.ssrcMask, cname: "echo")
            }
        }
        let builder = SFUAnswerBuilder(transport: transport, sessionID: "4242", directions: directions, sendingTracks: tracks)
        return try builder.answer(to: offer).sdp
    }

    /// A server-initiated session (§9: the server offers the forwarded tracks): `sections` of
    /// the real `SFUOfferBuilder` with ice-lite and setup:actpass. Returns the offer; feed the
    /// peer's answer to `accept(answer:)`. Echoed packets go out on `echoSSRC`.
    func offer(sections: [SFUOfferBuilder.Section], echoSSRC: UInt32,
               adjust: (inout SessionDescription) -> Void = { _ in }) throws -> String {
        // Renegotiation keeps the transport (no ICE restart): same credentials as before.
        let ufrag = pendingCredentials?.ufrag ?? "echo" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
        let password = "echoServerPassword0123456789"
        pendingCredentials = (ufrag, password)
        run { _ in self.fixedEchoSSRC = echoSSRC }
        let candidate = try ICECandidate(attributeValue: try XCTUnwrapOrThrow(media.candidateAttribute()))
        let transport = SFUTransportParameters(
            iceUfrag: ufrag, icePwd: password,
            fingerprint: Fingerprint(hashFunction: "sha-256", bytes: certificate.sha256Fingerprint.bytes),
            candidates: [candidate])
        var description = SFUOfferBuilder(transport: transport, sessionID: "4343").offer(sections: sections)
        adjust(&description)
        return description.serialized
    }

    private var pendingCredentials: (ufrag: String, password: String)?

    /// Takes the device's answer to `offer(sections:)`: registers the ICE-lite session with its
    /// ufrag and a DTLS server endpoint expecting its fingerprint.
    func accept(answer text: String) throws {
        let answer = try SessionDescription(parsing: text)
        guard let credentials = pendingCredentials, let first = answer.media.first(where: { !$0.isRejected }),
              let remoteUfrag = answer.iceUfrag(for: first),
              let fingerprint = try answer.fingerprints(for: first).first else { throw PeerError.invalidRemoteDescription("answer") }
        guard try answer.setup(for: first) == .active else { throw PeerError.invalidRemoteDescription("expected setup:active") }
        let endpoint = try DTLSEndpoint(role: .server, context: context,
                                        expectedRemoteFingerprint: DTLSFingerprint(algorithm: .sha256, bytes: fingerprint.bytes))
        let remotePassword = answer.icePwd(for: first)
        let session: ICESessionID = try run { loop in
            Result { try loop.ice.register(localUfrag: credentials.ufrag, localPassword: credentials.password,
                                           remoteUfrag: remoteUfrag, remotePassword: remotePassword,
                                           now: MediaLoop.monotonicMilliseconds()) }
        }.get()
        run { _ in self.endpoints[session] = endpoint }
    }

    // MARK: - Loop thread.

    private func handle(_ outputs: [DTLSOutput], session: ICESessionID, loop: MediaLoop) {
        for output in outputs {
            switch output {
            case .send(let bytes): loop.send(bytes, to: session)
            case .connected(let keys):
                guard let profile = SRTPProfile(rawValue: keys.profile.rawValue),
                      let srtp = try? SRTPSession(profile: profile, localKey: keys.localKey, localSalt: keys.localSalt,
                                                  remoteKey: keys.remoteKey, remoteSalt: keys.remoteSalt) else { continue }
                sessions[session] = srtp
                lock.lock(); statsStorage.profiles.append(keys.profile); lock.unlock()
            case .failed(let error), .dropped(let error):
                lock.lock(); statsStorage.dtlsFailures.append("\(error)"); lock.unlock()
            case .closed: break
            }
        }
    }

    private func echo(_ bytes: UnsafeRawBufferPointer, session: ICESessionID, loop: MediaLoop) {
        guard let srtp = sessions[session], bytes.count <= scratch.count else { return }
        let echoed: Int? = scratch.withUnsafeMutableBytes { buffer -> Int? in
            buffer.copyMemory(from: bytes)
            guard let length = try? srtp.unprotectRTP(buffer, length: bytes.count), length >= 12 else { return nil }
            let ssrc = UInt32(buffer[8]) << 24 | UInt32(buffer[9]) << 16 | UInt32(buffer[10]) << 8 | UInt32(buffer[11])
            let echoSSRC = fixedEchoSSRC ?? ssrc ^ Self.ssrcMask
            for i in 8..<12 { buffer[i] = UInt8(truncatingIfNeeded: echoSSRC >> UInt32(8 * (11 - i))) }
            guard let protected = try? srtp.protectRTP(buffer, length: length) else { return nil }
            _ = loop.send(UnsafeRawBufferPointer(rebasing: buffer[0..<protected]), to: session)
            return protected
        }
        lock.lock()
        if echoed != nil { statsStorage.echoed += 1 } else { statsStorage.unprotectFailures += 1 }
        lock.unlock()
    }

    /// Records the peer's RTCP and answers each sender report with a receiver report whose
    /// block carries LSR = the SR's NTP middle bits and DLSR = 0, so the peer can compute RTT.
    private func rtcp(_ bytes: UnsafeRawBufferPointer, session: ICESessionID, loop: MediaLoop) {
        guard let srtp = sessions[session] else { return }
        var packet = Array(bytes)
        guard (try? srtp.unprotectRTCP(&packet)) != nil, let parsed = try? RTCPCompound.parse(packet) else {
            lock.lock(); statsStorage.rtcpFailures += 1; lock.unlock()
            return
        }
        lock.lock(); statsStorage.rtcp += parsed; lock.unlock()
        for case .senderReport(let report) in parsed {
            let block = RTCPReportBlock(ssrc: report.ssrc, fractionLost: 0, cumulativeLost: 0, extendedHighestSequenceNumber: 0,
                                        jitter: 0, lastSenderReport: NTPTime.middle32(report.ntpTimestamp),
                                        delaySinceLastSenderReport: 0)
            guard var reply = try? RTCPCompound.serialize([.receiverReport(RTCPReceiverReport(ssrc: Self.reporterSSRC, reportBlocks: [block]))]) else { continue }
            reply.reserveCapacity(reply.count + srtp.profile.rtcpOverhead)
            guard (try? srtp.protectRTCP(&reply)) != nil else { continue }
            loop.send(reply, to: session)
        }
    }

    /// Runs `work` on the media loop thread and waits for its result.
    private func run<T>(_ work: @escaping (MediaLoop) -> T) -> T {
        let box = Box<T>()
        let done = DispatchSemaphore(value: 0)
        media.perform { loop in
            box.value = work(loop)
            done.signal()
        }
        done.wait()
        return box.value!
    }

    private final class Box<T> { var value: T? }
}

/// Unwraps or throws (harness code outside XCTest assertions).
func XCTUnwrapOrThrow<T>(_ value: T?, _ what: String = "value") throws -> T {
    guard let value else { throw PeerError.invalidParameter("missing \(what)") }
    return value
}
