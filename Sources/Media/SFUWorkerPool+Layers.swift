import SFU

/// Why a subscriber's layer preference (`sfu.preferences`, docs/protocol.md §9) was refused
/// by the media plane. Closed set with stable codes.
public enum SFUPreferenceError: Error, Equatable, Sendable {
    /// The subscriber has no media session (no `sfu.offer` accepted yet, or it left).
    case noSession
    /// The publisher has no media session in the subscriber's room (or is the subscriber).
    case unknownPublisher
    /// The publisher sends the subscriber no video track with that mid.
    case unknownTrack
    /// A size that is not positive.
    case badSize
    /// A negative layer.
    case badLayer
    case notRunning

    public var code: String {
        switch self {
        case .noSession: "noSession"
        case .unknownPublisher: "unknownPublisher"
        case .unknownTrack: "unknownTrack"
        case .badSize: "badSize"
        case .badLayer: "badLayer"
        case .notRunning: "notRunning"
        }
    }
}

extension SFUServer {
    /// A subscriber's preference for one video track it receives, applied in one loop turn:
    /// the layer cap (`Router.setMaxLayer`; nil = none, i.e. `Int.max`) and the rendered size
    /// (`Router.setMaxSize`: the lowest layer covering it). Both replace earlier values, so
    /// every preference states the whole wish. Completion on the loop thread.
    public func setPreferences(member: MemberID, publisher: MemberID, mid: String, maxWidth: Int, maxHeight: Int, maxLayer: Int?,
                               completion: @escaping (Result<Void, SFUPreferenceError>) -> Void) {
        guard maxWidth > 0, maxHeight > 0 else { return completion(.failure(.badSize)) }
        if let maxLayer, maxLayer < 0 { return completion(.failure(.badLayer)) }
        onLoop({ [unowned self] in
            completion(applyPreferences(member: member, publisher: publisher, mid: mid, maxWidth: maxWidth, maxHeight: maxHeight,
                                        maxLayer: maxLayer))
        }, notRunning: { completion(.failure(.notRunning)) })
    }

    /// Loop thread. A refusal leaves the subscription as it was.
    func applyPreferences(member: MemberID, publisher: MemberID, mid: String, maxWidth: Int, maxHeight: Int,
                          maxLayer: Int?) -> Result<Void, SFUPreferenceError> {
        guard let subscriber = members[member] else { return .failure(.noSession) }
        guard let source = members[publisher], source !== subscriber, source.room == subscriber.room else {
            return .failure(.unknownPublisher)
        }
        let track = TrackID(mid)
        guard router.trackStats(source.id, track: track)?.kind == .video else { return .failure(.unknownTrack) }
        // Both calls find the same subscription and the size is checked above: the second
        // cannot fail once the first succeeded.
        do throws(SFUError) {
            try router.setMaxLayer(subscriber: subscriber.id, publisher: source.id, track: track, layer: maxLayer ?? .max)
            try router.setMaxSize(subscriber: subscriber.id, publisher: source.id, track: track, width: maxWidth, height: maxHeight)
            return .success(())
        } catch {
            switch error {
            case .badSize: return .failure(.badSize)
            case .badLayer: return .failure(.badLayer)
            default: return .failure(.unknownTrack)
            }
        }
    }
}

extension SFUWorkerPool {
    /// See `SFUServer.setPreferences`: on the subscriber's worker (a room lives on one
    /// worker, so its publishers are there too). `noSession` when the subscriber has none.
    public func setPreferences(member: MemberID, publisher: MemberID, mid: String, maxWidth: Int, maxHeight: Int, maxLayer: Int?,
                               completion: @escaping (Result<Void, SFUPreferenceError>) -> Void) {
        guard let worker = worker(of: member) else { return completion(.failure(.noSession)) }
        workers[worker].setPreferences(member: member, publisher: publisher, mid: mid, maxWidth: maxWidth, maxHeight: maxHeight,
                                       maxLayer: maxLayer, completion: completion)
    }
}
