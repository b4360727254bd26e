/// What one device is doing in one call (call-design §2: "per-device participation is state
/// too").
public enum DeviceParticipation: Codable, Sendable, Equatable {
    /// Callee device told about the call (or pushed, if offline); it has not confirmed ringing.
    case ringing
    /// Callee device reported that its UI rings.
    case ringingAcknowledged
    /// The callee device whose answer the server accepted (the winner).
    case answered
    /// Stopped ringing or showing the call, and why.
    case stopped(StopReason)
    /// The caller's device that placed the call.
    case callerDevice
    /// Another device of the caller: shows "call in progress on another device", never rings
    /// (§4 case 12).
    case inProgressElsewhere

    /// Ringing, acknowledged or not.
    public var isRinging: Bool {
        switch self {
        case .ringing, .ringingAcknowledged: return true
        default: return false
        }
    }
}
