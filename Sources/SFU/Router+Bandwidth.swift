import RTP

// Downlink congestion control and simulcast layer choice per subscriber (issue 4; design in
// docs/rtcp.md, "Congestion control and simulcast").
//
// Inputs: every packet the socket layer sends a subscriber (`recordSent`: transport-wide
// sequence number, size, time), the subscriber's transport-cc feedback, REMB and receiver
// reports (`handleRTCP`), and each publisher layer's measured rate (`BitrateMeter` per
// inbound stream). On `tick` (every `layerEvaluationInterval`) a `LayerSelector` per
// subscriber × video track sets the target layer (switched at the next keyframe), pauses
// video that does not fit, and asks for probes (Router+Probe.swift).
extension Router {
    /// 200 ms: twice the transport-cc feedback interval (100 ms), so every evaluation sees
    /// fresh feedback; the selector's own holds (500 ms down, 2 s up) dominate the reaction.
    static let layerEvaluationInterval: Int64 = 200_000

    /// Records a packet sent to `subscriber` (a forward, a resend or anything else on its
    /// transport) after it was written: `size` in bytes as sent, `transportSequenceNumber`
    /// the transport-wide number written into it (nil when none was). Hot path: one
    /// dictionary lookup and fixed-size updates, no allocation once the history is warm.
    public func recordSent(subscriber: ParticipantID, transportSequenceNumber: UInt16?, size: Int, now: Int64) {
        guard let state = participants[subscriber] else { return }
        let number = state.description.receiveExtensions.transportCC != 0 ? transportSequenceNumber : nil
        state.downlink.recordSent(size: size, transportSequenceNumber: number, now: now)
    }

    /// The subscriber's own limit for a video track (e.g. from the size of its video
    /// element): the selector never picks a layer above `layer` (0 = lowest). A lower
    /// maximum applies at once, a higher one through the normal upgrade rules. Undoes a
    /// `setTargetLayer` pin.
    public func setMaxLayer(subscriber: ParticipantID, publisher: ParticipantID, track trackID: TrackID, layer: Int) throws(SFUError) {
        let subscription = try findSubscription(subscriber: subscriber, publisher: publisher, track: trackID)
        guard layer >= 0 else { throw .badLayer }
        subscription.layers.maxLayer = layer
        subscription.layers.pinned = false
    }

    /// The size the subscriber renders a video track at (its video element's size in device
    /// pixels): the selector then stops at the lowest layer that covers it (width or height
    /// at least as large), as LiveKit's adaptive stream does. Layer sizes come from the
    /// publisher's VP8 keyframes; while unknown (other codecs, no keyframe yet) only
    /// `setMaxLayer` limits. Undoes a `setTargetLayer` pin.
    public func setMaxSize(subscriber: ParticipantID, publisher: ParticipantID, track trackID: TrackID, width: Int, height: Int) throws(SFUError) {
        let subscription = try findSubscription(subscriber: subscriber, publisher: publisher, track: trackID)
        guard width > 0, height > 0 else { throw .badSize }
        subscription.layers.maxSize = (width, height)
        subscription.layers.pinned = false
    }

    /// The largest layer a subscription may get: its `maxLayer`, lowered by its `maxSize`.
    func layerCap(_ subscription: Subscription) -> Int {
        let track = subscription.track
        var cap = min(subscription.layers.maxLayer, track.highestLayer)
        if let size = subscription.layers.maxSize, cap > 0,
           let covering = track.streams.prefix(cap + 1).first(where: { $0.width >= size.width || $0.height >= size.height }),
           track.streams.prefix(cap + 1).allSatisfy({ $0.width > 0 }) {
            cap = covering.layer
        }
        return cap
    }

    /// The subscriber's current downlink estimate, bit/s (nil for an unknown participant).
    public func downlinkEstimate(_ subscriber: ParticipantID, now: Int64) -> UInt64? {
        participants[subscriber]?.downlink.estimator.estimate(now: now)
    }

    // MARK: RTCP inputs

