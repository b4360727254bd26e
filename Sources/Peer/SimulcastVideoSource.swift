/// The layers of a simulcast video track: one `VP8Synthesizer` per layer, sized to its rate,
/// with a pause switch per layer (Chromium stops sending a layer when its send-side estimate
/// no longer covers it and resumes it — with a keyframe — when it does again) and keyframes
/// on request per SSRC. Pure: the caller's clock drives `nextFrames`.
struct SimulcastVideoSource {
    struct Layer {
        let ssrc: UInt32
        var synthesizer: VP8Synthesizer
        var paused = false
    }

    private(set) var layers: [Layer]

    /// `ssrcs` lowest first, one per entry of `ladder` (the shorter of the two counts).
    init(ssrcs: [UInt32], ladder: [SimulcastLayer], keyframeInterval: Int) throws(PeerError) {
        var layers: [Layer] = []
        for (ssrc, layer) in zip(ssrcs, ladder) {
            let synthesizer = try VP8Synthesizer(keyframeInterval: keyframeInterval, width: layer.width, height: layer.height,
                                                 keyframeBytes: layer.keyframeBytes, deltaFrameBytes: layer.deltaFrameBytes,
                                                 seed: UInt64(ssrc))
            layers.append(Layer(ssrc: ssrc, synthesizer: synthesizer))
        }
        self.layers = layers
    }

    /// One frame of every sending layer (same capture instant), lowest first.
    mutating func nextFrames() -> [(ssrc: UInt32, keyframe: Bool, payloads: [[UInt8]])] {
        var frames: [(ssrc: UInt32, keyframe: Bool, payloads: [[UInt8]])] = []
        for index in layers.indices where !layers[index].paused {
            let frame = layers[index].synthesizer.nextFramePayloads()
            frames.append((layers[index].ssrc, frame.keyframe, frame.payloads))
        }
        return frames
    }

    /// PLI/FIR for `ssrc`: its next frame is a keyframe. False for an SSRC of no layer.
    @discardableResult
    mutating func requestKeyframe(ssrc: UInt32) -> Bool {
        guard let index = layers.firstIndex(where: { $0.ssrc == ssrc }) else { return false }
        layers[index].synthesizer.requestKeyframe()
        return true
    }

    /// Pauses or resumes layer `index` (0 = lowest); a resumed layer starts with a keyframe,
    /// as libwebrtc's encoder does when a simulcast stream is re-enabled.
    mutating func setPaused(_ paused: Bool, layer index: Int) throws(PeerError) {
        guard layers.indices.contains(index) else { throw .invalidParameter("simulcast layer \(index) of \(layers.count)") }
        if layers[index].paused && !paused { layers[index].synthesizer.requestKeyframe() }
        layers[index].paused = paused
    }
}
