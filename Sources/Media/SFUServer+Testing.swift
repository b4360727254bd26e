import SFU

/// Hooks for tests and benchmarks that need router control the signaling protocol does not
/// expose yet (simulcast layer pinning; which SSRCs a member receives). Internal: reached
/// through `@testable import Media`. Like the public API: any thread, completion on the
/// loop thread, `notRunning` when the loop is stopped.
extension SFUServer {
    /// One track a member receives: whose, which kind, and the SSRCs on the member's leg.
    struct ReceivedTrack: Equatable, Sendable {
        var publisher: MemberID
        /// The publisher's mid (TrackID).
        var track: String
        var isVideo: Bool
        var ssrc: UInt32
        /// RTX SSRC towards the member (used when it negotiated RTX for the codec).
        var rtxSSRC: UInt32
    }

    /// What `member` receives, from the router's subscriptions.
    func receivedTracks(of member: MemberID, completion: @escaping (Result<[ReceivedTrack], SFUServerError>) -> Void) {
        onLoop({ [unowned self] in
            guard let participant = members[member] else { return completion(.failure(.unknownMember)) }
            completion(.success(router.subscriptions(of: participant.id).compactMap { info in
                guard let publisher = slots[Int(info.publisher.raw)]?.member else { return nil }
                return ReceivedTrack(publisher: publisher, track: info.track.raw, isVideo: info.kind == .video,
                                     ssrc: info.ssrc, rtxSSRC: info.rtxSSRC)
            }))
        }, notRunning: { completion(.failure(.notRunning)) })
    }

    /// Pins the simulcast layer (0 = lowest) `subscriber` gets of `publisher`'s track `mid`
    /// (`Router.setTargetLayer`: switches at that layer's next keyframe, requested now).
    func setTargetLayer(subscriber: MemberID, publisher: MemberID, track mid: String, layer: Int,
                        completion: @escaping (Result<Void, SFUServerError>) -> Void) {
        onLoop({ [unowned self] in
            guard let to = members[subscriber], let from = members[publisher] else { return completion(.failure(.unknownMember)) }
            completion(Result { () throws(SFUServerError) in
                do throws(SFUError) { try router.setTargetLayer(subscriber: to.id, publisher: from.id, track: TrackID(mid), layer: layer) } catch {
                    throw .routerRejected(reason: error.code)
                }
            })
        }, notRunning: { completion(.failure(.notRunning)) })
    }
}
