import RTP

/// Downlink repair state of one subscription: its cache of sent packets and its responder.
final class DownlinkRepair {
    let cache: RetransmissionCache
    var responder: NackResponder

    init(cache: RetransmissionCache, responder: NackResponder) {
        self.cache = cache
        self.responder = responder
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

// Router hooks for loss repair on the subscriber leg (docs/rtcp.md, NACK row). The socket
// layer stores every packet it sends into `retransmissionCache(subscriber:ssrc:)` (when
// non-nil) right after `ForwardingBatch.write` and before SRTP; NACKs fill a queue it drains
// with `takeRetransmissions` after `handleRTCP`.
extension Router {
    /// The cache of a subscription, nil until its subscriber's first NACK for it. Lazy
    /// because a video cache is 919 KB and most subscribers on clean links never NACK; the
    /// packets of that first NACK cannot be answered (counted as missing).
    public func retransmissionCache(subscriber: ParticipantID, ssrc: UInt32) -> RetransmissionCache? {
        participants[subscriber]?.subscriptions[ssrc]?.repair?.cache
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
    func answerNACK(_ nack: RTCPGenericNACK, subscription: Subscription, subscriber: ParticipantState, now: Int64) {
        let repair = subscription.repair ?? makeRepair(for: subscription, subscriber: subscriber)
        subscription.repair = repair
        var decided: [Retransmission] = []
        repair.responder.respond(to: nack.sequenceNumbers, cache: repair.cache, now: now, rtt: subscription.rtt ?? subscriber.rtt, into: &decided)
        for item in decided {
            pendingRetransmissions.append(PendingRetransmission(subscriber: subscriber.id, ssrc: subscription.outgoingSSRC, retransmission: item))
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
        let first = subscription.probeRTXSequence
        return DownlinkRepair(
            cache: RetransmissionCache(config: .forKind(subscription.track.kind)),
            responder: NackResponder(rtx: rtx, initialRTXSequenceNumber: first))
    }

    /// Moves the resends decided since the last call into `out` (appended, NACK order).
    public func takeRetransmissions(into out: inout [PendingRetransmission]) {
        out.append(contentsOf: pendingRetransmissions)
        pendingRetransmissions.removeAll(keepingCapacity: true)
    }

    /// Writes a resend (pre-SRTP) into `output`; nil when the packet or subscription is gone.
    /// - Parameter transportSequenceNumber: the subscriber transport's next transport-wide
    ///   number, written when it negotiated transport-cc.
    public func writeRetransmission(_ pending: PendingRetransmission, now: Int64, transportSequenceNumber: UInt16? = nil, into output: UnsafeMutableRawBufferPointer) throws(RTPError) -> Int? {
        guard let subscriber = participants[pending.subscriber], let subscription = subscriber.subscriptions[pending.ssrc],
              let repair = subscription.repair else { return nil }
        let tccID = subscriber.description.receiveExtensions.transportCC
        let tcc = transportSequenceNumber.flatMap { tccID == 0 ? nil : (id: tccID, value: $0) }
        return try NackResponder.write(pending.retransmission, from: repair.cache, now: now, transportSequenceNumber: tcc, into: output)
    }
}
