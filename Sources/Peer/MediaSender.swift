import RTP

/// The send side of a synthetic peer: a 20 ms clock producing Opus frames from the tone and,
/// every second tick, one VP8-shaped video frame. Pure apart from libopus: `now` in, RTP
/// packets (unprotected) out.
final class MediaSender {
    struct Outgoing {
        var mid: String
        var codec: PeerTrack.Codec
        var ssrc: UInt32
        var marker: Bool
        var timestamp: UInt32
        var payload: [UInt8]
        var keyframe: Bool
        /// RFC 6464 level of an audio frame's PCM (nil for video).
        var audioLevel: AudioLevel? = nil
    }

    /// 4: the default tone (8000 peak) times 4 stays below 16-bit full scale (32767).
    static let maximumGain = 4.0

    let audioTrack: PeerTrack?
    let videoTrack: PeerTrack?
    private var tone: ToneGenerator
    private let encoder: OpusAudioEncoder
    private var video: VP8Synthesizer?
    /// Simulcast layers of the video track (instead of `video`), when it has several SSRCs.
    private(set) var simulcast: SimulcastVideoSource?
    private var audioTimestamp = UInt32.random(in: 0...UInt32.max)
    private var videoTimestamp = UInt32.random(in: 0...UInt32.max)
    private var sequenceNumbers: [UInt32: UInt16] = [:]
    private var tick: UInt64 = 0
    private var firstAudio = true
    /// Scale of the tone: 0 = digital silence (level 127), 1 = the configured tone.
    private(set) var gain: Double
    /// Monotonic ms of the next 20 ms tick.
    private(set) var nextTick: Int64
    private(set) var skippedTicks: UInt64 = 0
    /// Per SSRC, for sender reports (RFC 3550 §6.4.1): packets and payload octets sent, and the
    /// last RTP timestamp with its send time (monotonic µs).
    private(set) var sent: [UInt32: (packets: UInt32, octets: UInt32, timestamp: UInt32, at: Int64, clockRate: UInt32)] = [:]

    init(tracks: [PeerTrack], frequency: Double, bitrate: Int32, keyframeInterval: Int, start: Int64, gain: Double = 1,
         simulcastLadder: [SimulcastLayer] = []) throws(PeerError) {
        try Self.validate(gain: gain)
        self.gain = gain
        audioTrack = tracks.first { $0.codec == .opus }
        videoTrack = tracks.first { $0.codec == .vp8 }
        tone = try ToneGenerator(frequency: frequency)
        encoder = try OpusAudioEncoder(bitrate: bitrate)
        if let videoTrack {
            if videoTrack.mediaSSRCs.count > 1 {
                simulcast = try SimulcastVideoSource(ssrcs: videoTrack.mediaSSRCs, ladder: simulcastLadder, keyframeInterval: keyframeInterval)
            } else {
                video = try VP8Synthesizer(keyframeInterval: keyframeInterval, seed: UInt64(videoTrack.ssrc))
            }
        }
        for track in tracks { for ssrc in track.mediaSSRCs { sequenceNumbers[ssrc] = UInt16.random(in: 0...UInt16.max) } }
        nextTick = start
    }

