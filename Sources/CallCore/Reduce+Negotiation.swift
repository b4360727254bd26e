/// Offer/answer relays and ICE candidates (§4 cases 6, 7, 10).
///
/// Rules:
/// - Offers and answers flow only between the parties, after the answer was accepted.
/// - An offer based on the current generation gets `generation + 1`. If the other side's
///   offer is pending (glare), the impolite caller's offer replaces it and the polite
///   callee's is refused with `glare` (W3C perfect negotiation).
/// - A candidate must carry the current generation (or the previous one while an offer is
///   pending) and, when it names a ufrag, the sender side's current ufrag; otherwise it is
///   refused (`invalidGeneration` / `staleIceCredentials`) and never relayed.
/// - A candidate is buffered while its receiver cannot use it yet: during ringing (no winner
///   yet), or while its sender still owes the answer for the pending generation. Buffers are
///   bounded per device (`candidateLimit`) and dropped on end.

func reduceOffer(_ state: CallState, device: DeviceKey, generation: Int64, sdp: SessionDescription) -> CallStep {
    if let refusal = negotiationGate(state, device: device) { return .rejected(state, refusal) }
    guard let side = state.side(of: device), let peer = state.peer(of: device) else { return .rejected(state, .notAllowed) }
    let negotiation = state.negotiation
    if let pending = negotiation.pendingOffer {
        if pending.side == side {
            return pending.description == sdp ? .unchanged(state) : .rejected(state, .invalidState)
        }
        guard generation == pending.generation || generation == pending.generation - 1 else {
            return .rejected(state, .invalidGeneration)
        }
        if side == negotiation.politeSide { return .rejected(state, .glare) }
    } else if generation != negotiation.generation {
        return .rejected(state, .invalidGeneration)
    }
    var next = state
    let assigned = negotiation.generation + 1
    next.negotiation.generation = assigned
    next.negotiation.pendingOffer = NegotiatedDescription(side: side, generation: assigned, description: sdp)
    next.negotiation.noteDescription(sdp, of: side)
    // Candidates this side held for an answer it will now never send are void.
    next.negotiation.buffered[device] = nil
    next.bumpRevision()
    return .accepted(next, [.deliver(to: peer, .sdpOffer(from: device, generation: assigned, sdp: sdp))])
}

func reduceSDPAnswer(_ state: CallState, device: DeviceKey, generation: Int64, sdp: SessionDescription) -> CallStep {
    if let refusal = negotiationGate(state, device: device) { return .rejected(state, refusal) }
    guard let side = state.side(of: device), let peer = state.peer(of: device) else { return .rejected(state, .notAllowed) }
    let answer = NegotiatedDescription(side: side, generation: generation, description: sdp)
    guard let pending = state.negotiation.pendingOffer else {
        return state.negotiation.lastAnswer == answer ? .unchanged(state) : .rejected(state, .invalidState)
    }
    if pending.side == side { return .rejected(state, .invalidState) }
    guard generation == pending.generation else { return .rejected(state, .invalidGeneration) }
    var next = state
    next.negotiation.pendingOffer = nil
    next.negotiation.lastAnswer = answer
    next.negotiation.noteDescription(sdp, of: side)
    let buffer = next.negotiation.buffered.removeValue(forKey: device)
    next.bumpRevision()
    var effects: [CallEffect] = [.deliver(to: peer, .sdpAnswer(from: device, generation: generation, sdp: sdp))]
    // Only candidates of the answered generation are still useful to the peer.
    if let buffer, buffer.generation == generation, !buffer.candidates.isEmpty {
        effects.append(.deliver(to: peer, .iceCandidates(from: device, generation: buffer.generation, candidates: buffer.candidates)))
    }
    return .accepted(next, effects)
}

func reduceCandidate(
    _ state: CallState, device: DeviceKey, generation: Int64, candidate: IceCandidate, config: CallConfig
) -> CallStep {
    guard let participation = state.participation[device], let side = state.side(of: device) else {
        return .rejected(state, .notParticipant)
    }
    if state.phase.isTerminal { return .rejected(state, .callEnded) }
    let negotiation = state.negotiation
    let buffer: Bool
    if state.phase == .ringing {
        guard device == state.caller || participation.isRinging else { return .rejected(state, .notAllowed) }
        guard generation == negotiation.generation else { return .rejected(state, .invalidGeneration) }
        buffer = true
    } else {
        guard state.isParty(device) else { return .rejected(state, .notAllowed) }
        let previousAllowed = negotiation.pendingOffer != nil && generation == negotiation.generation - 1
        guard generation == negotiation.generation || previousAllowed else {
            return .rejected(state, .invalidGeneration)
        }
        if let pending = negotiation.pendingOffer, pending.side != side, generation == pending.generation {
            buffer = true
        } else {
            buffer = false
        }
    }
    if let ufrag = candidate.usernameFragment, let current = negotiation.ufrag(of: side), ufrag != current {
        return .rejected(state, .staleIceCredentials)
    }
    if !buffer {
        guard let peer = state.peer(of: device) else { return .rejected(state, .invalidState) }
        return .accepted(state, [.deliver(to: peer, .iceCandidates(from: device, generation: generation, candidates: [candidate]))])
    }
    var held = negotiation.buffered[device] ?? CandidateBuffer(generation: generation, candidates: [])
    if held.generation != generation { held = CandidateBuffer(generation: generation, candidates: []) }
    if held.candidates.contains(candidate) { return .unchanged(state) }
    guard held.candidates.count < config.candidateBufferLimit else { return .rejected(state, .candidateLimit) }
    held.candidates.append(candidate)
    var next = state
    next.negotiation.buffered[device] = held
    next.bumpRevision()
    return .accepted(next, [])
}

/// Shared checks for offers and answers: live, answered call, sent by a party.
private func negotiationGate(_ state: CallState, device: DeviceKey) -> CallRejection? {
    guard state.participation[device] != nil else { return .notParticipant }
    if state.phase.isTerminal { return .callEnded }
    if state.phase == .ringing { return .invalidState }
    guard state.isParty(device) else { return .notAllowed }
    return nil
}
