/// The result of one ``reduce(_:_:now:config:)`` call.
public struct CallStep: Equatable, Sendable {
    /// The state to persist; nil when no call exists (e.g. a refused invite).
    public var state: CallState?
    public var effects: [CallEffect]
    public var outcome: CallOutcome

    public init(state: CallState?, effects: [CallEffect], outcome: CallOutcome) {
        self.state = state
        self.effects = effects
        self.outcome = outcome
    }
}

/// The business ack of one event (call-design §5).
public enum CallOutcome: Equatable, Sendable, Codable {
    /// Applied; the call is now at `revision`. A pure relay (candidate, no stored change)
    /// is accepted at the unchanged revision and returns the input state.
    case accepted(revision: Int64)
    /// Refused; state and effects unchanged. The host attaches the current snapshot.
    case rejected(CallRejection)
    /// A legal no-op: a duplicate, or an intent the state already satisfies (a second
    /// decline, a cancel after end, a stale deadline). No effects.
    case unchanged
}

/// Stable wire codes for refused events.
public enum CallRejection: String, Error, Equatable, Sendable, Codable, CaseIterable {
    /// The seen revision predates the last phase change (another device won, §4 cases 2, 9).
    case staleRevision
    /// The seen revision is newer than the call's: a client bug (§4 case 9).
    case invalidRevision
    /// No call with this ID (host) or an event other than invite for no state.
    case callNotFound
    /// An invite reused the ID of a live call of another caller device.
    case callExists
    /// The call is terminal and the event needs a live call (answer after cancel, …).
    case callEnded
    /// The device is not part of this call.
    case notParticipant
    /// The device is part of the call but may not do this (caller answers, loser hangs up, …).
    case notAllowed
    /// The caller cancelled after an answer was accepted (§4 case 3); hang up instead.
    case alreadyAnswered
    /// The reverse call still rings (§4 case 1), or a polite offer met a pending one (case 10).
    case glare
    /// The callee has no registered device.
    case calleeUnavailable
    /// Malformed event (empty callID, self call, …).
    case invalidEvent
    /// The event's negotiation generation is not current (§4 case 7).
    case invalidGeneration
    /// The candidate's ICE ufrag belongs to a replaced ICE session (§4 case 7).
    case staleIceCredentials
    /// The candidate buffer for this device is full (§4 case 6).
    case candidateLimit
    /// The event is not legal in the current phase (e.g. media report while ringing).
    case invalidState
}
