import RTP

/// The SFU routing core: rooms, participants, published tracks and subscriptions, and the
/// forwarding and RTCP decisions between them. Pure: no I/O, no clock reads (`now` is a
/// monotonic time in µs passed by the caller; `ntp` is the wall clock). Not thread-safe: a
/// router belongs to one worker thread, which can own many rooms.
///
/// Every participant in a room subscribes to every track the others publish.
///
/// Control calls (join, publish, mute, layer changes) may queue RTCP (keyframe requests,
/// BYE); call `tick` after them and on a timer (every 20–100 ms) to collect it.
public final class Router {
    public let config: RouterConfig
    var participants: [ParticipantID: ParticipantState] = [:]
    var rooms: [RoomID: [ParticipantID]] = [:]
    /// (participant << 32 | SSRC) → stream, for media and RTX SSRCs.
    var inbound: [UInt64: InboundRoute] = [:]
    /// Streams with a keyframe request waiting for its throttle window.
    var pendingKeyframeStreams: [(publisher: ParticipantID, stream: InboundStream)] = []
    /// Subscriptions flagged `keyframeForUnrepairableLoss` since the last tick.
    var unrepairableLossSubscriptions = 0
    var ssrcs: SSRCGenerator
    /// Resends decided by subscribers' NACKs, drained by `takeRetransmissions`.
    /// Reserved like the scratch below, and drained keeping its capacity.
    var pendingRetransmissions: [PendingRetransmission] = Router.reserved(Router.nackScratchCapacity)
    /// Scratch of `answerNACK`: one NACK's sequence numbers, then the responder's decisions.
    /// Kept with their capacity (`removeAll(keepingCapacity:)`) so answering a NACK
    /// allocates only when one NACK is larger than any before (issue 3).
    var nackSequenceNumbers: [UInt16] = Router.reserved(Router.nackScratchCapacity)
    var nackDecisions: [Retransmission] = Router.reserved(Router.nackScratchCapacity)
    /// 256 sequence numbers: 16 NACK FCI entries with all 16 BLP bits, a burst far beyond
    /// what one RTCP interval of a 1.5 Mbit/s stream (~130 packets/s) loses.
    public static let nackScratchCapacity = 256

