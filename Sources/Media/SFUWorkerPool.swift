import DTLS
import Foundation
import Glibc

/// The SFU on several cores, still on ONE UDP port: `count` workers, each an `SFUServer`
/// with its own `MediaLoop` thread, socket, ICE-lite agent, `Router` and DTLS context (all
/// with the same certificate, so SDP carries one fingerprint), every socket bound to the
/// same host:port with SO_REUSEPORT.
///
/// Rooms are placed on workers: a room's first join goes to the worker with the fewest
/// members (ties: the lowest index) and every member of the room lives there, so forwarding
/// never crosses threads. The placement is released when the room's last member leaves.
///
/// The kernel spreads datagrams over the sockets by a 4-tuple hash, not by room, so a
/// member's packets may arrive at another worker: that worker looks the owner up in the
/// shared directory (ICE ufrag for STUN, validated 5-tuple for the rest) and hands the
/// datagram over (`MediaLoop+Handoff.swift`); the owner answers from its own socket, on the
/// same port. With one worker this is exactly one `SFUServer` (no SO_REUSEPORT).
///
/// Caveat of SO_REUSEPORT (socket(7)): another process of the same user binding the same
/// port with SO_REUSEPORT joins the group silently instead of failing with EADDRINUSE, and
/// gets a share of the datagrams. So the pool first claims the port with a socket without
/// the option (`UDPSocket.exclusivePort`): a port held by anyone fails with EADDRINUSE, and
/// port 0 gets a port that no group holds (claimed again if another socket takes it before
/// the first worker binds it). A process that joins later with SO_REUSEPORT still gets in;
/// another switchboard does not, as it claims first.
///
/// The public methods mirror `SFUServer`'s: any thread; completions and callbacks on the
/// owning worker's loop thread. Set the callbacks before `start`.
public final class SFUWorkerPool {
    /// The workers, index = worker number (tests, stats).
    public let workers: [SFUServer]
    let group: MediaLoopGroup?
    private let lock = NSLock()
    private var roomWorker: [String: Int] = [:]
    private var roomMembers: [String: Int] = [:]
    private var memberPlacement: [MemberID: Placement] = [:]
    private var nextEpoch: UInt64 = 1
    private var workerMembers: [Int]

    /// See `SFUServer.onOffer` (loop thread of the member's worker).
    public var onOffer: (_ member: MemberID, _ generation: UInt64, _ sdp: String) -> Void = { _, _, _ in }
    /// See `SFUServer.onMemberJoined`.
    public var onMemberJoined: (_ room: String, _ member: MemberID) -> Void = { _, _ in }
    /// See `SFUServer.onMemberLeft`; the member's placement is already released (for
    /// `.left`: once the `leave` completion ran).
    public var onMemberLeft: (_ room: String, _ member: MemberID, _ reason: SFULeaveReason) -> Void = { _, _, _ in }
    /// See `SFUServer.onActiveSpeaker`.
    public var onActiveSpeaker: (_ room: String, _ member: MemberID?) -> Void = { _, _ in }

