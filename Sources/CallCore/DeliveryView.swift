/// What a device that (re)connects should be shown for one call, after its outbox backlog
/// has been replayed (§4 cases 4 and 5).
public enum DeliveryView: Equatable, Sendable {
    /// Ring now: the call rings for this device, its server age is below
    /// `inviteLifetime − deliveryGrace` and the ring deadline has not passed.
    case ring(CallSnapshot, offer: SessionDescription?)
    /// The device is a party (caller device or winner) of a live call: resume it.
    case party(CallSnapshot)
    /// The call is live but elsewhere (caller's other device, or a callee device that was
    /// answered elsewhere): show it as in progress elsewhere, never ring.
    case elsewhere(CallSnapshot)
    /// Terminal, or too old to ring: show as ended, never ring.
    case ended(CallSnapshot)
    /// The device is not part of this call: send nothing.
    case notParticipant
}

/// Decides what `device` should receive for `state` when it connects at `now` (§4 cases 4
/// and 5): a device never rings for a terminal call, nor for an invite whose server age is at
/// least `inviteLifetime − deliveryGrace`, nor past the ring deadline.
public func deliveryView(of state: CallState, for device: DeviceKey, now: Int64, config: CallConfig) -> DeliveryView {
    guard let participation = state.participation[device] else { return .notParticipant }
    let snapshot = state.snapshot
    if state.phase.isTerminal { return .ended(snapshot) }
    switch participation {
    case .callerDevice, .answered:
        return .party(snapshot)
    case .inProgressElsewhere:
        return .elsewhere(snapshot)
    case .stopped:
        return .elsewhere(snapshot)
    case .ringing, .ringingAcknowledged:
        guard state.phase == .ringing, now < state.ringsUntil(config: config) else { return .ended(snapshot) }
        return .ring(snapshot, offer: state.negotiation.pendingOffer?.description)
    }
}
