/// Simulcast layer liveness: a subscriber whose target layer stops arriving gets the highest
/// lower layer that does at once; it goes back up only when the layer has been arriving
/// steadily for the hold time and the subscription's cool-down has passed.
///
/// Why: Chromium pauses its upper simulcast layers whenever its send-side estimate is below
/// their needs (at start, while the estimate ramps up, and under congestion), and rid simulcast
/// gives no signal of it but silence. Without this a subscriber targeting the top layer
/// (the default) would see no video at all while the publisher sends only `q`.
///
/// The asymmetry (docs/rtcp.md, "Congestion control and simulcast"):
/// - **down at once** after `layerSilence` (1 s), or `layerStall` (500 ms) when a lower layer
///   keeps arriving: staying on a silent layer is a frozen picture;
/// - **up only after** the layer arrived steadily for the selector's `resumeHold` (4 s, more
///   after failed raises) **and** outside the cool-down of the subscription's last switch:
///   a publisher whose uplink flaps every 3 s resumes and pauses its top layer every 3 s;
///   following it up would force a keyframe and a visible quality jump both ways each flap.
///   The cool-down is the `LayerSelector`'s (`recordSwitch`): bandwidth and liveness switches
///   draw from one budget, so the two together still switch at most once per cool-down
///   apart from the forced drops.
/// A layer's first run (it never stopped before) needs no hold: it gives no sign of flapping,
/// and holding it would only slow the start, where Chromium adds its layers one by one.
/// Bandwidth-driven choice of `wantedLayer` per subscriber is the LayerSelector's job (it sees
/// a returned layer only once it passed the same hold, `layerUsable`); this only keeps the
/// choice within what actually arrives.
extension Router {
    /// 1 s of silence marks a layer paused: even the 150 kbit/s layer sends ≥ 15 packets/s,
    /// and one keyframe interval of jitter (≤ 300 ms on loaded hosts) stays well inside it.
    static let layerSilence: Int64 = 1_000_000

    /// 500 ms without a new packet on a layer while a lower layer of the same track keeps
    /// arriving (last packet within `layerFreshness`): the publisher stopped that layer.
    /// A path stall or a loaded host delays all layers alike (they share one transport and
    /// one socket), so the lower layer's freshness tells a paused layer from jitter; this
    /// halves the freeze after Chromium pauses the layer a subscriber is on.
    static let layerStall: Int64 = 500_000

    /// A new packet of layer `layer` arrived within the silence window, and the layer is not
    /// stalled (`layerStall`) while a lower layer of `track` is fresh.
    func layerArriving(_ layer: Int, of track: PublishedTrack, now: Int64) -> Bool {
        let stream = track.streams[layer]
        guard let last = stream.hot.lastArrival, now - last <= Self.layerSilence else { return false }
        guard now - last > Self.layerStall else { return true }
        let lowerFresh = track.streams.prefix(layer).contains { $0.hot.lastArrival.map { now - $0 <= Self.layerFreshness } ?? false }
        return !lowerFresh
    }

    /// 300 ms: a returned layer counts as steady only while its last packet is this recent.
    /// The silence window (1 s) is for declaring a layer gone; a raise needs more: a layer
    /// paused again 0.9 s ago still reads "arriving", and its hold would end on stale packets
    /// (seen end to end: a raise 1 s after the publisher paused, undone 0.6 s later). Even the
    /// 150 kbit/s layer sends a packet every ~70 ms at 15 fps, a 30 fps top layer every few ms.
    static let layerFreshness: Int64 = 300_000

    /// A layer a subscriber may be raised to: arriving, and either never stopped (its first
    /// run) or arriving again steadily — last packet within `layerFreshness` — for `hold`.
    func layerUsable(_ layer: Int, of track: PublishedTrack, hold: Int64, now: Int64) -> Bool {
        guard layerArriving(layer, of: track, now: now) else { return false }
        let stream = track.streams[layer]
        guard stream.hot.resumptions > 0 else { return true }
        guard let last = stream.hot.lastArrival, let since = stream.hot.liveSince, now - last <= Self.layerFreshness else { return false }
        return last - since >= hold
    }

    /// Re-targets every video subscription of a multi-layer track; called from `tick`.
    func followArrivingLayers(now: Int64) {
        for publisher in participants.values {
            for track in publisher.published.values where track.kind == .video && track.streams.count > 1 {
                var arriving: [Bool] = []
                var settled = false   // some layer has been arriving for a full silence window
                for (layer, stream) in track.streams.enumerated() {
                    let live = layerArriving(layer, of: track, now: now)
                    arriving.append(live)
                    if live, let first = stream.hot.firstArrival, now - first >= Self.layerSilence { settled = true }
                }
                guard settled else { continue }   // too early to call a layer silent
                for index in track.slots.indices where index < track.subscriptions.count && !track.slots[index].paused {
                    followArrivingLayers(track.subscriptions[index], slot: track.slots[index], arriving: arriving, now: now)
                }
            }
        }
    }

    private func followArrivingLayers(_ subscription: Subscription, slot: ForwardingSlot, arriving: [Bool], now: Int64) {
        let track = subscription.track
        let wanted = min(max(slot.wantedLayer, 0), arriving.count - 1)
        let target = slot.targetLayer
        let hold = subscription.layers.selector.resumeHold
        func usable(_ layer: Int) -> Bool { arriving[layer] && layerUsable(layer, of: track, hold: hold, now: now) }
        let layer: Int
        let lost: Bool
        if target > wanted || !arriving[target] {
            // Forced: the target is silent. Best held layer, else whatever still arrives.
            guard let choice = (0...wanted).last(where: usable) ?? (0...wanted).last(where: { arriving[$0] }) else { return }
            (layer, lost) = (choice, true)
        } else if target < wanted, !subscription.layers.selector.inCoolDown(now: now),
                  let choice = (target + 1...wanted).last(where: usable) {
            (layer, lost) = (choice, false)
        } else {
            return
        }
        guard layer != target else { return }
        subscription.updateSlot { $0.targetLayer = layer }
        subscription.layers.selector.recordSwitch(from: target, to: layer, layerLost: lost, now: now)
        subscription.layers.lastReason = lost ? .layerInactive : .layerResumed
        subscription.layers.lastChangeAt = now
        if slot.currentLayer != layer { requestKeyframe(publisher: track.publisher, stream: track.streams[layer]) }
    }
}
