import DTLS
import Foundation
import Glibc
import ICE
import RTP
import SDP
import SFU
import SRTP

/// The SFU media plane: one `MediaLoop` (one UDP port, ICE-lite), DTLS-SRTP per member,
/// the `Router` deciding forwards, and the SDP negotiation with each member (protocol §9).
///
/// Threading: every piece of state belongs to the loop thread. The public methods are
/// callable from any thread: they hop onto the loop with `perform` and call their
/// completion (and the `on…` callbacks) **on the loop thread**; callers hop back to their
/// own thread themselves and must not block in them.
///
/// Hot path (`onRTP`): SRTP is removed in place in the loop's receive slot, the router fills
/// a reused `ForwardingBatch`, and each forward is written into one preallocated scratch
/// buffer, admitted to the send-side pacer (SFUServer+Pacing.swift: sent at once while the
/// subscriber's budget allows, else copied into the pacer's preallocated pool and released by
/// the timer), protected in place with the subscriber's SRTP context and queued for
/// sendmmsg — no heap allocation per packet.
public final class SFUServer {
    public let configuration: MediaConfiguration
    public let loop: MediaLoop
    public let certificate: DTLSCertificate
    let dtlsContext: DTLSContext
    let router: Router
    let answerCodecs: [SFUCodec]

    /// The server renegotiates: its offer for `member` with the new generation (protocol §9
    /// `sfu.offer` s→c), emitted when the member's receive set changed, at most one
    /// outstanding per member. Loop thread.
    public var onOffer: (_ member: MemberID, _ generation: UInt64, _ sdp: String) -> Void = { _, _, _ in }
    /// A member's DTLS is connected: media flows (protocol §9 `room.memberJoined`). Loop thread.
    public var onMemberJoined: (_ room: String, _ member: MemberID) -> Void = { _, _ in }
    /// A member was removed (protocol §9 `room.memberLeft`). Loop thread.
    public var onMemberLeft: (_ room: String, _ member: MemberID, _ reason: SFULeaveReason) -> Void = { _, _, _ in }
    /// A room's dominant speaker changed (nil: nobody speaks any more). Loop thread.
    public var onActiveSpeaker: (_ room: String, _ member: MemberID?) -> Void = { _, _ in }

    // Loop-thread state.
    var members: [MemberID: MediaParticipant] = [:]
    var bySession: [ICESessionID: MediaParticipant] = [:]
    /// Indexed by `ParticipantID.raw` (hot path: no hashing per forward).
    var slots: [MediaParticipant?] = [nil]
    var freeSlots: [UInt32] = []
    /// Members whose DTLS handshake runs (retransmission timers to drive).
    var handshaking: [ObjectIdentifier: MediaParticipant] = [:]
    /// Members whose receive set changed and who need a server offer.
    var dirty: [ObjectIdentifier: MediaParticipant] = [:]
    var counters = SFUServerCounters()
    var batch: ForwardingBatch
    /// One scratch buffer for forwards and outgoing RTCP: 2 KB > any forwarded packet
    /// (max datagram 1,500 minus nothing we add but the SRTP tag and a 4-byte
    /// transport-cc element) — `MediaLoopConfiguration.maxDatagramSize` bounds inputs.
    /// Subscribers' NACK answers drained from the router; reused, so answering allocates
    /// nothing once it has grown to the largest NACK seen.
    var pendingRetransmissions: [PendingRetransmission] = {
        var pending: [PendingRetransmission] = []
        pending.reserveCapacity(Router.nackScratchCapacity)
        return pending
    }()
    /// Subscribers with probe padding due (reused per timer tick).
    var probing: [ParticipantID] = []
    let scratch: UnsafeMutableRawBufferPointer
    /// Send-side pacer of this worker (SFUServer+Pacing.swift): one pool of packet slots for
    /// all subscribers, allocated here once (`PacerConfig.slotCount` × the scratch size).
    let pacer: Pacer
    /// When the timer's housekeeping (RTCP, DTLS timers, renegotiation) runs next, ms; the
    /// timer runs more often while the pacer has packets queued.
    var nextHousekeeping: Int64 = .min
    /// Tests: pace every subscriber as if its downlink estimate were this (bit/s) instead of
    /// the router's (`Router.pacingEstimate`). Loop thread.
    var pacingEstimateOverride: UInt64?
    var loopThread: pthread_t?
    private var started = false
    private let stateLock = NSLock()

