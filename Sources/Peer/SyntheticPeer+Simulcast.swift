/// Simulcast control of the synthetic peer's video (`Configuration.simulcastLayers`).
extension SyntheticPeer {
    /// Pauses or resumes simulcast layer `layer` (0 = lowest) from the next video frame on,
    /// as Chromium does when its send-side estimate drops below / recovers above a layer's
    /// need: a paused layer sends nothing (no RTP, so no SR either), a resumed one starts with
    /// a keyframe. Needs `startSending()` first.
    public func setSimulcastLayer(_ layer: Int, paused: Bool) throws(PeerError) {
        let error: PeerError? = onLoop { [self] in
            guard let sender else { return .invalidState("not sending") }
            do throws(PeerError) { try sender.setSimulcastLayer(layer, paused: paused) } catch { return error }
            return nil
        }
        if let error { throw error }
    }

    /// The SSRCs of our simulcast layers, lowest first (empty without simulcast).
    public var simulcastSSRCs: [UInt32] { tracks.first { $0.codec == .vp8 }?.simulcastSSRCs ?? [] }
}
