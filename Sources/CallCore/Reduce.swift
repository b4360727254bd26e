/// The pure call-state reducer for 1:1 calls (call-design §3):
/// `reduce(state, event, now) -> (state, effects, outcome)`. No I/O, no clock reads.
///
/// The host has already authenticated the device and dropped repeated eventIDs; this function
/// is still idempotent for repeats that slip through (a second answer from the winner, a
/// second decline, a cancel after end): they return `unchanged` with no effects.
///
/// Terminal calls never leave `ended`. Events that only express an intent the terminal state
/// already satisfies (decline, cancel, hangup, media lost, deadlines) are `unchanged`; events
/// that need a live call (answer, ringing, negotiation, media connected) are rejected with
/// `callEnded`, so the host answers with the terminal snapshot and nothing re-rings.
public func reduce(_ state: CallState?, _ event: CallEvent, now: Int64, config: CallConfig) -> CallStep {
    if case .invite(let invite) = event {
        return reduceInvite(state, invite, now: now, config: config)
    }
    guard let state else { return .rejected(nil, .callNotFound) }
    if state.media == .sfu, event.carriesPeerToPeerNegotiation {
        // An SFU-routed call negotiates with the server's SFU in its room, never peer to peer.
        return .rejected(state, .invalidState)
    }
    switch event {
    case .invite:
        return .rejected(state, .invalidEvent)  // handled above
    case .ringing(let device):
        return reduceRinging(state, device: device)
    case .answer(let device, let seenRevision, let sdp):
        return reduceAnswer(state, device: device, seenRevision: seenRevision, sdp: sdp, now: now, config: config)
    case .decline(let device, let seenRevision):
        return reduceDecline(state, device: device, seenRevision: seenRevision, now: now)
    case .cancel(let device):
        return reduceCancel(state, device: device, now: now)
    case .hangup(let device):
        return reduceHangup(state, device: device, now: now)
    case .sdpOffer(let device, let generation, let sdp):
        return reduceOffer(state, device: device, generation: generation, sdp: sdp)
    case .sdpAnswer(let device, let generation, let sdp):
        return reduceSDPAnswer(state, device: device, generation: generation, sdp: sdp)
    case .iceCandidate(let device, let generation, let candidate):
        return reduceCandidate(state, device: device, generation: generation, candidate: candidate, config: config)
    case .mediaConnected(let device):
        return reduceMediaConnected(state, device: device)
    case .mediaLost(let device):
        return reduceMediaLost(state, device: device, now: now, config: config)
    case .deadlineFired(let kind):
        return reduceDeadline(state, kind: kind, now: now)
    }
}

extension CallStep {
    static func rejected(_ state: CallState?, _ code: CallRejection) -> CallStep {
        CallStep(state: state, effects: [], outcome: .rejected(code))
    }

    static func unchanged(_ state: CallState) -> CallStep {
        CallStep(state: state, effects: [], outcome: .unchanged)
    }

    static func accepted(_ state: CallState, _ effects: [CallEffect]) -> CallStep {
        CallStep(state: state, effects: effects, outcome: .accepted(revision: state.revision))
    }
}

extension CallState {
    /// Marks one accepted change (call-design §1: +1 on every accepted change).
    mutating func bumpRevision() {
        revision += 1
    }

    /// Marks an accepted change that moves the phase; answers/declines seen before it are stale.
    mutating func move(to newPhase: CallPhase) {
        revision += 1
        phase = newPhase
        phaseRevision = revision
    }

    /// The party on the other side of `device` (caller device ↔ winner), if any.
    func peer(of device: DeviceKey) -> DeviceKey? {
        guard let side = side(of: device) else { return nil }
        return party(side.other)
    }

    /// Whether `device` is the caller device or the winner.
    func isParty(_ device: DeviceKey) -> Bool {
        device == caller || (answeredBy != nil && device == answeredBy)
    }
}

extension CallEvent {
    /// SDP or ICE meant for the other device (not for the SFU).
    var carriesPeerToPeerNegotiation: Bool {
        switch self {
        case .answer(_, _, let sdp): return sdp != nil
        case .sdpOffer, .sdpAnswer, .iceCandidate: return true
        default: return false
        }
    }
}
