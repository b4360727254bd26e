/// One RFC 6464 client-to-mixer audio level: the payload of the
/// `urn:ietf:params:rtp-hdrext:ssrc-audio-level` header extension.
///
/// RFC 6464 §3: one byte, `V` (voice activity, most significant bit) then a 7-bit level in
/// −dBov, 0 (loudest) … 127 (silence, or muted).
public struct ActiveSpeakerAudioLevel: Sendable, Equatable {
    /// −dBov, 0…127; lower is louder.
    public let level: UInt8
    /// The sender's voice-activity flag. Meaningful only when the extension was negotiated with
    /// `vad=on` (RFC 6464 §4), which is the default.
    public let voiceActivity: Bool

    /// Clamps `level` to 127.
    public init(level: UInt8, voiceActivity: Bool = true) {
        self.level = min(level, 127)
        self.voiceActivity = voiceActivity
    }

    /// Parses the extension element's data (after the one- or two-byte extension header).
    /// Extra bytes (padding in the two-byte form) are ignored; empty data is an error.
    public init(extensionData: some Collection<UInt8>) throws(ActiveSpeakerError) {
        guard let byte = extensionData.first else { throw .emptyAudioLevel }
        self.init(level: byte & 0x7F, voiceActivity: byte & 0x80 != 0)
    }

    /// Silence: the level of a muted or silent sender.
    public static let silence = ActiveSpeakerAudioLevel(level: 127, voiceActivity: false)
}

/// Why the active-speaker detector refused an input. Closed set with stable codes.
public enum ActiveSpeakerError: Error, Equatable, Sendable {
    /// The audio-level extension element carried no byte.
    case emptyAudioLevel
    /// A configuration value is out of range (its name).
    case badConfig(String)

    /// Stable string code.
    public var code: String {
        switch self {
        case .emptyAudioLevel: "speaker_empty_audio_level"
        case .badConfig: "speaker_bad_config"
        }
    }
}

/// A dominant-speaker change in a room: announced to its members (over the IM channel).
public struct ActiveSpeakerChange: Sendable, Equatable {
    public let room: RoomID
    /// The new dominant speaker; nil when the floor is released (the speaker left or went stale).
    public let speaker: ParticipantID?
    public let previous: ParticipantID?
    /// When the change was decided (monotonic µs).
    public let at: Int64
}

/// A participant currently speaking, as listed by `ActiveSpeakerDetector.speakers(now:)`.
public struct ActiveSpeakerLevel: Sendable, Equatable {
    public let participant: ParticipantID
    /// Typical level while voiced over the window, −dBov (0 loudest … 127 silence).
    public let level: UInt8
    /// Fraction of the window with voice above the activation level, 0…1.
    public let activity: Double
    /// Ranking score: activity × loudness (127 − level); 0…127.
    public let score: Double
}
