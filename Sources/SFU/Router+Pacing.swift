// What the send-side pacer (`Pacer`, docs/rtcp.md "Pacing") needs from the router: the rate
// to pace a subscriber at, the kind of the packet just routed, and the repair of a frame the
// pacer dropped.
extension Router {
    /// The downlink estimate to pace `subscriber` by, bit/s; nil while it rests on no
    /// feedback from the subscriber (neither transport-cc nor REMB yet): the estimator's
    /// start value (300 kbit/s) is a guess, and pacing a client that never sends feedback at
    /// 2.5 × a guess would cap it for good. Receiver reports alone do not count either: their
    /// loss-based estimate only ever moves down from the guess.
    public func pacingEstimate(_ subscriber: ParticipantID, now: Int64) -> UInt64? {
        guard let state = participants[subscriber], state.downlink.transportFeedbacks > 0 || state.downlink.rembReceived > 0 else { return nil }
        return state.downlink.estimator.estimate(now: now)
    }

    /// The pacer dropped a frame of the stream `subscriber` receives as `ssrc`: its decoder's
    /// reference chain is broken, so nothing more of that stream is forwarded until a
    /// keyframe (the queue drains meanwhile instead of filling with undecodable frames), and
    /// the keyframe is requested (throttled like every request). At the keyframe the outgoing
    /// sequence continues after the last number assigned (`needsResync`), so what was skipped
    /// while waiting leaves no gap. False: no such subscription.
    @discardableResult
    public func pacerDroppedFrame(subscriber: ParticipantID, ssrc: UInt32) -> Bool {
        guard let state = participants[subscriber], let subscription = state.subscriptions[ssrc],
              let slot = subscription.slot, subscription.track.kind == .video else { return false }
        subscription.updateSlot { slot in
            slot.currentLayer = nil
            slot.waitingForKeyframe = true
            slot.needsResync = true
        }
        let layer = min(max(slot.targetLayer, 0), subscription.track.highestLayer)
        requestKeyframe(publisher: subscription.track.publisher, stream: subscription.track.streams[layer])
        return true
    }
}
