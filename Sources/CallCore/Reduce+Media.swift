/// Media reports of the parties (call-design §2): "answer accepted" and "media talkable" are
/// different states, so `active` (and call time) starts only with `mediaConnected`.

func reduceMediaConnected(_ state: CallState, device: DeviceKey) -> CallStep {
    guard state.participation[device] != nil else { return .rejected(state, .notParticipant) }
    if state.phase.isTerminal { return .rejected(state, .callEnded) }
    guard state.isParty(device) else { return .rejected(state, .notAllowed) }
    let cleared: DeadlineKind
    switch state.phase {
    case .ringing, .ended:
        return .rejected(state, .invalidState)
    case .active:
        return .unchanged(state)
    case .connecting:
        cleared = .connect
    case .reconnecting:
        cleared = .reconnect
    }
    var next = state
    next.move(to: .active)
    next.deadlines[cleared] = nil
    var effects: [CallEffect] = [.cancelDeadline(cleared)]
    if let peer = next.peer(of: device) { effects.append(.deliver(to: peer, .stateChanged(next.snapshot))) }
    return .accepted(next, effects)
}

/// Media lost while active starts the reconnect window. While connecting it changes nothing
/// (the connect deadline decides); while reconnecting it is a repeat.
func reduceMediaLost(_ state: CallState, device: DeviceKey, now: Int64, config: CallConfig) -> CallStep {
    guard state.participation[device] != nil else { return .rejected(state, .notParticipant) }
    if state.phase.isTerminal { return .unchanged(state) }
    guard state.isParty(device) else { return .rejected(state, .notAllowed) }
    switch state.phase {
    case .ringing:
        return .rejected(state, .invalidState)
    case .connecting, .reconnecting, .ended:
        return .unchanged(state)
    case .active:
        var next = state
        next.move(to: .reconnecting)
        next.deadlines.reconnect = now + config.reconnectTimeout
        var effects: [CallEffect] = [.scheduleDeadline(.reconnect, at: now + config.reconnectTimeout)]
        if let peer = next.peer(of: device) { effects.append(.deliver(to: peer, .stateChanged(next.snapshot))) }
        return .accepted(next, effects)
    }
}
