import COpus

/// A libopus decoder for one received stream (one per remote SSRC: decoder state is per
/// stream).
///
/// Not thread-safe: one owner (the peer's loop thread).
public final class OpusAudioDecoder {
    public let sampleRate: Int32
    public let channels: Int32
    private let decoder: OpaquePointer
    /// 120 ms: the longest Opus packet (RFC 6716 §3.2.5), so any packet fits the buffer.
    static let maxFrameMilliseconds = 120

    public init(sampleRate: Int32 = 48_000, channels: Int32 = 2) throws(PeerError) {
        var error: Int32 = 0
        guard let decoder = opus_decoder_create(sampleRate, channels, &error), error == OPUS_OK else {
            throw .opus(error)
        }
        self.decoder = decoder
        self.sampleRate = sampleRate
        self.channels = channels
    }

    deinit { opus_decoder_destroy(decoder) }

    /// Decodes one packet to interleaved PCM. A corrupt packet is a typed error.
    public func decode(_ packet: UnsafeRawBufferPointer) throws(PeerError) -> [Int16] {
        guard !packet.isEmpty else { throw .invalidParameter("empty Opus packet") }
        let capacity = Int(sampleRate) * Self.maxFrameMilliseconds / 1000
        var pcm = [Int16](repeating: 0, count: capacity * Int(channels))
        let samples = pcm.withUnsafeMutableBufferPointer { out -> Int32 in
            guard let outBase = out.baseAddress else { return OPUS_BAD_ARG }
            return opus_decode(decoder, packet.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(packet.count),
                               outBase, Int32(capacity), 0)
        }
        guard samples > 0 else { throw .opus(samples) }
        pcm.removeSubrange((Int(samples) * Int(channels))...)
        return pcm
    }

    /// Packet-loss concealment (RFC 6716 §4.4; `opus_decode` with no data): `samplesPerChannel`
    /// samples (a multiple of 2.5 ms, at most 120 ms) that continue the signal over a lost packet.
    public func conceal(samplesPerChannel: Int) throws(PeerError) -> [Int16] {
        let capacity = Int(sampleRate) * Self.maxFrameMilliseconds / 1000
        guard samplesPerChannel > 0, samplesPerChannel <= capacity else { throw .invalidParameter("concealment length") }
        var pcm = [Int16](repeating: 0, count: samplesPerChannel * Int(channels))
        let samples = pcm.withUnsafeMutableBufferPointer { out -> Int32 in
            guard let outBase = out.baseAddress else { return OPUS_BAD_ARG }
            return opus_decode(decoder, nil, 0, outBase, Int32(samplesPerChannel), 0)
        }
        guard samples > 0 else { throw .opus(samples) }
        pcm.removeSubrange((Int(samples) * Int(channels))...)
        return pcm
    }

    public func decode(_ packet: [UInt8]) throws(PeerError) -> [Int16] {
        let copy = packet
        var result: Result<[Int16], PeerError> = .failure(.invalidParameter("empty Opus packet"))
        copy.withUnsafeBytes { raw in
            do throws(PeerError) { result = .success(try decode(raw)) } catch { result = .failure(error) }
        }
        return try result.get()
    }
}
