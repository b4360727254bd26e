/// Why a control-path call on the router was refused. Closed set with stable codes.
public enum SFUError: Error, Equatable, Sendable {
    /// The participant id is already in a room.
    case participantExists
    /// No such participant.
    case unknownParticipant
    /// No such published track.
    case unknownTrack
    /// A track needs 1–3 layers (RFC 8853 simulcast as used by browsers: up to 3).
    case badLayerCount
    /// An SSRC is 0, repeated, or already used in this participant's RTP session.
    case ssrcInUse(UInt32)
    /// A payload type is not 0–127, or a clock rate is 0.
    case badCodec
    /// Requested layer index out of range.
    case badLayer
    /// A requested picture size is not positive.
    case badSize

    /// Stable string code.
    public var code: String {
        switch self {
        case .participantExists: "sfu_participant_exists"
        case .unknownParticipant: "sfu_unknown_participant"
        case .unknownTrack: "sfu_unknown_track"
        case .badLayerCount: "sfu_bad_layer_count"
        case .ssrcInUse: "sfu_ssrc_in_use"
        case .badCodec: "sfu_bad_codec"
        case .badLayer: "sfu_bad_layer"
        case .badSize: "sfu_bad_size"
        }
    }
}