    /// One transport-cc feedback body (the FCI, read in place: no copy, no arrays).
    func consumeTransportFeedback(body: UnsafeRawBufferPointer, from state: ParticipantState, now: Int64) {
        state.transportFeedbackPackets += 1
        do {
            let feedback = try TransportFeedbackView(body: body)
            let onsets = state.downlink.estimator.queueOnsets
            let reverts = state.downlink.estimator.queueOnsetReverts
            state.downlink.estimator.transportFeedback(feedback, now: now)
            state.downlink.transportFeedbacks += 1
            // A growing-queue cut undone (no standing queue followed): a false alarm — undo
            // the urgent downgrades it caused (`LayerSelector.undoUrgentSwitch`).
            if state.downlink.estimator.queueOnsetReverts != reverts { undoUrgentSwitches(of: state, now: now) }
            // A queue growing fast (`QueueOnset`) overflows within a few hundred ms: choose
            // the layers now, not at the next evaluation (up to 200 ms later, enough to fill
            // a 30 kB queue at 1.2 Mbit/s of excess).
            if state.downlink.estimator.queueOnsets != onsets { evaluateLayers(of: state, now: now) }
        } catch {
            state.downlink.malformedTransportFeedback += 1
        }
    }

    /// Sends every video subscription of `state` that an urgent downgrade moved within
    /// `LayerSelector.undoWindow` back to its layer before it.
    func undoUrgentSwitches(of state: ParticipantState, now: Int64) {
        for subscription in state.subscriptions.values where subscription.track.kind == .video && !subscription.layers.pinned {
            guard let layer = subscription.layers.selector.undoUrgentSwitch(now: now), layer <= layerCap(subscription) else { continue }
            retarget(subscription, to: layer, reason: .falseAlarm, now: now)
        }
    }

    func consumeREMB(_ remb: RTCPReceiverEstimatedMaxBitrate, from state: ParticipantState, now: Int64) {
        state.downlinkEstimateBps = remb.bitrate
        state.downlink.estimator.remb(bitrate: remb.bitrate, now: now)
        state.downlink.rembReceived += 1
    }

    /// Fraction lost of one report about our streams: the mean over its blocks (each
    /// subscription is one block; an average keeps one lossy audio stream from halving video).
    func consumeReceiverLoss(_ fractions: (sum: Int, count: Int), from state: ParticipantState, now: Int64) {
        guard fractions.count > 0 else { return }
        state.downlink.receiverReports += 1
        state.downlink.estimator.receiverReport(fractionLost: UInt8(clamping: fractions.sum / fractions.count), now: now)
    }

    // MARK: Layer selection

    func evaluateLayers(now: Int64) {
        guard now - lastLayerEvaluation >= Self.layerEvaluationInterval else { return }
        lastLayerEvaluation = now
        for state in participants.values where !state.subscriptions.isEmpty {
            evaluateLayers(of: state, now: now)
        }
        finishProbes(now: now)
    }

