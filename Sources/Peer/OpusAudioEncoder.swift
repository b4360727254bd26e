import COpus

/// A libopus encoder for 20 ms frames at 48 kHz (RFC 7587: Opus RTP always runs at 48 kHz).
///
/// Not thread-safe: one owner (the peer's loop thread).
public final class OpusAudioEncoder {
    public let sampleRate: Int32
    public let channels: Int32
    private let encoder: OpaquePointer

    /// 20 ms: the packet time every WebRTC stack sends by default (Chromium, Firefox).
    public static let frameMilliseconds = 20
    /// 32 kbit/s: Chromium's default for stereo-signalled Opus speech; plenty for a tone.
    public static let defaultBitrate: Int32 = 32_000
    /// Largest packet we accept from the encoder (RFC 6716 §3.4: at most 1275 bytes per frame).
    static let maxPacketBytes = 1500

    public init(sampleRate: Int32 = 48_000, channels: Int32 = 2, bitrate: Int32 = OpusAudioEncoder.defaultBitrate,
                inbandFEC: Bool = true) throws(PeerError) {
        var error: Int32 = 0
        guard let encoder = opus_encoder_create(sampleRate, channels, OPUS_APPLICATION_VOIP, &error), error == OPUS_OK else {
            throw .opus(error)
        }
        self.encoder = encoder
        self.sampleRate = sampleRate
        self.channels = channels
        let bitrateResult = sb_opus_set_bitrate(encoder, bitrate)
        let fecResult = sb_opus_set_inband_fec(encoder, inbandFEC ? 1 : 0)
        guard bitrateResult == OPUS_OK, fecResult == OPUS_OK else {
            opus_encoder_destroy(encoder)
            throw .opus(bitrateResult != OPUS_OK ? bitrateResult : fecResult)
        }
        if inbandFEC {
            // 5 %: FEC is only produced when the encoder expects loss (libopus); a small figure
            // keeps the bitrate spent on it low, as Chromium does before any loss is reported.
            _ = sb_opus_set_packet_loss_perc(encoder, 5)
        }
    }

    deinit { opus_encoder_destroy(encoder) }

    /// Samples per channel in one frame.
    public var samplesPerFrame: Int { Int(sampleRate) * Self.frameMilliseconds / 1000 }

    /// Encodes one frame of interleaved PCM (`samplesPerFrame × channels` samples).
    public func encode(_ pcm: [Int16]) throws(PeerError) -> [UInt8] {
        guard pcm.count == samplesPerFrame * Int(channels) else {
            throw .invalidParameter("frame has \(pcm.count) samples, expected \(samplesPerFrame * Int(channels))")
        }
        var output = [UInt8](repeating: 0, count: Self.maxPacketBytes)
        let length = pcm.withUnsafeBufferPointer { input -> Int32 in
            output.withUnsafeMutableBufferPointer { out -> Int32 in
                guard let inBase = input.baseAddress, let outBase = out.baseAddress else { return OPUS_BAD_ARG }
                return opus_encode(encoder, inBase, Int32(samplesPerFrame), outBase, Int32(out.count))
            }
        }
        guard length > 0 else { throw .opus(length) }
        output.removeSubrange(Int(length)...)
        return output
    }
}
