/// Invite handling: creates the call (ringing, or ended `busy`) or refuses it.
///
/// Glare (§4 case 1), the rule: when A invites B while B's call to A still rings (the host
/// passes its callID as `context.glareCallID`), the invite the server applies second is
/// refused with `glare` and no call is created. The refused client is expected to answer the
/// existing incoming call from the same peer instead. So neither user ends up with two calls,
/// and which one survives follows the server's (serialised) apply order, not client clocks.
///
/// Busy (§4 case 11), the rule: call waiting is off. When the callee account is already a
/// party of another live call (`context.calleeBusy`), the call is created directly as ended
/// `busy` (a tombstone, so a retry cannot ring): the caller device gets `ended(busy)`, every
/// callee device with a live connection gets `stopped(busyElsewhere)` (a missed-call hint; it
/// never rings), offline callee devices get nothing (no push for a call that cannot ring),
/// and the caller's other devices are recorded as stopped without a notice. Glare is checked
/// before busy.
func reduceInvite(_ existing: CallState?, _ invite: CallInvite, now: Int64, config: CallConfig) -> CallStep {
    if let existing {
        if existing.phase.isTerminal { return .rejected(existing, .callEnded) }
        // The same caller device repeating its invite (a retry that slipped past the eventID
        // dedup) is a duplicate; anything else reusing a live callID is refused.
        if existing.caller == invite.caller && existing.callee == invite.callee { return .unchanged(existing) }
        return .rejected(existing, .callExists)
    }
    let caller = invite.caller
    guard !invite.callID.isEmpty, !caller.account.isEmpty, !caller.device.isEmpty,
          !invite.callee.isEmpty, invite.callee != caller.account
    else { return .rejected(nil, .invalidEvent) }
    let calleeDevices = invite.calleeDevices.filter { !$0.key.isEmpty }
    guard !calleeDevices.isEmpty else { return .rejected(nil, .calleeUnavailable) }
    if invite.context.glareCallID != nil { return .rejected(nil, .glare) }
    // An SFU call negotiates with the server after the answer; an offer here would be a
    // client bug, not something to relay.
    if invite.media == .sfu, invite.offer != nil { return .rejected(nil, .invalidEvent) }

    let otherDevices = Set(invite.callerOtherDevices.filter { !$0.isEmpty && $0 != caller.device })
        .map { DeviceKey(account: caller.account, device: $0) }.sorted()
    let callees = calleeDevices.keys.map { DeviceKey(account: invite.callee, device: $0) }.sorted()
    let online = Set(callees.filter { calleeDevices[$0.device] == true })

    var state = CallState(
        callID: invite.callID, revision: 1, phaseRevision: 1, phase: .ringing,
        caller: caller, callee: invite.callee, participation: [caller: .callerDevice], createdAt: now,
        media: invite.media
    )
    if let offer = invite.offer {
        state.negotiation.generation = 1
        state.negotiation.pendingOffer = NegotiatedDescription(side: .caller, generation: 1, description: offer)
        state.negotiation.noteDescription(offer, of: .caller)
    }

    if invite.context.calleeBusy {
        state.phase = .ended
        state.endReason = .busy
        state.endedAt = now
        state.negotiation.pendingOffer = nil
        for device in otherDevices { state.participation[device] = .stopped(.ended) }
        for device in callees { state.participation[device] = .stopped(.busyElsewhere) }
        let snapshot = state.snapshot
        var effects: [CallEffect] = [.deliver(to: caller, .ended(.busy, snapshot))]
        for device in callees where online.contains(device) {
            effects.append(.deliver(to: device, .stopped(.busyElsewhere, snapshot)))
        }
        return .accepted(state, effects)
    }

    for device in otherDevices { state.participation[device] = .inProgressElsewhere }
    for device in callees { state.participation[device] = .ringing }
    state.pushedDevices = Set(callees.filter { !online.contains($0) })
    state.deadlines.ring = now + config.ringTimeout
    state.deadlines.inviteExpiry = now + config.inviteLifetime

    let snapshot = state.snapshot
    var effects: [CallEffect] = [
        .scheduleDeadline(.ring, at: now + config.ringTimeout),
        .scheduleDeadline(.inviteExpiry, at: now + config.inviteLifetime),
    ]
    for device in callees where online.contains(device) {
        effects.append(.deliver(to: device, .incomingCall(snapshot, offer: invite.offer)))
    }
    for device in otherDevices {
        effects.append(.deliver(to: device, .inProgressElsewhere(snapshot)))
    }
    let expiresAt = state.ringsUntil(config: config)
    for device in callees where !online.contains(device) {
        effects.append(.pushNotify(to: device, .incomingCall(callID: invite.callID, caller: caller, expiresAt: expiresAt)))
    }
    return .accepted(state, effects)
}
