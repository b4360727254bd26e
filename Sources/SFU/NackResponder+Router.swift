import RTP

/// Downlink repair state of one subscription: its NACK responder (the packets are found
/// through its `SentPacketLog` and the publisher streams' `RetransmissionCache`s).
final class DownlinkRepair {
    var responder: NackResponder

    init(responder: NackResponder) {
        self.responder = responder
    }
}

/// One subscription's sent packets, resolved against its publisher's stores.
struct SubscriptionRetransmissions: RetransmissionLookup {
    let log: SentPacketLog
    unowned let track: PublishedTrack
    /// The layer the subscription forwards now (nil: none yet, nothing is superseded).
    var currentLayer: Int? = nil

    /// The log entry and its original's store, when the original is still the packet that
    /// was sent (stored in the same `handleRTP` that forwarded it).
    func resolve(_ sequenceNumber: UInt16) -> (entry: SentPacket, cache: RetransmissionCache)? {
        guard let entry = log.entry(sequenceNumber), Int(entry.layer) < track.streams.count else { return nil }
        let cache = track.streams[Int(entry.layer)].cache
        guard let storedAt = cache.storedAt(entry.source), UInt32(truncatingIfNeeded: storedAt) == entry.sentAt else { return nil }
        return (entry, cache)
    }

    func presence(of sequenceNumber: UInt16, now: Int64) -> RetransmissionCache.Presence {
        guard let (entry, cache) = resolve(sequenceNumber) else { return .missing }
        return cache.presence(of: entry.source, now: now)
    }

    func isSuperseded(_ sequenceNumber: UInt16) -> Bool {
        guard let currentLayer, let entry = log.entry(sequenceNumber) else { return false }
        return Int(entry.layer) != currentLayer
    }

    func resentAt(_ sequenceNumber: UInt16, now: Int64) -> Int64? {
        guard let entry = log.entry(sequenceNumber), entry.resends > 0 else { return nil }
        return now - Int64(UInt32(truncatingIfNeeded: now) &- entry.resentAt)
    }

    func payloadType(of sequenceNumber: UInt16) -> UInt8? { log.entry(sequenceNumber)?.payloadType }

    func markResent(_ sequenceNumber: UInt16, now: Int64) { log.markResent(sequenceNumber, now: now) }

    /// Writes a resend: the original from its store, rewritten as first sent (`Forward.write`
    /// with the logged timestamp offset, payload type and extension rewrite), RTX-wrapped
    /// when decided. Nil when the packet left the store or its rewrite left the history.
    /// - Parameter extensions: the extension rewrite of a logged version.
    func write(_ retransmission: Retransmission, subscriber: ParticipantID, ssrc: UInt32, extensions: (UInt8) -> ExtensionRewrite?,
               now: Int64, transportSequenceNumber: UInt16?, scratch: UnsafeMutableRawBufferPointer,
               into output: UnsafeMutableRawBufferPointer) throws(RTPError) -> Int? {
        let seq = retransmission.sequenceNumber
        guard let (entry, cache) = resolve(seq), let rewrite = extensions(entry.extensionsVersion) else { return nil }
        return try cache.withPacket(entry.source, now: now) { (packet) throws(RTPError) -> Int in
            let original = try RTPPacketView(packet)
            let forward = Forward(
                subscriber: subscriber, ssrc: ssrc, sequenceNumber: seq, timestamp: original.timestamp &+ entry.timestampOffset,
                payloadType: entry.payloadType, extensions: rewrite,
                rewritesVP8: entry.rewritesVP8, vp8PictureIDDelta: entry.vp8PictureIDDelta, vp8TL0Delta: entry.vp8TL0Delta)
            return try NackResponder.write(retransmission, original: original, forward: forward,
                                           transportSequenceNumber: transportSequenceNumber, scratch: scratch, into: output)
        }
    }
}

/// A resend decided by the router for one subscriber, to write with
/// `Router.writeRetransmission` and send on that subscriber's transport.
public struct PendingRetransmission: Equatable, Sendable {
    public let subscriber: ParticipantID
    /// The subscription's outgoing media SSRC (the NACK's media SSRC).
    public let ssrc: UInt32
    public let retransmission: Retransmission
}

// Router hooks for loss repair on the subscriber leg (docs/rtcp.md, NACK row). The router
// stores each publisher packet once in its stream's `RetransmissionCache` and records every
// forward in the subscription's `SentPacketLog` (no per-forward copy); NACKs fill a queue the
// socket layer drains with `takeRetransmissions` after `handleRTCP` and writes with
// `writeRetransmission`.
extension Router {
    /// The store of a publisher stream (a track's layer), nil for an unknown one.
    public func retransmissionCache(publisher: ParticipantID, track trackID: TrackID, layer: Int) -> RetransmissionCache? {
        guard let track = participants[publisher]?.published[trackID], layer >= 0, layer < track.streams.count else { return nil }
        return track.streams[layer].cache
    }

    /// Bytes one subscription holds for loss repair (its `SentPacketLog`), nil when unknown.
    public func retransmissionMemory(subscriber: ParticipantID, ssrc: UInt32) -> Int? {
        participants[subscriber]?.subscriptions[ssrc]?.sentPackets.memoryFootprint
    }

    /// Counters of a subscription's NACK responder (nil before its first NACK).
    public func retransmissionStats(subscriber: ParticipantID, ssrc: UInt32) -> NackResponderStats? {
        participants[subscriber]?.subscriptions[ssrc]?.repair?.responder.stats
    }

