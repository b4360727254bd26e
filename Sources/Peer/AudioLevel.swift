import Foundation

/// The RFC 6464 client-to-mixer audio level of one packet's audio: the payload byte of the
/// `urn:ietf:params:rtp-hdrext:ssrc-audio-level` header extension, `V` (voice activity, most
/// significant bit) then the level in −dBov, 0 (overload) … 127 (silence). Pure.
public struct AudioLevel: Sendable, Equatable {
    /// −dBov, 0…127.
    public let level: UInt8
    public let voiceActivity: Bool

    /// 127: RFC 6464 §3's floor; digital silence and anything quieter than −127 dBov.
    public static let silent: UInt8 = 127
    /// −50 dBov: louder counts as voice. Room noise after a browser's noise suppression sits
    /// below it, speech on a WebRTC microphone is −20…−40 dBov (the SFU's speaker detector
    /// uses the same activation level).
    public static let voiceActivityThreshold: UInt8 = 50
    /// 32768: the overload point of 16-bit PCM, as Chromium's `RmsLevel` measures it.
    static let overload = 32_768.0

    public init(level: UInt8, voiceActivity: Bool) {
        self.level = min(level, Self.silent)
        self.voiceActivity = voiceActivity
    }

    /// The level of interleaved 16-bit PCM: RMS over every sample relative to full scale,
    /// rounded to whole dB (RFC 6464 §3, RFC 6465 §4.1 use the same RMS measure). V is set when
    /// the level is `voiceActivityThreshold` or louder.
    public init(pcm: [Int16]) {
        guard !pcm.isEmpty else {
            self.init(level: Self.silent, voiceActivity: false)
            return
        }
        var sum = 0.0
        for sample in pcm { sum += Double(sample) * Double(sample) }
        let meanSquare = sum / Double(pcm.count)
        guard meanSquare > 0 else {
            self.init(level: Self.silent, voiceActivity: false)
            return
        }
        let dBov = 10 * log10(meanSquare / (Self.overload * Self.overload))
        let level = UInt8(min(Double(Self.silent), max(0, (-dBov).rounded())))
        self.init(level: level, voiceActivity: level <= Self.voiceActivityThreshold)
    }

    /// The extension element's one data byte.
    public var byte: UInt8 { (voiceActivity ? 0x80 : 0) | level }

    /// Parses the data byte.
    public init(byte: UInt8) {
        self.init(level: byte & 0x7F, voiceActivity: byte & 0x80 != 0)
    }
}