    /// Everything due at `now` (at most `SyntheticPeer.maxCatchUpFrames` ticks; older ticks are
    /// skipped, with their RTP timestamps advanced as a real sender's clock would).
    func due(now: Int64) throws(PeerError) -> [Outgoing] {
        var out: [Outgoing] = []
        let frame = Int64(OpusAudioEncoder.frameMilliseconds)
        let behind = (now - nextTick) / frame + 1
        if behind > Int64(SyntheticPeer.maxCatchUpFrames) {
            let skip = behind - Int64(SyntheticPeer.maxCatchUpFrames)
            skippedTicks += UInt64(skip)
            nextTick += skip * frame
            audioTimestamp &+= UInt32(truncatingIfNeeded: skip) &* UInt32(encoder.samplesPerFrame)
            _ = tone.nextFrame(samplesPerChannel: encoder.samplesPerFrame * Int(skip))
        }
        while nextTick <= now {
            if let audioTrack {
                let pcm = scaled(tone.nextFrame(samplesPerChannel: encoder.samplesPerFrame))
                let payload = try encoder.encode(pcm)
                // RFC 3551 §4.1: marker on the first packet of a talkspurt.
                out.append(Outgoing(mid: audioTrack.mid, codec: .opus, ssrc: audioTrack.ssrc, marker: firstAudio,
                                    timestamp: audioTimestamp, payload: payload, keyframe: false,
                                    audioLevel: AudioLevel(pcm: pcm)))
                firstAudio = false
                audioTimestamp &+= UInt32(encoder.samplesPerFrame)
            }
            if let videoTrack, tick % UInt64(SyntheticPeer.audioTicksPerVideoFrame) == 0, var source = simulcast {
                // One capture instant for all layers: the same RTP timestamp on each SSRC.
                for frame in source.nextFrames() {
                    for (index, payload) in frame.payloads.enumerated() {
                        out.append(Outgoing(mid: videoTrack.mid, codec: .vp8, ssrc: frame.ssrc,
                                            marker: index == frame.payloads.count - 1, timestamp: videoTimestamp,
                                            payload: payload, keyframe: frame.keyframe))
                    }
                }
                simulcast = source
                videoTimestamp &+= SyntheticPeer.videoTimestampStep
            } else if let videoTrack, tick % UInt64(SyntheticPeer.audioTicksPerVideoFrame) == 0, var synth = video {
                let frame = synth.nextFramePayloads()
                video = synth
                for (index, payload) in frame.payloads.enumerated() {
                    out.append(Outgoing(mid: videoTrack.mid, codec: .vp8, ssrc: videoTrack.ssrc,
                                        marker: index == frame.payloads.count - 1, timestamp: videoTimestamp,
                                        payload: payload, keyframe: frame.keyframe))
                }
                videoTimestamp &+= SyntheticPeer.videoTimestampStep
            }
            tick += 1
            nextTick += frame
        }
        return out
    }

    /// PLI/FIR for a simulcast layer's SSRC: its next frame is a keyframe (false: not one).
    @discardableResult
    func requestKeyframe(ssrc: UInt32) -> Bool { simulcast?.requestKeyframe(ssrc: ssrc) ?? false }

    /// Pauses or resumes simulcast layer `layer` (0 = lowest).
    func setSimulcastLayer(_ layer: Int, paused: Bool) throws(PeerError) {
        guard simulcast != nil else { throw .invalidState("no simulcast video") }
        try simulcast?.setPaused(paused, layer: layer)
    }

    /// Changes the tone's loudness from the next frame on (0 = silence).
    func setGain(_ gain: Double) throws(PeerError) {
        try Self.validate(gain: gain)
        self.gain = gain
    }

    static func validate(gain: Double) throws(PeerError) {
        guard gain.isFinite, (0...maximumGain).contains(gain) else { throw .invalidParameter("audio gain \(gain) outside 0…\(maximumGain)") }
    }

    private func scaled(_ pcm: [Int16]) -> [Int16] {
        if gain == 1 { return pcm }
        if gain == 0 { return [Int16](repeating: 0, count: pcm.count) }
        return pcm.map { Int16(clamping: Int((Double($0) * gain).rounded())) }
    }

    /// Records a packet that left, for the next sender report.
    func recordSent(_ item: Outgoing, nowMicroseconds: Int64) {
        var entry = sent[item.ssrc] ?? (0, 0, item.timestamp, nowMicroseconds, item.codec.clockRate)
        entry.packets &+= 1
        entry.octets &+= UInt32(truncatingIfNeeded: item.payload.count)
        entry.timestamp = item.timestamp
        entry.at = nowMicroseconds
        sent[item.ssrc] = entry
    }

    /// The RTP timestamp that corresponds to `nowMicroseconds` on `ssrc`'s clock.
    func rtpTimestamp(for ssrc: UInt32, nowMicroseconds: Int64) -> UInt32? {
        guard let entry = sent[ssrc] else { return nil }
        let elapsed = max(0, nowMicroseconds - entry.at)
        return entry.timestamp &+ UInt32(truncatingIfNeeded: elapsed * Int64(entry.clockRate) / 1_000_000)
    }

    /// The next sequence number for `ssrc`.
    func nextSequenceNumber(for ssrc: UInt32) -> UInt16 {
        let value = sequenceNumbers[ssrc] ?? 0
        sequenceNumbers[ssrc] = value &+ 1
        return value
    }
}