    /// Greedy split of one subscriber's estimate: audio is reserved first (never paused),
    /// then video tracks in a stable order (publisher, track) each see what the previous
    /// tracks' targets left.
    func evaluateLayers(of state: ParticipantState, now: Int64) {
        var audioBps: UInt64 = 0
        var videos: [Subscription] = []
        for subscription in state.subscriptions.values {
            if subscription.track.kind == .audio {
                if !subscription.track.muted { audioBps += subscription.track.streams.first?.meter.bitrate(now: now) ?? 0 }
            } else {
                videos.append(subscription)
            }
        }
        guard !videos.isEmpty else { return }
        videos.sort { ($0.track.publisher, $0.track.description.id.raw) < ($1.track.publisher, $1.track.description.id.raw) }
        let signal = state.downlink.hasSignal(transportCCNegotiated: state.description.receiveExtensions.transportCC != 0)
        let estimate = state.downlink.estimator.estimate(now: now)
        let delivered = state.downlink.estimator.deliveredBps.map { UInt64($0) }
        var reserved = audioBps
        for subscription in videos where !subscription.track.muted {
            if subscription.layers.pinned {
                // Fixed by hand: not chosen here, but what it takes is not available to the rest.
                if let slot = subscription.slot, !slot.paused { reserved += subscription.track.streams[slot.targetLayer].meter.bitrate(now: now) }
                continue
            }
            let cap = layerCap(subscription)
            guard signal else {
                // No estimate to act on: the requested maximum only.
                if let slot = subscription.slot, slot.targetLayer > cap { retarget(subscription, to: cap, reason: .maxLayer, now: now) }
                continue
            }
            // Staying on a layer (or going down to one) needs it arriving; going up to one that
            // had stopped needs it back for the hold (Router+LayerFallback.swift): the bandwidth
            // path cannot chase a flapping layer either. 0 = not available.
            let hold = subscription.layers.selector.resumeHold
            let selected = subscription.layers.selector.target ?? -1
            let rates = subscription.track.streams.enumerated().map { layer, stream -> UInt64 in
                let available = layer <= selected ? layerArriving(layer, of: subscription.track, now: now) : layerUsable(layer, of: subscription.track, hold: hold, now: now)
                return available ? stream.meter.bitrate(now: now) : 0
            }
            // …but probe for it during the hold once its rate is measurable (arriving a meter
            // window), so the estimate is ready when the hold ends.
            let probeRates = subscription.track.streams.enumerated().map { layer, stream -> UInt64 in
                guard rates[layer] == 0, layerArriving(layer, of: subscription.track, now: now) else { return rates[layer] }
                guard let since = stream.hot.liveSince, now - since >= stream.meter.window else { return 0 }
                return stream.meter.bitrate(now: now)
            }
            let decision = subscription.layers.selector.update(estimateBps: estimate, audioBps: reserved, layerBitrates: rates, maxLayer: cap, now: now,
                                                               probeBitrates: probeRates, deliveredBps: delivered,
                                                               lowestSustainedBps: rates.first.map { $0 > 0 ? subscription.track.streams[0].meter.sustainedBitrate(now: now) : 0 })
            if decision.changed {
                if let layer = decision.target {
                    retarget(subscription, to: layer, reason: decision.reason, urgent: decision.urgent, now: now)
                } else if decision.reason == .paused {
                    subscription.updateSlot { $0.paused = true }
                    subscription.layers.lastReason = .paused
                    subscription.layers.lastChangeAt = now
                }
                // nil for `.layerInactive`: nothing arrives, nothing to pause.
            }
            if let slot = subscription.slot, slot.negotiated, !slot.paused, slot.currentLayer == nil, slot.waitingForKeyframe, slot.packetsSent > 0 {
                // Nothing is forwarded until the target layer's keyframe (after an urgent
                // switch): ask again while it does not come — the publisher may have missed
                // the first request, or the keyframe's first packet came late and the rest was
                // dropped (docs/rtcp.md, start-up loss); its next periodic keyframe can be
                // seconds away (seen end to end: 3 s without video after a switch). Throttled
                // by `RouterConfig.keyframeRequestInterval` (500 ms) like every request.
                requestKeyframe(publisher: subscription.track.publisher, stream: subscription.track.streams[slot.targetLayer])
            }
            if let target = subscription.layers.selector.target, target < rates.count { reserved += rates[target] }
            if decision.wantsProbe, let bps = decision.probeBps { startProbe(for: state, targetBps: bps, now: now) }
        }
    }

    /// Moves a subscription's target (and resumes paused video); the switch itself happens
    /// at the next keyframe of `layer`, requested here.
    /// - Parameter urgent: the link cannot carry the current layer (`LayerSelector.Decision.urgent`):
    ///   stop forwarding it now instead of until `layer`'s keyframe. Its packets would only
    ///   fill the bottleneck queue (a 30 kB queue is 0.8 s at 300 kbit/s) and get the
    ///   keyframe the picture waits for tail-dropped or queued behind them; the picture
    ///   freezes either way, so the freeze is shortest when the queue drains while the
    ///   keyframe is on its way (measured end to end: BrowserSimulcastCapTests). The
    ///   outgoing sequence stays continuous (the slot resumes at the keyframe, as after
    ///   `markNegotiated`).
    func retarget(_ subscription: Subscription, to layer: Int, reason: LayerSelector.Reason, urgent: Bool = false, now: Int64) {
        guard let slot = subscription.slot, layer >= 0, layer <= subscription.track.highestLayer else { return }
        let resume = slot.paused
        subscription.updateSlot { slot in
            if slot.paused {
                slot.paused = false
                slot.needsResync = true  // continue the sequence without the paused gap
                slot.waitingForKeyframe = true
            }
            if urgent, let current = slot.currentLayer, current > layer {
                slot.currentLayer = nil
                slot.waitingForKeyframe = true
            }
            slot.targetLayer = layer
            slot.wantedLayer = layer  // followArrivingLayers keeps the target within what arrives
        }
        subscription.layers.lastReason = reason
        subscription.layers.lastChangeAt = now
        if resume || slot.currentLayer != layer {
            requestKeyframe(publisher: subscription.track.publisher, stream: subscription.track.streams[layer])
        }
    }
}
