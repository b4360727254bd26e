/// The call-level state of call-design §2.
///
/// ```
/// (none) ──invite──▶ ringing ──answer accepted──▶ connecting ──media talkable──▶ active
/// ringing ──decline / cancel / ring deadline / invite expiry──▶ ended
/// connecting ──hangup / connect deadline──▶ ended
/// active ──media lost──▶ reconnecting ──media talkable──▶ active
/// reconnecting ──hangup / reconnect deadline──▶ ended
/// active ──hangup──▶ ended
/// ```
/// `ended` is terminal: nothing leaves it.
public enum CallPhase: String, Codable, Sendable, Equatable, CaseIterable {
    case ringing
    /// The server accepted an answer; media is not flowing yet (never "connected" before media).
    case connecting
    /// Media reached a talkable state; call time counts from here.
    case active
    /// Media was lost; an ICE restart is allowed until the reconnect deadline.
    case reconnecting
    case ended

    public var isTerminal: Bool { self == .ended }
}