    /// An empty array with room for `capacity` elements.
    static func reserved<Element>(_ capacity: Int) -> [Element] {
        var array: [Element] = []
        array.reserveCapacity(capacity)
        return array
    }
    /// Dominant speaker per room, from the audio-level header extension (RFC 6464).
    var speakerDetectors: [RoomID: ActiveSpeakerDetector] = [:]
    var speakerChanges: [ActiveSpeakerChange] = []
    var lastSpeakerEvaluation: Int64 = .min / 4
    var lastLayerEvaluation: Int64 = .min / 4
    /// The latest `now` the router was given (for calls that carry no time, like `leave`).
    var lastNow: Int64 = 0
    /// Kind of the track the last `handleRTP` routed (valid with its batch): the send-side
    /// pacer lets audio bypass the video queue (Router+Pacing.swift).
    public internal(set) var lastRoutedKind: MediaKind = .video
    /// Where a publisher's RTX packet is unwrapped to its original form (RFC 4588) before
    /// forwarding; valid until the next `handleRTP` (the batch's source points into it).
    let repairBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: RetransmissionCache.slotSize, alignment: 16)
    /// Where a resend is rewritten before its RTX wrap (`writeRetransmission`): an MTU plus
    /// the extensions the rewrite may add (mid, transport-cc).
    let rewriteBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 16)

    public init(config: RouterConfig) {
        self.config = config
        ssrcs = SSRCGenerator(state: config.ssrcSeed)
    }

    deinit {
        repairBuffer.deallocate()
        rewriteBuffer.deallocate()
    }

    static func key(_ participant: ParticipantID, _ ssrc: UInt32) -> UInt64 {
        UInt64(participant.raw) << 32 | UInt64(ssrc)
    }

    // MARK: Membership

    /// Adds a participant to a room (creating it) and subscribes it to every track already
    /// published there.
    public func join(_ participant: ParticipantID, room: RoomID, description: ParticipantDescription, now: Int64) throws(SFUError) {
        guard participants[participant] == nil else { throw .participantExists }
        let control = ssrcs.next(avoiding: [])
        let state = ParticipantState(id: participant, room: room, description: description, controlSSRC: control, joinedAt: now)
        participants[participant] = state
        let others = rooms[room, default: []]
        rooms[room, default: []].append(participant)
        for other in others {
            guard let publisher = participants[other] else { continue }
            for trackID in publisher.publishOrder {
                if let track = publisher.published[trackID] { subscribe(state, to: track, now: now) }
            }
        }
    }

    /// Removes a participant: its tracks (subscribers get a BYE), its subscriptions, its SSRCs.
    public func leave(_ participant: ParticipantID) throws(SFUError) {
        guard let state = participants[participant] else { throw .unknownParticipant }
        for trackID in state.publishOrder {
            if let track = state.published[trackID] { remove(track, from: state) }
        }
        for subscription in state.subscriptions.values { detach(subscription, sendBye: false) }
        state.subscriptions.removeAll()
        participants[participant] = nil
        rooms[state.room]?.removeAll { $0 == participant }
        if rooms[state.room]?.isEmpty == true { rooms[state.room] = nil }
        forgetSpeaker(participant, room: state.room)
    }

    /// Room members in join order.
    public func members(of room: RoomID) -> [ParticipantID] { rooms[room] ?? [] }

    // MARK: Publishing

    /// Publishes a track, or re-publishes it (same id: new SSRCs/codecs replace the old ones
    /// and existing subscribers keep their outgoing SSRC with continuous numbering).
    public func publish(_ participant: ParticipantID, track description: TrackDescription, now: Int64) throws(SFUError) {
        guard let state = participants[participant] else { throw .unknownParticipant }
        guard (1...3).contains(description.layers.count) else { throw .badLayerCount }
        for codec in description.codecs where codec.payloadType > 127 || codec.clockRate == 0 { throw .badCodec }
        let previous = state.published[description.id]
        var ours: Set<UInt32> = []
        for layer in description.layers {
            for ssrc in [layer.ssrc, layer.rtxSSRC].compactMap({ $0 }) {
                let reusable = previous.map { old in old.streams.contains { $0.ssrc == ssrc || $0.rtxSSRC == ssrc } } ?? false
                guard ssrc != 0, !ours.contains(ssrc), reusable || !state.usedSSRCs.contains(ssrc) else { throw .ssrcInUse(ssrc) }
                ours.insert(ssrc)
            }
        }
        if let previous {
            unroute(previous, of: state)
            let track = previous
            track.description = description
            let fresh = PublishedTrack(publisher: participant, description: description)
            track.streams = fresh.streams
            track.payloads = fresh.payloads
            route(track, of: state)
            for index in track.slots.indices {
                track.slots[index].targetLayer = min(track.slots[index].targetLayer, track.highestLayer)
                track.slots[index].wantedLayer = min(track.slots[index].wantedLayer, track.highestLayer)
                if track.kind == .video {
                    track.slots[index].currentLayer = nil
                    track.slots[index].waitingForKeyframe = true
                    requestKeyframe(publisher: participant, stream: track.streams[track.slots[index].targetLayer])
                }
                configure(&track.slots[index], track: track, subscriber: participants[track.slots[index].subscriber])
                participants[track.slots[index].subscriber]?.subscriptions[track.slots[index].outgoingSSRC]?
                    .noteExtensions(&track.slots[index])
            }
            return
        }
        let track = PublishedTrack(publisher: participant, description: description)
        state.published[description.id] = track
        state.publishOrder.append(description.id)
        route(track, of: state)
        for member in rooms[state.room] ?? [] where member != participant {
            if let subscriber = participants[member] { subscribe(subscriber, to: track, now: now) }
        }
    }

    /// Stops a track: subscribers' outgoing SSRCs get a BYE and all its state is freed.
    public func unpublish(_ participant: ParticipantID, track trackID: TrackID) throws(SFUError) {
        guard let state = participants[participant] else { throw .unknownParticipant }
        guard let track = state.published[trackID] else { throw .unknownTrack }
        remove(track, from: state)
    }

    /// Mutes (stops forwarding) or unmutes a track. On unmute subscribers continue their
    /// sequence without a gap, and video waits for a keyframe (requested here).
    public func setMuted(_ participant: ParticipantID, track trackID: TrackID, muted: Bool) throws(SFUError) {
        guard let state = participants[participant] else { throw .unknownParticipant }
        guard let track = state.published[trackID] else { throw .unknownTrack }
        guard track.muted != muted else { return }
        track.muted = muted
        guard !muted else { return }
        for index in track.slots.indices {
            track.slots[index].needsResync = true
            if track.kind == .video {
                track.slots[index].waitingForKeyframe = true
                requestKeyframe(publisher: participant, stream: track.streams[track.slots[index].targetLayer])
            }
        }
    }

    // MARK: Subscriptions

    /// Sets which simulcast layer (0 = lowest) `subscriber` should receive of a track. The
    /// switch happens at the next keyframe of that layer, which is requested now.
    public func setTargetLayer(subscriber: ParticipantID, publisher: ParticipantID, track trackID: TrackID, layer: Int) throws(SFUError) {
        let subscription = try findSubscription(subscriber: subscriber, publisher: publisher, track: trackID)
        guard layer >= 0, layer <= subscription.track.highestLayer, let slot = subscription.slot else { throw .badLayer }
        subscription.layers.pinned = true  // by hand: the bandwidth-driven selection stays out
        subscription.updateSlot { $0.wantedLayer = layer }
        guard slot.targetLayer != layer else { return }
        subscription.updateSlot { $0.targetLayer = layer }
        if slot.currentLayer != layer, subscription.track.kind == .video {
            requestKeyframe(publisher: publisher, stream: subscription.track.streams[layer])
        }
    }

    /// Sets the subscriber's own mid for this track (written in the mid extension when negotiated).
    public func setMid(_ mid: String, subscriber: ParticipantID, publisher: ParticipantID, track trackID: TrackID) throws(SFUError) {
        let subscription = try findSubscription(subscriber: subscriber, publisher: publisher, track: trackID)
        guard let value = InlineBytes16(Array(mid.utf8)) else { throw .badCodec }
        subscription.updateSlot { $0.extensions.midValue = value }
    }

    /// The subscriber applied a description carrying these outgoing SSRCs (it answered our
    /// offer, protocol §9): forwarding starts; video waits for a keyframe, requested now.
    /// Unknown SSRCs (the subscription ended meanwhile) are ignored.
    public func markNegotiated(subscriber: ParticipantID, ssrcs: [UInt32]) {
        guard let state = participants[subscriber] else { return }
        for ssrc in ssrcs {
            guard let subscription = state.subscriptions[ssrc], let slot = subscription.slot, !slot.negotiated else { continue }
            subscription.updateSlot { $0.negotiated = true }
            if subscription.track.kind == .video {
                subscription.updateSlot { $0.currentLayer = nil; $0.waitingForKeyframe = true }
                requestKeyframe(publisher: subscription.track.publisher, stream: subscription.track.streams[slot.targetLayer])
            }
        }
    }

    /// What `subscriber` receives (for its SDP: outgoing SSRCs and payload types).
    public func subscriptions(of subscriber: ParticipantID) -> [SubscriptionInfo] {
        guard let state = participants[subscriber] else { return [] }
        return state.subscriptions.values
            .sorted { ($0.track.publisher, $0.track.description.id.raw) < ($1.track.publisher, $1.track.description.id.raw) }
            .map { subscription in
                SubscriptionInfo(
                    publisher: subscription.track.publisher, track: subscription.track.description.id,
                    kind: subscription.track.kind, ssrc: subscription.outgoingSSRC, rtxSSRC: subscription.outgoingRTXSSRC,
                    cname: participants[subscription.track.publisher]?.description.cname ?? "",
                    payloadTypes: subscription.track.description.codecs.indices.compactMap { index in
                        guard index < 16, let mapped = subscription.slot?.payloadTypes[index], mapped & 0x80 != 0 else { return nil }
                        return mapped & 0x7F
                    })
            }
    }

    func findSubscription(subscriber: ParticipantID, publisher: ParticipantID, track trackID: TrackID) throws(SFUError) -> Subscription {
        guard participants[subscriber] != nil, let publisherState = participants[publisher] else { throw .unknownParticipant }
        guard let track = publisherState.published[trackID],
              let subscription = track.subscriptions.first(where: { $0.subscriber == subscriber })
        else { throw .unknownTrack }
        return subscription
    }

    // MARK: Internals

    func subscribe(_ subscriber: ParticipantState, to track: PublishedTrack, now: Int64) {
        let ssrc = ssrcs.next(avoiding: subscriber.usedSSRCs)
        subscriber.usedSSRCs.insert(ssrc)
        let rtx = ssrcs.next(avoiding: subscriber.usedSSRCs)
        subscriber.usedSSRCs.insert(rtx)
        let subscription = Subscription(subscriber: subscriber.id, track: track, outgoingSSRC: ssrc, outgoingRTXSSRC: rtx)
        let hold = config.holdUntilNegotiated
        var slot = ForwardingSlot(subscriber: subscriber.id, outgoingSSRC: ssrc, kind: track.kind, highestLayer: track.highestLayer,
                                  negotiated: !hold)
        configure(&slot, track: track, subscriber: subscriber)
        slot.sent = SentPacketLog(storage: subscription.sentPackets)
        subscription.noteExtensions(&slot)
        subscriber.subscriptions[ssrc] = subscription
        track.subscriptions.append(subscription)
        track.slots.append(slot)
        if track.kind == .video, !hold {  // held: asked when negotiated, a keyframe before would be dropped
            requestKeyframe(publisher: track.publisher, stream: track.streams[slot.targetLayer])
        }
    }

    /// Payload type and extension mapping from the publisher's track to the subscriber.
    /// Codecs past the 16th of a track are not mapped (their packets are dropped, counted).
    func configure(_ slot: inout ForwardingSlot, track: PublishedTrack, subscriber: ParticipantState?) {
        guard let subscriber else { return }
        slot.payloadTypes = .zeros16
        for (index, codec) in track.description.codecs.enumerated() where index < 16 {
            if let match = subscriber.description.receiveCodecs.first(where: { $0.matches(codec) }), match.payloadType < 128 {
                slot.payloadTypes.set(index, match.payloadType | 0x80)
            }
        }
        let source = track.description.extensions
        let target = subscriber.description.receiveExtensions
        var rewrite = slot.extensions
        rewrite.sourceAudioLevel = source.audioLevel
        rewrite.sourceAbsSendTime = source.absSendTime
        rewrite.audioLevel = source.audioLevel == 0 ? 0 : target.audioLevel
        rewrite.absSendTime = source.absSendTime == 0 ? 0 : target.absSendTime
        rewrite.mid = target.mid
        rewrite.transportCC = target.transportCC
        slot.extensions = rewrite
    }

    func route(_ track: PublishedTrack, of state: ParticipantState) {
        for stream in track.streams {
            if let ssrc = stream.ssrc { bind(ssrc, to: stream, of: track, state: state, isRTX: false) }
            if let rtx = stream.rtxSSRC { bind(rtx, to: stream, of: track, state: state, isRTX: true) }
        }
    }

    func bind(_ ssrc: UInt32, to stream: InboundStream, of track: PublishedTrack, state: ParticipantState, isRTX: Bool) {
        inbound[Self.key(state.id, ssrc)] = InboundRoute(track: track, stream: stream, isRTX: isRTX)
        state.usedSSRCs.insert(ssrc)
    }

    func unroute(_ track: PublishedTrack, of state: ParticipantState) {
        for stream in track.streams {
            for ssrc in [stream.ssrc, stream.rtxSSRC].compactMap({ $0 }) {
                inbound[Self.key(state.id, ssrc)] = nil
                state.usedSSRCs.remove(ssrc)
            }
        }
        pendingKeyframeStreams.removeAll { entry in track.streams.contains { $0 === entry.stream } }
    }

    func remove(_ track: PublishedTrack, from state: ParticipantState) {
        unroute(track, of: state)
        for subscription in track.subscriptions { detach(subscription, sendBye: true) }
        track.subscriptions.removeAll()
        state.published[track.description.id] = nil
        state.publishOrder.removeAll { $0 == track.description.id }
    }

    /// Frees a subscription's state on the subscriber side (SSRCs, feedback route).
    func detach(_ subscription: Subscription, sendBye: Bool) {
        guard let subscriber = participants[subscription.subscriber] else { return }
        subscriber.subscriptions[subscription.outgoingSSRC] = nil
        subscriber.usedSSRCs.remove(subscription.outgoingSSRC)
        subscriber.usedSSRCs.remove(subscription.outgoingRTXSSRC)
        if sendBye, let slot = subscription.slot, slot.packetsSent > 0 {
            subscriber.outbox.append(.goodbye(RTCPGoodbye(ssrcs: [subscription.outgoingSSRC])))
        }
        subscription.track.subscriptions.removeAll { $0 === subscription }
        subscription.track.slots.removeAll { $0.outgoingSSRC == subscription.outgoingSSRC }
    }

    /// Marks a keyframe request for `stream`; sent by the next `tick`/`handleRTCP` allowed by
    /// the throttle.
    func requestKeyframe(publisher: ParticipantID, stream: InboundStream) {
        stream.keyframeRequests.requested += 1
        guard !stream.keyframeRequests.pending else { return }
        stream.keyframeRequests.pending = true
        pendingKeyframeStreams.append((publisher, stream))
    }
}

/// A subscription as the signaling layer needs it for the subscriber's SDP.
public struct SubscriptionInfo: Equatable, Sendable {
    public var publisher: ParticipantID
    public var track: TrackID
    public var kind: MediaKind
    /// SSRC the subscriber receives this track on.
    public var ssrc: UInt32
    /// SSRC reserved for RTX towards the subscriber (used from issue 4).
    public var rtxSSRC: UInt32
    /// The publisher's CNAME (same for its audio and video: lip sync).
    public var cname: String
    /// Subscriber payload types this track can arrive with.
    public var payloadTypes: [UInt8]
}
