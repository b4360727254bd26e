/// Ringing-phase commands of callee and caller devices: ringing acknowledgement, answer
/// (compare-and-set arbitration, §3), decline (§4 case 13) and cancel.

func reduceRinging(_ state: CallState, device: DeviceKey) -> CallStep {
    guard let participation = state.participation[device] else { return .rejected(state, .notParticipant) }
    if state.phase.isTerminal { return .rejected(state, .callEnded) }
    switch participation {
    case .ringingAcknowledged:
        return .unchanged(state)
    case .ringing where state.phase == .ringing:
        let firstAcknowledgement = !state.participation.values.contains(.ringingAcknowledged)
        var next = state
        next.participation[device] = .ringingAcknowledged
        next.bumpRevision()
        let effects: [CallEffect] = firstAcknowledgement ? [.deliver(to: next.caller, .ringingOnCallee(next.snapshot))] : []
        return .accepted(next, effects)
    default:
        return .rejected(state, .notAllowed)
    }
}

/// Checks `seenRevision` against the phase change compare-and-set (see
/// ``CallState/phaseRevision``).
private func revisionCheck(_ state: CallState, _ seenRevision: Int64) -> CallRejection? {
    if seenRevision > state.revision { return .invalidRevision }
    if seenRevision < state.phaseRevision { return .staleRevision }
    return nil
}

func reduceAnswer(
    _ state: CallState, device: DeviceKey, seenRevision: Int64, sdp: SessionDescription?, now: Int64, config: CallConfig
) -> CallStep {
    guard let participation = state.participation[device] else { return .rejected(state, .notParticipant) }
    guard state.side(of: device) == .callee else { return .rejected(state, .notAllowed) }
    if state.phase.isTerminal { return .rejected(state, .callEnded) }
    if state.answeredBy == device { return .unchanged(state) }
    if state.phase != .ringing {
        return .rejected(state, seenRevision < state.phaseRevision ? .staleRevision : .notAllowed)
    }
    guard participation.isRinging else { return .rejected(state, .notAllowed) }
    if let code = revisionCheck(state, seenRevision) { return .rejected(state, code) }
    if sdp != nil, state.negotiation.pendingOffer?.side != .caller { return .rejected(state, .invalidState) }

    var next = state
    next.move(to: .connecting)
    next.answeredBy = device
    next.participation[device] = .answered
    let losers = state.calleeDevices.filter { $0 != device && (state.participation[$0]?.isRinging ?? false) }
    for loser in losers { next.participation[loser] = .stopped(.answeredElsewhere) }
    next.deadlines.ring = nil
    next.deadlines.inviteExpiry = nil
    next.deadlines.connect = now + config.connectTimeout

    if let sdp, let offer = state.negotiation.pendingOffer {
        next.negotiation.pendingOffer = nil
        next.negotiation.lastAnswer = NegotiatedDescription(side: .callee, generation: offer.generation, description: sdp)
        next.negotiation.noteDescription(sdp, of: .callee)
    }
    // The caller's buffer goes to the winner (it has the offer since the invite). The winner's
    // goes to the caller once the caller has the winner's answer. Losers' buffers are dropped.
    let callerBuffer = state.negotiation.buffered[state.caller]
    let winnerBuffer = state.negotiation.buffered[device]
    next.negotiation.buffered = [:]
    if sdp == nil, let winnerBuffer { next.negotiation.buffered[device] = winnerBuffer }

    let snapshot = next.snapshot
    var effects: [CallEffect] = []
    for kind in [DeadlineKind.ring, .inviteExpiry] where state.deadlines[kind] != nil {
        effects.append(.cancelDeadline(kind))
    }
    effects.append(.scheduleDeadline(.connect, at: now + config.connectTimeout))
    effects.append(.deliver(to: state.caller, .answered(snapshot, by: device, sdp: sdp)))
    if sdp != nil, let winnerBuffer, !winnerBuffer.candidates.isEmpty {
        effects.append(.deliver(to: state.caller, .iceCandidates(from: device, generation: winnerBuffer.generation, candidates: winnerBuffer.candidates)))
    }
    if let callerBuffer, !callerBuffer.candidates.isEmpty {
        effects.append(.deliver(to: device, .iceCandidates(from: state.caller, generation: callerBuffer.generation, candidates: callerBuffer.candidates)))
    }
    for loser in losers { effects.append(.deliver(to: loser, .stopped(.answeredElsewhere, snapshot))) }
    for other in state.callerOtherDevices where state.participation[other] == .inProgressElsewhere {
        effects.append(.deliver(to: other, .inProgressElsewhere(snapshot)))
    }
    effects += stopPushes(state, devices: losers, reason: .answeredElsewhere)
    return .accepted(next, effects)
}

func reduceDecline(_ state: CallState, device: DeviceKey, seenRevision: Int64, now: Int64) -> CallStep {
    guard let participation = state.participation[device] else { return .rejected(state, .notParticipant) }
    guard state.side(of: device) == .callee else { return .rejected(state, .notAllowed) }
    if state.phase.isTerminal { return .unchanged(state) }
    if state.phase != .ringing {
        if seenRevision < state.phaseRevision { return .rejected(state, .staleRevision) }
        return .rejected(state, state.answeredBy == device ? .invalidState : .notAllowed)
    }
    guard participation.isRinging else { return .rejected(state, .notAllowed) }
    if let code = revisionCheck(state, seenRevision) { return .rejected(state, code) }
    return endCall(state, reason: .declined, by: device, ringingStop: .declinedElsewhere, actorStop: .declined, now: now)
}

func reduceCancel(_ state: CallState, device: DeviceKey, now: Int64) -> CallStep {
    guard state.participation[device] != nil else { return .rejected(state, .notParticipant) }
    guard device == state.caller else { return .rejected(state, .notAllowed) }
    switch state.phase {
    case .ended:
        return .unchanged(state)
    case .ringing:
        return endCall(state, reason: .cancelled, by: device, ringingStop: .cancelled, now: now)
    case .connecting, .active, .reconnecting:
        return .rejected(state, .alreadyAnswered)
    }
}
