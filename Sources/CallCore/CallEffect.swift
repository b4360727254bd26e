/// Work the host carries out after persisting the returned state. Effects of one step are in
/// a fixed order: deadline changes, then deliveries (sorted by device within each group),
/// then pushes. Codable so the host can store effects in the same transaction as the state
/// (transactional outbox) and carry them out after a crash.
public enum CallEffect: Equatable, Sendable, Codable {
    /// Append a notice to the device's durable outbox (call-design §5).
    case deliver(to: DeviceKey, CallNotice)
    /// Arm (or re-arm) a deadline at an absolute server time; fire it back as
    /// ``CallEvent/deadlineFired(_:)``.
    case scheduleDeadline(DeadlineKind, at: Int64)
    /// Disarm a deadline. Firing one anyway is harmless (the reducer answers `unchanged`).
    case cancelDeadline(DeadlineKind)
    /// Call the push hook for a device that was offline at invite (call-design §5).
    case pushNotify(to: DeviceKey, PushNotice)
}

/// What a device is told about a call.
public enum CallNotice: Equatable, Sendable, Codable {
    /// Ring: a new incoming call, with the caller's offer (generation in the snapshot).
    case incomingCall(CallSnapshot, offer: SessionDescription?)
    /// To the caller's other devices: the call runs on another device of theirs (§4 case 12).
    case inProgressElsewhere(CallSnapshot)
    /// To the caller device: a callee device reported that it rings (first one only).
    case ringingOnCallee(CallSnapshot)
    /// To the caller device: the server accepted this device's answer.
    case answered(CallSnapshot, by: DeviceKey, sdp: SessionDescription?)
    /// To a callee device that rang: stop, and why (answeredElsewhere, declinedElsewhere,
    /// cancelled, noAnswer, expired, busyElsewhere).
    case stopped(StopReason, CallSnapshot)
    /// To a party or a caller's other device: the call ended.
    case ended(CallEndReason, CallSnapshot)
    /// To the parties: the phase changed (connecting → active, active ⇄ reconnecting).
    case stateChanged(CallSnapshot)
    /// Relayed offer, with its server-assigned generation.
    case sdpOffer(from: DeviceKey, generation: Int64, sdp: SessionDescription)
    /// Relayed answer to the offer of `generation`.
    case sdpAnswer(from: DeviceKey, generation: Int64, sdp: SessionDescription)
    /// Relayed candidates (one trickled, or a flushed buffer), of negotiation `generation`.
    case iceCandidates(from: DeviceKey, generation: Int64, candidates: [IceCandidate])
}

/// What the push hook announces for a device that had no live connection at invite.
public enum PushNotice: Equatable, Sendable, Codable {
    /// Show an incoming call until `expiresAt` (server ms); after that report it as ended.
    case incomingCall(callID: String, caller: DeviceKey, expiresAt: Int64)
    /// The announced call no longer rings; the platform still requires showing it as ended.
    case stopped(callID: String, reason: StopReason)
}