    /// Opens the UDP port (bound now, so `port` is known before `start`) and prepares DTLS.
    public init(configuration: MediaConfiguration) throws {
        self.configuration = configuration
        var loopConfiguration = configuration.loop
        loopConfiguration.host = configuration.host
        loopConfiguration.port = configuration.port
        loopConfiguration.announcedHost = configuration.announcedHost
        loopConfiguration.announcedPort = configuration.announcedPort
        loop = try MediaLoop(configuration: loopConfiguration)
        certificate = try configuration.certificate ?? DTLSCertificate.generate(commonName: "switchboard-sfu")
        dtlsContext = try DTLSContext(certificate: certificate, srtpProfiles: configuration.srtpProfiles)
        try SRTPLibrary.ensureInitialized()
        var seed = configuration.ssrcSeed ?? UInt64.random(in: 1...UInt64.max)
        if seed == 0 { seed = 1 }
        var routerConfig = RouterConfig(ssrcSeed: seed)
        routerConfig.holdUntilNegotiated = true  // forward only m-lines the member has applied
        router = Router(config: routerConfig)
        answerCodecs = configuration.codecs
        batch = ForwardingBatch(capacity: 1024)
        scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: max(2048, loopConfiguration.maxDatagramSize + 64), alignment: 16)
        var pacerConfig = PacerConfig()
        pacerConfig.slotSize = scratch.count
        pacer = Pacer(config: pacerConfig)
        loop.ice.consentTimeoutMilliseconds = configuration.consentTimeoutMilliseconds
        installHandlers()
    }

    deinit {
        stop()
        scratch.deallocate()
    }

    /// The bound UDP port.
    public var port: UInt16 { loop.localAddress.port }
    /// The certificate's SHA-256 fingerprint as in SDP ("sha-256 AB:CD:…").
    public var fingerprint: String { certificate.sha256Fingerprint.sdpValue }

    /// Starts the loop thread.
    public func start() {
        stateLock.lock()
        defer { stateLock.unlock() }
        guard !started else { return }
        started = true
        loop.perform { [unowned self] _ in loopThread = pthread_self() }
        loop.start()
    }

    /// Stops the loop thread (members stay registered; a stopped server is not restarted).
    public func stop() {
        stateLock.lock()
        let wasStarted = started
        started = false
        stateLock.unlock()
        guard wasStarted else { return }
        loop.stop()
    }

    var isRunning: Bool {
        stateLock.lock()
        defer { stateLock.unlock() }
        return started
    }

    /// Runs `work` on the loop thread, or `notRunning` at once when the loop is stopped
    /// (a stopped loop never runs queued work, so the completion would never come).
    func onLoop(_ work: @escaping () -> Void, notRunning: () -> Void) {
        guard isRunning else { return notRunning() }
        loop.perform { _ in work() }
    }

    var isOnLoopThread: Bool {
        guard let loopThread else { return false }
        return pthread_equal(loopThread, pthread_self()) != 0
    }

    private func installHandlers() {
        loop.onDTLS = { [unowned self] loop, session, bytes, now in handleDTLS(session, bytes, now: now) }
        loop.onRTP = { [unowned self] loop, session, bytes, now in handleRTP(session, bytes) }
        loop.onRTCP = { [unowned self] loop, session, bytes, now in handleRTCPPacket(session, bytes) }
        loop.onICEEvent = { [unowned self] loop, event, now in handleICE(event, now: now) }
        loop.onTimer = { [unowned self] loop, now in timer(now: now) }
    }

    // MARK: - Public API (any thread; completions on the loop thread)

    /// A member's offer: joins `room` (first offer) or renegotiates (later offers, incl.
    /// ICE restart). The completion gets the answer, or a typed error.
    public func join(room: String, member: MemberID, offer: String,
                     completion: @escaping (Result<SFUAnswerResult, SFUServerError>) -> Void) {
        onLoop({ [unowned self] in
            let now = MediaLoop.monotonicMilliseconds()
            completion(Result { () throws(SFUServerError) in try handleOffer(room: room, member: member, offer: offer, now: now) })
        }, notRunning: { completion(.failure(.notRunning)) })
    }

    /// A member's answer to the server offer of `generation`.
    public func applyAnswer(member: MemberID, generation: UInt64, sdp: String,
                            completion: @escaping (Result<Void, SFUServerError>) -> Void) {
        onLoop({ [unowned self] in
            let now = MediaLoop.monotonicMilliseconds()
            completion(Result { () throws(SFUServerError) in try handleAnswer(member: member, generation: generation, sdp: sdp, now: now) })
        }, notRunning: { completion(.failure(.notRunning)) })
    }

    /// Removes a member (its tracks stop, the others are renegotiated). `onMemberLeft` fires
    /// with `.left`; the completion gets `unknownMember` if it was not there.
    public func leave(member: MemberID, completion: @escaping (Result<Void, SFUServerError>) -> Void = { _ in }) {
        onLoop({ [unowned self] in
            guard let participant = members[member] else { return completion(.failure(.unknownMember)) }
            remove(participant, reason: .left, now: MediaLoop.monotonicMilliseconds())
            completion(.success(()))
        }, notRunning: { completion(.failure(.notRunning)) })
    }

    /// A snapshot of counters and per-member figures (completion on the loop thread).
    public func stats(completion: @escaping (SFUServerStats) -> Void) {
        onLoop({ [unowned self] in completion(snapshot()) }, notRunning: { completion(snapshot()) })
    }

    /// Blocking snapshot: from any thread but the loop's own (there it is computed directly).
    public func stats() -> SFUServerStats {
        if isOnLoopThread || !isRunning { return snapshot() }
        let done = DispatchSemaphore(value: 0)
        var result: SFUServerStats?
        stats { value in
            result = value
            done.signal()
        }
        done.wait()
        return result ?? snapshot()
    }
}
