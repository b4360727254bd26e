/// Why a call ended (call-design §2). Stable wire codes: they feed KPIs with different
/// denominators (a decline is not a media failure).
///
/// `answeredElsewhere`, `declinedElsewhere` and `busyElsewhere` are per-device outcomes, not
/// call outcomes; they are ``StopReason``s. Who hung up is ``CallState/endedBy``.
public enum CallEndReason: String, Codable, Sendable, Equatable, CaseIterable {
    /// A callee device declined (1:1: the whole call ends, §4 case 13).
    case declined
    /// The caller hung up while it was ringing.
    case cancelled
    /// The ring deadline passed.
    case noAnswer
    /// The callee was in another call (§4 case 11); the call never rang.
    case busy
    /// The connect deadline passed before media flowed.
    case connectFailed
    /// The caller device or the answering device hung up after the answer.
    case hangup
    /// The reconnect deadline passed after media was lost.
    case mediaLost
    /// The invite outlived its lifetime while still ringing.
    case expired
    /// Reserved for the host (e.g. corrupt stored state); the reducer never produces it.
    case error
}

/// Why one device stopped taking part (stopped ringing, or stopped showing the call).
public enum StopReason: String, Codable, Sendable, Equatable, CaseIterable {
    /// Another device of the callee answered first.
    case answeredElsewhere
    /// Another device of the callee declined (1:1 calls end for all devices).
    case declinedElsewhere
    /// This device declined.
    case declined
    /// The caller cancelled while it rang.
    case cancelled
    /// The ring deadline passed.
    case noAnswer
    /// The invite expired.
    case expired
    /// The callee was busy in another call; this device never rang.
    case busyElsewhere
    /// The call ended for another reason while this device was not a party to it.
    case ended
}
