/// Ending a call: hangup, deadlines, and the shared end transition.

func reduceHangup(_ state: CallState, device: DeviceKey, now: Int64) -> CallStep {
    guard let participation = state.participation[device] else { return .rejected(state, .notParticipant) }
    switch state.phase {
    case .ended:
        return .unchanged(state)
    case .ringing:
        // A hangup while ringing is the caller's cancel or a callee device's decline; it
        // carries no seen revision, and in the ringing phase none can be stale.
        if device == state.caller { return reduceCancel(state, device: device, now: now) }
        guard participation.isRinging else { return .rejected(state, .notAllowed) }
        return endCall(state, reason: .declined, by: device, ringingStop: .declinedElsewhere, actorStop: .declined, now: now)
    case .connecting, .active, .reconnecting:
        guard state.isParty(device) else { return .rejected(state, .notAllowed) }
        return endCall(state, reason: .hangup, by: device, ringingStop: .ended, now: now)
    }
}

/// A deadline fires: it ends the call if it is still pending in the state and due; otherwise
/// (cancelled meanwhile, re-armed later, or fired early) it is `unchanged`.
func reduceDeadline(_ state: CallState, kind: DeadlineKind, now: Int64) -> CallStep {
    guard let at = state.deadlines[kind], now >= at else { return .unchanged(state) }
    switch (kind, state.phase) {
    case (.ring, .ringing):
        return endCall(state, reason: .noAnswer, by: nil, ringingStop: .noAnswer, fired: kind, now: now)
    case (.inviteExpiry, .ringing):
        return endCall(state, reason: .expired, by: nil, ringingStop: .expired, fired: kind, now: now)
    case (.connect, .connecting):
        return endCall(state, reason: .connectFailed, by: nil, ringingStop: .ended, fired: kind, now: now)
    case (.reconnect, .reconnecting):
        return endCall(state, reason: .mediaLost, by: nil, ringingStop: .ended, fired: kind, now: now)
    default:
        return .unchanged(state)
    }
}

/// The end transition shared by every terminal event.
///
/// - Every still-ringing callee device stops with `ringingStop` (`actorStop` for the actor);
///   the caller's other devices stop with `ended`.
/// - Each device gets exactly one notice, except the actor (its ack carries the result) and
///   devices that had already stopped: parties and the caller's other devices get
///   `ended(reason)`, ringing devices get `stopped(reason)`.
/// - Pending deadlines are cancelled (except the one that fired), the pending offer and all
///   candidate buffers are dropped (§4 case 6), and pushed devices that never confirmed
///   ringing get a `stopped` push (call-design §5: every VoIP push must show a call).
func endCall(
    _ state: CallState, reason: CallEndReason, by actor: DeviceKey?, ringingStop: StopReason,
    actorStop: StopReason? = nil, fired: DeadlineKind? = nil, now: Int64
) -> CallStep {
    var next = state
    next.move(to: .ended)
    next.endReason = reason
    next.endedBy = actor
    next.endedAt = now
    next.deadlines = CallDeadlines()
    next.negotiation.pendingOffer = nil
    next.negotiation.buffered = [:]

    let devices = state.participation.keys.sorted()
    var ringingStops: [DeviceKey: StopReason] = [:]
    for device in devices {
        switch state.participation[device] {
        case .ringing?, .ringingAcknowledged?:
            let stop = device == actor ? (actorStop ?? ringingStop) : ringingStop
            ringingStops[device] = stop
            next.participation[device] = .stopped(stop)
        case .inProgressElsewhere?:
            next.participation[device] = .stopped(.ended)
        default:
            break
        }
    }

    let snapshot = next.snapshot
    var effects: [CallEffect] = []
    for (kind, _) in state.deadlines.pending where kind != fired {
        effects.append(.cancelDeadline(kind))
    }
    for device in devices where device != actor {
        switch state.participation[device] {
        case .callerDevice?, .answered?, .inProgressElsewhere?:
            effects.append(.deliver(to: device, .ended(reason, snapshot)))
        case .ringing?, .ringingAcknowledged?:
            effects.append(.deliver(to: device, .stopped(ringingStops[device] ?? ringingStop, snapshot)))
        case .stopped?, nil:
            break
        }
    }
    let stoppedDevices = devices.filter { ringingStops[$0] != nil }
    for device in stoppedDevices where device != actor {
        effects += stopPushes(state, devices: [device], reason: ringingStops[device] ?? ringingStop)
    }
    return .accepted(next, effects)
}

/// Push hook `stopped` notices for devices that were pushed at invite and never confirmed
/// ringing (they may show a call UI from the push alone).
func stopPushes(_ state: CallState, devices: [DeviceKey], reason: StopReason) -> [CallEffect] {
    devices.filter { state.pushedDevices.contains($0) && state.participation[$0] == .ringing }
        .map { .pushNotify(to: $0, .stopped(callID: state.callID, reason: reason)) }
}