    /// Counters of a publisher stream's uplink NACK generator (nil for audio / unknown).
    public func uplinkNACKStats(publisher: ParticipantID, track trackID: TrackID, layer: Int) -> NackGeneratorStats? {
        guard let track = participants[publisher]?.published[trackID], layer >= 0, layer < track.streams.count else { return nil }
        return track.streams[layer].nacks?.stats
    }

    /// Answers a subscriber's NACK (already routed by its media SSRC to `subscription`).
    /// Sequence numbers and decisions go through the router's reused scratch arrays, so this
    /// allocates nothing once they and `pendingRetransmissions` reached their working size.
    func answerNACK(_ nack: RTCPGenericNACKView, subscription: Subscription, subscriber: ParticipantState, now: Int64) {
        nackSequenceNumbers.removeAll(keepingCapacity: true)
        nack.appendSequenceNumbers(to: &nackSequenceNumbers)
        subscription.nackedPackets += UInt64(nackSequenceNumbers.count)
        guard let slot = subscription.slot else { return }
        let repair = subscription.repair ?? makeRepair(for: subscription, subscriber: subscriber)
        subscription.repair = repair
        nackDecisions.removeAll(keepingCapacity: true)
        let lookup = SubscriptionRetransmissions(log: slot.sent, track: subscription.track,
                                                 currentLayer: subscription.track.kind == .video ? slot.currentLayer : nil)
        let unrepairable = repair.responder.stats.unrepairable
        repair.responder.respond(to: nackSequenceNumbers, lookup: lookup, now: now, rtt: subscription.rtt ?? subscriber.rtt, into: &nackDecisions)
        // A loss no resend can repair (the original left the store: older than its age bound,
        // which a deep bottleneck queue reaches — the loss is seen one queue delay late): the
        // subscriber's picture waits for a keyframe, and libwebrtc asks for one only after
        // 3 s without a decodable frame. Ask at the next tick (coalesced and throttled per
        // stream; not from here, so the RTCP handler stays allocation-free).
        if repair.responder.stats.unrepairable != unrepairable, !subscription.keyframeForUnrepairableLoss {
            subscription.keyframeForUnrepairableLoss = true
            subscription.keyframesForUnrepairableLoss += 1
            unrepairableLossSubscriptions += 1
        }
        var index = 0
        while index < nackDecisions.count {
            pendingRetransmissions.append(PendingRetransmission(subscriber: subscriber.id, ssrc: subscription.outgoingSSRC, retransmission: nackDecisions[index]))
            index += 1
        }
    }

    /// RTX towards this subscriber for every codec whose subscriber-side match has an RTX
    /// payload type (its `a=fmtp:N apt=M`), on the subscription's reserved RTX SSRC.
    func makeRepair(for subscription: Subscription, subscriber: ParticipantState) -> DownlinkRepair {
        var pairs: [(apt: UInt8, rtx: UInt8)] = []
        for codec in subscription.track.description.codecs {
            if let match = subscriber.description.receiveCodecs.first(where: { $0.matches(codec) }),
               let rtx = match.rtxPayloadType, rtx < 128, match.payloadType < 128 {
                pairs.append((match.payloadType, rtx))
            }
        }
        let rtx = pairs.isEmpty ? nil : RTXConfiguration(ssrc: subscription.outgoingRTXSSRC, payloadTypes: pairs)
        // Continue the RTX sequence probe padding may already have used (Router+Probe.swift).
        return DownlinkRepair(responder: NackResponder(rtx: rtx, initialRTXSequenceNumber: subscription.probeRTXSequence))
    }

    /// Moves the resends decided since the last call into `out` (appended, NACK order).
    public func takeRetransmissions(into out: inout [PendingRetransmission]) {
        out.append(contentsOf: pendingRetransmissions)
        pendingRetransmissions.removeAll(keepingCapacity: true)
    }

    /// Writes a resend (pre-SRTP) into `output`: the publisher's original, rewritten for this
    /// subscriber with the parameters in force when it was first sent (`Forward.write`, the
    /// forward path's writer), RTX-wrapped when decided. Nil when the packet or subscription
    /// is gone.
    /// - Parameter transportSequenceNumber: the subscriber transport's next transport-wide
    ///   number, written when it negotiated transport-cc.
    public func writeRetransmission(_ pending: PendingRetransmission, now: Int64, transportSequenceNumber: UInt16? = nil, into output: UnsafeMutableRawBufferPointer) throws(RTPError) -> Int? {
        guard let subscriber = participants[pending.subscriber], let subscription = subscriber.subscriptions[pending.ssrc],
              let slot = subscription.slot else { return nil }
        let lookup = SubscriptionRetransmissions(log: slot.sent, track: subscription.track)
        return try lookup.write(pending.retransmission, subscriber: pending.subscriber, ssrc: subscription.outgoingSSRC,
                                extensions: { subscription.extensions(version: $0, current: slot) }, now: now,
                                transportSequenceNumber: transportSequenceNumber, scratch: rewriteBuffer, into: output)
    }
}

extension Router {
    /// Keyframe requests for the subscriptions whose NACKs could not be repaired since the
    /// last tick (`answerNACK`).
    func requestKeyframesForUnrepairableLoss() {
        guard unrepairableLossSubscriptions > 0 else { return }
        unrepairableLossSubscriptions = 0
        for state in participants.values {
            for subscription in state.subscriptions.values where subscription.keyframeForUnrepairableLoss {
                subscription.keyframeForUnrepairableLoss = false
                requestKeyframe(for: subscription)
            }
        }
    }
}
