import RTP

/// Statistics of one received stream (a track's stream or one simulcast layer).
public struct InboundStreamStats: Equatable, Sendable {
    public var layer: Int
    public var ssrc: UInt32?
    public var rid: String?
    public var packets: UInt64
    public var bytes: UInt64
    public var rtxPackets: UInt64
    public var keyframes: UInt64
    /// RFC 3550 §A.3 cumulative loss on the publisher leg.
    public var cumulativeLost: Int64
    /// RFC 3550 §A.8 interarrival jitter, RTP timestamp units.
    public var jitter: UInt32
    public var keyframeRequestsAsked: Int
    public var keyframeRequestsSent: Int
}

/// Statistics of one published track.
public struct TrackStats: Equatable, Sendable {
    public var publisher: ParticipantID
    public var track: TrackID
    public var kind: MediaKind
    public var muted: Bool
    public var streams: [InboundStreamStats]
    public var droppedUnknownPayloadType: UInt64
    public var droppedMuted: UInt64
    public var subscribers: Int
}

/// Statistics of one subscriber receiving one track.
public struct SubscriptionStats: Equatable, Sendable {
    public var subscriber: ParticipantID
    public var publisher: ParticipantID
    public var track: TrackID
    public var ssrc: UInt32
    public var packetsSent: UInt32
    public var bytesSent: UInt64
    public var currentLayer: Int?
    public var targetLayer: Int
    public var layerSwitches: UInt64
    /// Video paused by the layer selection (downlink too narrow for the lowest layer).
    public var paused: Bool
    /// Packets not forwarded while paused.
    public var droppedPaused: UInt64
    public var droppedNoCodec: UInt64
    /// Packets of layers not being forwarded (including while waiting for a keyframe).
    public var droppedOtherLayer: UInt64
    /// Late packets from before a source switch.
    public var droppedLate: UInt64
    /// The subscriber has applied a description with this stream (`Router.markNegotiated`).
    public var negotiated: Bool
    /// Packets not forwarded because the subscriber had not yet applied its m-line.
    public var droppedUnnegotiated: UInt64
    public var nackedPackets: UInt64
    public var keyframeRequestsReceived: UInt64
    /// NACKs naming packets no longer held, answered with a keyframe request instead.
    public var keyframesForUnrepairableLoss: UInt64 = 0
    /// The subscriber's last report block about this stream (its downlink loss and jitter).
    public var remoteFractionLost: UInt8?
    public var remoteCumulativeLost: Int32?
    public var remoteJitter: UInt32?
    /// RFC 3550 §6.4.1 RTT from this stream's LSR/DLSR, µs.
    public var rtt: Int64?
}

/// Statistics of one participant's transport.
public struct ParticipantStats: Equatable, Sendable {
    public var participant: ParticipantID
    /// Latest RTT sample on this participant's transport, µs.
    public var rtt: Int64?
    public var droppedUnknownSSRC: UInt64
    public var droppedMalformedRTP: UInt64
    public var rtcpPackets: UInt64
    public var malformedRTCP: UInt64
    /// Feedback or report blocks naming an SSRC we do not send to this participant.
    public var unknownFeedbackSSRC: UInt64
    public var transportFeedbackPackets: UInt64
    /// Latest REMB from this participant, bit/s.
    public var downlinkEstimateBps: UInt64?
}

/// How much state the router holds (leak checks, metrics).
public struct RouterCounts: Equatable, Sendable {
    public var rooms: Int
    public var participants: Int
    public var tracks: Int
    public var subscriptions: Int
    public var inboundSSRCs: Int
    public var pendingKeyframeRequests: Int
}

extension Router {
    public func participantStats(_ participant: ParticipantID) -> ParticipantStats? {
        guard let state = participants[participant] else { return nil }
        return ParticipantStats(
            participant: participant, rtt: state.rtt, droppedUnknownSSRC: state.droppedUnknownSSRC,
            droppedMalformedRTP: state.droppedMalformedRTP, rtcpPackets: state.rtcpPackets,
            malformedRTCP: state.malformedRTCP, unknownFeedbackSSRC: state.unknownFeedbackSSRC,
            transportFeedbackPackets: state.transportFeedbackPackets, downlinkEstimateBps: state.downlinkEstimateBps)
    }

    public func trackStats(_ publisher: ParticipantID, track trackID: TrackID) -> TrackStats? {
        guard let track = participants[publisher]?.published[trackID] else { return nil }
        return TrackStats(
            publisher: publisher, track: trackID, kind: track.kind, muted: track.muted,
            streams: track.streams.map { stream in
                InboundStreamStats(
                    layer: stream.layer, ssrc: stream.ssrc, rid: stream.rid, packets: stream.hot.packets, bytes: stream.hot.bytes,
                    rtxPackets: stream.rtxPackets, keyframes: stream.hot.keyframes,
                    cumulativeLost: stream.hot.reception.cumulativeLost, jitter: stream.hot.reception.jitter,
                    keyframeRequestsAsked: stream.keyframeRequests.requested, keyframeRequestsSent: stream.keyframeRequests.sent)
            },
            droppedUnknownPayloadType: track.droppedUnknownPayloadType, droppedMuted: track.droppedMuted,
            subscribers: track.subscriptions.count)
    }

    public func subscriptionStats(subscriber: ParticipantID, publisher: ParticipantID, track trackID: TrackID) -> SubscriptionStats? {
        guard let subscription = try? findSubscription(subscriber: subscriber, publisher: publisher, track: trackID),
              let slot = subscription.slot else { return nil }
        return SubscriptionStats(
            subscriber: subscriber, publisher: publisher, track: trackID, ssrc: subscription.outgoingSSRC,
            packetsSent: slot.packetsSent, bytesSent: slot.bytesSent,
            currentLayer: slot.currentLayer, targetLayer: slot.targetLayer,
            layerSwitches: slot.layerSwitches, paused: slot.paused, droppedPaused: slot.droppedPaused, droppedNoCodec: slot.droppedNoCodec,
            droppedOtherLayer: slot.droppedOtherLayer, droppedLate: slot.droppedLate,
            negotiated: slot.negotiated, droppedUnnegotiated: slot.droppedUnnegotiated,
            nackedPackets: subscription.nackedPackets, keyframeRequestsReceived: subscription.keyframeRequestsReceived,
            keyframesForUnrepairableLoss: subscription.keyframesForUnrepairableLoss,
            remoteFractionLost: subscription.remoteReport?.fractionLost,
            remoteCumulativeLost: subscription.remoteReport?.cumulativeLost,
            remoteJitter: subscription.remoteReport?.jitter, rtt: subscription.rtt)
    }

    public var counts: RouterCounts {
        RouterCounts(
            rooms: rooms.count, participants: participants.count,
            tracks: participants.values.reduce(0) { $0 + $1.published.count },
            subscriptions: participants.values.reduce(0) { $0 + $1.subscriptions.count },
            inboundSSRCs: inbound.count, pendingKeyframeRequests: pendingKeyframeStreams.count)
    }
}
