/// Layer state of one subscriber × one video track (issue 4: "report the current and target
/// layer per subscriber").
public struct VideoLayerStats: Equatable, Sendable {
    public var publisher: ParticipantID
    public var track: TrackID
    /// Layer being forwarded (nil before the first keyframe).
    public var currentLayer: Int?
    /// Layer the subscriber is being switched to (at its next keyframe).
    public var targetLayer: Int
    /// Video paused: even the lowest layer does not fit the downlink.
    public var paused: Bool
    /// The subscriber's requested maximum (nil: none).
    public var maxLayer: Int?
    /// The subscriber's rendered size (`setMaxSize`), nil: none given.
    public var maxWidth: Int?
    public var maxHeight: Int?
    /// Picture size per layer from the publisher's VP8 keyframes (0: not known).
    public var layerSizes: [LayerSize]
    /// Target fixed by `setTargetLayer` (no bandwidth-driven selection).
    public var pinned: Bool
    /// Why the target last changed (`LayerSelector.Reason` raw value), nil before any decision.
    public var lastReason: String?
    /// Measured rate of each layer as received from the publisher, bit/s (lowest first).
    public var layerBitrates: [UInt64]
    public var layerSwitches: UInt64
}

public struct LayerSize: Equatable, Sendable {
    public var width: Int
    public var height: Int
}

/// Downlink bandwidth state of one subscriber.
public struct DownlinkStats: Equatable, Sendable {
    public var participant: ParticipantID
    /// Current estimate, bit/s.
    public var estimateBps: UInt64
    /// The estimator's parts (nil until their input arrived).
    public var delayBasedBps: UInt64?
    public var lossBasedBps: UInt64?
    public var rembBps: UInt64?
    public var lossRatio: Double?
    /// Rate of the acknowledged packets (transport-cc), bit/s; nil before feedback.
    public var deliveredBps: UInt64?
    /// The delay-gradient detector's state.
    public var usage: BandwidthUsage = .normal
    /// What we currently send it, bit/s.
    public var sendingBps: UInt64
    public var transportFeedbacks: UInt64
    public var malformedTransportFeedback: UInt64
    public var rembReceived: UInt64
    public var probesStarted: UInt64
    public var paddingPackets: UInt64
    public var paddingBytes: UInt64
    public var lastProbeBps: UInt64?
    /// A probe burst is running.
    public var probing: Bool
    /// Growing-queue cuts (`QueueOnset`) and the drain rate of the latest, bit/s.
    public var queueOnsets: UInt64 = 0
    public var lastQueueOnsetBps: UInt64?
    /// Growing-queue cuts undone (no standing queue followed).
    public var queueOnsetReverts: UInt64 = 0
    /// REMBs we sent it as a REMB-only publisher.
    public var rembSent: UInt64
    /// One entry per video track it receives, by (publisher, track).
    public var video: [VideoLayerStats]
}

extension Router {
    public func downlinkStats(_ participant: ParticipantID, now: Int64) -> DownlinkStats? {
        guard let state = participants[participant] else { return nil }
        let estimator = state.downlink.estimator
        let video = state.subscriptions.values
            .filter { $0.track.kind == .video }
            .sorted { ($0.track.publisher, $0.track.description.id.raw) < ($1.track.publisher, $1.track.description.id.raw) }
            .compactMap { subscription -> VideoLayerStats? in
                guard let slot = subscription.slot else { return nil }
                let requested = subscription.layers.maxLayer
                return VideoLayerStats(
                    publisher: subscription.track.publisher, track: subscription.track.description.id,
                    currentLayer: slot.currentLayer, targetLayer: slot.targetLayer, paused: slot.paused,
                    maxLayer: requested == .max ? nil : requested,
                    maxWidth: subscription.layers.maxSize?.width, maxHeight: subscription.layers.maxSize?.height,
                    layerSizes: subscription.track.streams.map { LayerSize(width: $0.width, height: $0.height) }, pinned: subscription.layers.pinned,
                    lastReason: subscription.layers.lastReason?.rawValue,
                    layerBitrates: subscription.track.streams.map { $0.meter.bitrate(now: now) },
                    layerSwitches: slot.layerSwitches)
            }
        return DownlinkStats(
            participant: participant, estimateBps: estimator.estimate(now: now),
            delayBasedBps: estimator.delayBasedBps.map { UInt64($0) }, lossBasedBps: estimator.lossBasedBps.map { UInt64($0) },
            rembBps: estimator.rembBps, lossRatio: estimator.lossRatio,
            deliveredBps: estimator.deliveredBps.map { UInt64($0) }, usage: estimator.usage, sendingBps: state.downlink.sent.bitrate(now: now),
            transportFeedbacks: state.downlink.transportFeedbacks, malformedTransportFeedback: state.downlink.malformedTransportFeedback,
            rembReceived: state.downlink.rembReceived, probesStarted: state.downlink.probesStarted,
            paddingPackets: state.downlink.paddingPackets, paddingBytes: state.downlink.paddingBytes,
            lastProbeBps: estimator.lastProbeBps.map { UInt64($0) },
            probing: state.downlink.probe.map { now < $0.end } ?? false,
            queueOnsets: UInt64(estimator.queueOnsets), lastQueueOnsetBps: estimator.lastQueueOnsetBps.map { UInt64($0) },
            queueOnsetReverts: UInt64(estimator.queueOnsetReverts), rembSent: state.downlink.rembSent, video: video)
    }
}