    /// Online CPUs (sysconf(_SC_NPROCESSORS_ONLN)), at least 1: the default worker count,
    /// one loop thread per core.
    public static var onlineProcessors: Int { max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))) }
    /// At most 256 workers: far above any core count we deploy on; bounds the inboxes
    /// (~3.3 MB each: two 1.5 MB arenas).
    public static let maxWorkers = 256

    /// 3 claims of an ephemeral port: another socket can take the claimed port in the
    /// microseconds before the first worker binds it, rarely, and twice in a row not at all
    /// in practice; a fixed bound keeps a real failure a failure.
    static let ephemeralClaims = 3

    /// Opens every worker's socket on the configured port (0: an ephemeral port that no other
    /// socket holds, the same for all) and prepares DTLS; `count` is clamped to 1…`maxWorkers`.
    public convenience init(configuration: MediaConfiguration, workers count: Int = SFUWorkerPool.onlineProcessors) throws {
        try self.init(configuration: configuration, workers: count, claimed: { _ in })
    }

    /// `claimed` sees each port claimed for several workers before they bind it (tests).
    init(configuration: MediaConfiguration, workers count: Int, claimed: (UInt16) -> Void) throws {
        let count = min(max(1, count), Self.maxWorkers)
        let certificate = try configuration.certificate ?? DTLSCertificate.generate(commonName: "switchboard-sfu")
        let baseSeed = configuration.ssrcSeed ?? UInt64.random(in: 1...UInt64.max)
        var servers: [SFUServer] = []
        for claim in 1 ... Self.ephemeralClaims {
            do {
                servers = try Self.makeWorkers(configuration, count: count, certificate: certificate, baseSeed: baseSeed, claimed: claimed)
                break
            } catch UDPSocketError.bindFailed(let code) where code == EADDRINUSE && count > 1 && configuration.port == 0
                        && claim < Self.ephemeralClaims {
                continue   // the claimed ephemeral port was taken before the first worker bound it
            }
        }
        workers = servers
        workerMembers = Array(repeating: 0, count: count)
        if count > 1 {
            let inboxes = try servers.map { _ in try MediaLoopInbox() }
            let group = MediaLoopGroup(inboxes: inboxes)
            for (index, server) in servers.enumerated() { server.loop.attach(to: group, index: index) }
            self.group = group
        } else {
            group = nil
        }
        for (index, server) in servers.enumerated() {
            server.onOffer = { [unowned self] member, generation, sdp in onOffer(member, generation, sdp) }
            server.onMemberJoined = { [unowned self] room, member in onMemberJoined(room, member) }
            server.onMemberLeft = { [unowned self] room, member, reason in
                // `.left` is `leave`'s echo: its completion releases (by epoch, see there).
                if reason != .left { release(member, worker: index) }
                onMemberLeft(room, member, reason)
            }
            server.onActiveSpeaker = { [unowned self] room, member in onActiveSpeaker(room, member) }
        }
    }

    deinit { stop() }

    /// One `SFUServer` per worker. Several workers share one port (SO_REUSEPORT), which is
    /// claimed first so that none of them joins another process's group.
    private static func makeWorkers(_ configuration: MediaConfiguration, count: Int, certificate: DTLSCertificate,
                                    baseSeed: UInt64, claimed: (UInt16) -> Void) throws -> [SFUServer] {
        var sharedPort = configuration.port
        if count > 1 {
            sharedPort = try UDPSocket.exclusivePort(host: configuration.host, port: configuration.port)
            claimed(sharedPort)
        }
        var servers: [SFUServer] = []
        for index in 0..<count {
            var worker = configuration
            worker.certificate = certificate
            // Distinct SSRC sequences per worker: golden-ratio steps (SplitMix64's increment).
            worker.ssrcSeed = baseSeed &+ UInt64(index) &* 0x9E37_79B9_7F4A_7C15
            if count > 1 {
                worker.loop.reusePort = true
                worker.port = sharedPort
            }
            servers.append(try SFUServer(configuration: worker))
        }
        return servers
    }

    /// The one UDP port of every worker.
    public var port: UInt16 { workers[0].port }
    /// The certificate's SHA-256 fingerprint as in SDP (the same for every worker).
    public var fingerprint: String { workers[0].fingerprint }

    public func start() { for worker in workers { worker.start() } }

    public func stop() { for worker in workers { worker.stop() } }

    // MARK: Placement

    /// The worker a room lives on, while it has members (or a join in flight).
    public func worker(ofRoom room: String) -> Int? { lock.withLock { roomWorker[room] } }

    /// The worker a member lives on.
    public func worker(of member: MemberID) -> Int? { lock.withLock { memberPlacement[member]?.worker } }

    /// Members (including joins in flight) per worker.
    public var membersPerWorker: [Int] { lock.withLock { workerMembers } }

    /// Where a member lives. `epoch` tells this placement from a later one of the same
    /// member (leave and rejoin race on different threads).
    private struct Placement {
        var worker: Int
        var room: String
        var epoch: UInt64
    }

    /// The member's worker, placing it (and its room, on first join) when new. `reserved`:
    /// the epoch of the placement this call created (undone if the join fails).
    private func place(_ member: MemberID, room: String) -> (worker: Int, reserved: UInt64?) {
        lock.withLock {
            if let placement = memberPlacement[member] { return (placement.worker, nil) }
            let worker: Int
            if let placed = roomWorker[room] {
                worker = placed
            } else {
                // Fewest members; `min(by:)` keeps the first of equals, i.e. the lowest index.
                worker = workerMembers.indices.min { workerMembers[$0] < workerMembers[$1] } ?? 0
            }
            return (worker, add(member, room: room, worker: worker))
        }
    }

    /// Records a placement (lock held); returns its epoch.
    private func add(_ member: MemberID, room: String, worker: Int) -> UInt64 {
        let epoch = nextEpoch
        nextEpoch &+= 1
        roomWorker[room] = worker
        memberPlacement[member] = Placement(worker: worker, room: room, epoch: epoch)
        roomMembers[room, default: 0] += 1
        workerMembers[worker] += 1
        return epoch
    }

    /// After a successful join: the member is on `worker`; re-records the placement if a
    /// leave that raced ahead of the join released it.
    private func confirm(_ member: MemberID, room: String, worker: Int) {
        lock.withLock {
            guard memberPlacement[member] == nil else { return }
            _ = add(member, room: room, worker: worker)
        }
    }

    /// Forgets the member's placement — if it is on `worker` and, when given, still of
    /// `epoch` — and the room's when it empties.
    private func release(_ member: MemberID, worker: Int, epoch: UInt64? = nil) {
        lock.withLock {
            guard let placement = memberPlacement[member], placement.worker == worker,
                  epoch == nil || placement.epoch == epoch else { return }
            memberPlacement[member] = nil
            workerMembers[worker] -= 1
            let left = (roomMembers[placement.room] ?? 1) - 1
            if left > 0 {
                roomMembers[placement.room] = left
            } else {
                roomMembers[placement.room] = nil
                roomWorker[placement.room] = nil
            }
        }
    }

    // MARK: API (mirrors SFUServer)

    /// See `SFUServer.join`: on the room's worker (placed on first join).
    public func join(room: String, member: MemberID, offer: String,
                     completion: @escaping (Result<SFUAnswerResult, SFUServerError>) -> Void) {
        let (worker, reserved) = place(member, room: room)
        workers[worker].join(room: room, member: member, offer: offer) { [weak self] result in
            switch result {
            case .success: self?.confirm(member, room: room, worker: worker)
            case .failure: if let reserved { self?.release(member, worker: worker, epoch: reserved) }
            }
            completion(result)
        }
    }

    /// See `SFUServer.applyAnswer`.
    public func applyAnswer(member: MemberID, generation: UInt64, sdp: String,
                            completion: @escaping (Result<Void, SFUServerError>) -> Void) {
        guard let worker = worker(of: member) else { return completion(.failure(.unknownMember)) }
        workers[worker].applyAnswer(member: member, generation: generation, sdp: sdp, completion: completion)
    }

    /// See `SFUServer.leave`. The placement is released when the worker has removed the
    /// member, unless the member rejoined meanwhile (a newer placement epoch).
    public func leave(member: MemberID, completion: @escaping (Result<Void, SFUServerError>) -> Void = { _ in }) {
        let placement: (worker: Int, epoch: UInt64)? = lock.withLock { memberPlacement[member].map { ($0.worker, $0.epoch) } }
        guard let placement else { return completion(.failure(.unknownMember)) }
        workers[placement.worker].leave(member: member) { [weak self] result in
            if case .success = result { self?.release(member, worker: placement.worker, epoch: placement.epoch) }
            completion(result)
        }
    }

    /// Per-worker snapshots and their sum (completion on the last worker's loop thread).
    public func stats(completion: @escaping (SFUWorkerPoolStats) -> Void) {
        collect(from: 0, into: [], completion: completion)
    }

    private func collect(from index: Int, into gathered: [SFUServerStats], completion: @escaping (SFUWorkerPoolStats) -> Void) {
        guard index < workers.count else { return completion(SFUWorkerPoolStats(workers: gathered, placements: membersPerWorker)) }
        workers[index].stats { [weak self] value in
            guard let self else { return completion(SFUWorkerPoolStats(workers: gathered + [value], placements: [])) }
            collect(from: index + 1, into: gathered + [value], completion: completion)
        }
    }

    /// Blocking snapshot (not from a worker's loop thread while others run).
    public func stats() -> SFUWorkerPoolStats {
        SFUWorkerPoolStats(workers: workers.map { $0.stats() }, placements: membersPerWorker)
    }
}
