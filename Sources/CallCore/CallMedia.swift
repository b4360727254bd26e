/// Where a call's media flows (issue: "a 1:1 call can be routed through the SFU").
///
/// - `p2p`: the two devices exchange SDP and ICE through the call (sdp.offer/answer,
///   ice.candidate) and connect directly (or through TURN).
/// - `sfu`: after the answer both devices join the room named after the callID and negotiate
///   with the server's SFU (docs/protocol.md §9); the call carries no SDP.
public enum CallMedia: String, Codable, Sendable, Equatable, CaseIterable {
    case p2p
    case sfu
}
