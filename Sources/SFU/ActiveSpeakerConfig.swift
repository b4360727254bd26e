/// Tuning of `ActiveSpeakerDetector`. Times in microseconds (the SFU's monotonic clock).
public struct ActiveSpeakerConfig: Sendable, Equatable {
    /// 500 ms smoothing window: spans the gaps between syllables and words (100–300 ms) so a
    /// talker does not drop out mid-sentence, yet follows turn-taking within about half a
    /// second. (LiveKit observes audio levels over 500 ms; Jitsi's medium interval is similar.)
    public var window: Int64
    /// 60 ms: how long one sample stands for when the next is late. Covers 20–60 ms Opus
    /// packetisation plus a lost packet; a longer gap (Opus DTX sends one packet per 400 ms in
    /// silence) counts as silence.
    public var sampleHold: Int64
    /// 50 (−50 dBov): samples louder than this count as voice. Conversational speech on a
    /// WebRTC microphone measures about −20…−40 dBov; room noise after the browser's noise
    /// suppression sits below −50 dBov.
    public var activationLevel: UInt8
    /// 0.3: at least 30 % of the window (150 ms of 500 ms) must be voiced to count as speaking,
    /// so a cough or a click is not a speaker. LiveKit uses a similar active-ratio test.
    public var minActivity: Double
    /// 300 ms: a challenger must out-score the current dominant speaker this long, without
    /// interruption, before it takes the floor (no flapping on interjections).
    public var minDominance: Int64
    /// 1 s: once announced, a dominant speaker keeps the floor at least this long unless it
    /// stops speaking.
    public var minHold: Int64
    /// 3: a challenger's score must exceed the current speaker's by this much (≈ 3 dB at full
    /// activity), so two equally loud talkers do not trade the floor on noise.
    public var switchMargin: Double
    /// 2 s: a participant with no audio-level sample for this long is dropped (left without a
    /// signal, or its track stopped). Five DTX intervals, so a silent but present sender stays.
    public var staleAfter: Int64
    /// When true, a sample whose V bit is clear counts as silence whatever its level. Off by
    /// default: with `vad=off` negotiated the bit carries nothing.
    public var useVoiceActivityFlag: Bool

    public init(window: Int64 = 500_000, sampleHold: Int64 = 60_000, activationLevel: UInt8 = 50, minActivity: Double = 0.3,
                minDominance: Int64 = 300_000, minHold: Int64 = 1_000_000, switchMargin: Double = 3, staleAfter: Int64 = 2_000_000,
                useVoiceActivityFlag: Bool = false) {
        self.window = window
        self.sampleHold = sampleHold
        self.activationLevel = activationLevel
        self.minActivity = minActivity
        self.minDominance = minDominance
        self.minHold = minHold
        self.switchMargin = switchMargin
        self.staleAfter = staleAfter
        self.useVoiceActivityFlag = useVoiceActivityFlag
    }

    /// Throws `ActiveSpeakerError.badConfig(field)` on values that make no sense.
    public func validate() throws(ActiveSpeakerError) {
        guard window > 0 else { throw .badConfig("window") }
        guard sampleHold > 0 else { throw .badConfig("sampleHold") }
        guard activationLevel <= 127 else { throw .badConfig("activationLevel") }
        guard minActivity.isFinite, minActivity > 0, minActivity <= 1 else { throw .badConfig("minActivity") }
        guard minDominance >= 0 else { throw .badConfig("minDominance") }
        guard minHold >= 0 else { throw .badConfig("minHold") }
        guard switchMargin.isFinite, switchMargin >= 0 else { throw .badConfig("switchMargin") }
        guard staleAfter > window else { throw .badConfig("staleAfter") }
    }
}
