import CallCore
import Signaling

/// What the room coordinator needs from the media plane (the SFU). The SFU runs on its own
/// thread: completions and callbacks may arrive on any thread; the coordinator hops back to
/// the signaling loop itself.
public protocol MediaPlane: AnyObject {
    /// Joins (or re-negotiates) `member` in `room` with its offer; answers with the SFU's SDP.
    func join(room: String, member: DeviceKey, offer: String,
              completion: @escaping (Result<MediaAnswer, MediaPlaneError>) -> Void)
    /// The member's answer to a server-initiated offer of `generation`.
    func applyAnswer(member: DeviceKey, generation: Int64, sdp: String,
                     completion: @escaping (Result<Void, MediaPlaneError>) -> Void)
    func leave(member: DeviceKey)
    /// `member`'s rendered size and layer cap for `publisher`'s video track `mid`
    /// (`sfu.preferences`, §9). Values are range-checked by the hub already.
    func setPreferences(member: DeviceKey, preferences: SFUPreferences,
                        completion: @escaping (Result<Void, SFUPreferencesError>) -> Void)
    /// Server-initiated offer for a member (coalesced renegotiation), and members removed by
    /// the media plane itself (consent expired, DTLS failure).
    func setCallbacks(onOffer: @escaping (DeviceKey, Int64, String) -> Void,
                      onMemberLeft: @escaping (DeviceKey, String) -> Void,
                      onActiveSpeaker: @escaping (String, DeviceKey?) -> Void)
}

public struct MediaAnswer: Sendable, Equatable {
    public var generation: Int64
    public var sdp: String

    public init(generation: Int64, sdp: String) {
        self.generation = generation
        self.sdp = sdp
    }
}

/// A media-plane refusal with a stable wire code (docs/protocol.md §4 and §9).
public struct MediaPlaneError: Error, Equatable, Sendable {
    public var code: String
    public var message: String

    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }
}
