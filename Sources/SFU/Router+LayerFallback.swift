/// Simulcast layer liveness: a subscriber whose wanted layer is not arriving gets the highest
/// lower layer that is, and goes back up when the wanted layer returns.
///
/// Why: Chromium pauses its upper simulcast layers whenever its send-side estimate is below
/// their needs (at start, while the estimate ramps up, and under congestion), and rid simulcast
/// gives no signal of it but silence. Without this a subscriber targeting the top layer
/// (the default) would see no video at all while the publisher sends only `q`.
/// Bandwidth-driven choice of `wantedLayer` per subscriber is the LayerSelector's job; this
/// only keeps the choice within what actually arrives.
extension Router {
    /// 1 s of silence marks a layer paused: even the 150 kbit/s layer sends ≥ 15 packets/s,
    /// and one keyframe interval of jitter (≤ 300 ms on loaded hosts) stays well inside it.
    static let layerSilence: Int64 = 1_000_000

    /// Re-targets every video subscription of a multi-layer track; called from `tick`.
    func followArrivingLayers(now: Int64) {
        for publisher in participants.values {
            for track in publisher.published.values where track.kind == .video && track.streams.count > 1 {
                var arriving: [Bool] = []
                var settled = false   // some layer has been arriving for a full silence window
                for stream in track.streams {
                    let live = stream.hot.lastArrival.map { now - $0 <= Self.layerSilence } ?? false
                    arriving.append(live)
                    if live, let first = stream.hot.firstArrival, now - first >= Self.layerSilence { settled = true }
                }
                guard settled else { continue }   // too early to call a layer silent
                for index in track.slots.indices {
                    let wanted = track.slots[index].wantedLayer
                    guard let layer = (0...min(wanted, arriving.count - 1)).last(where: { arriving[$0] }),
                          layer != track.slots[index].targetLayer else { continue }
                    track.slots[index].targetLayer = layer
                    if track.slots[index].currentLayer != layer { requestKeyframe(publisher: publisher.id, stream: track.streams[layer]) }
                }
            }
        }
    }
}
