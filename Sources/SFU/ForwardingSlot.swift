import RTP

/// Per-packet facts the forwarding loop needs, computed once per packet.
struct PacketFacts {
    let ssrc: UInt32
    let sequenceNumber: UInt16
    let timestamp: UInt32
    let layer: Int
    let codecIndex: Int
    let clockRate: UInt32
    /// A keyframe starts here, or the codec has no keyframe detection (switch anywhere).
    let canSwitch: Bool
    let payloadOctets: UInt32
    let length: Int
    let now: Int64
    /// The stream's `SenderClock.referenceOffset` (nil before the publisher's first SR):
    /// timestamp + this = capture time on a timeline all layers of the track share.
    var referenceOffset: UInt32? = nil
    /// The VP8 descriptor's PictureID / TL0PICIDX (nil: not VP8, or no PictureID).
    var vp8: VP8PictureFields? = nil
}

/// Everything a subscription touches per packet, as one plain value. Stored contiguously
/// per track (`PublishedTrack.slots`) so the forwarding loop makes one exclusive access
/// for all subscribers instead of a dynamic exclusivity check per field of a class.
struct ForwardingSlot {
    let subscriber: ParticipantID
    let outgoingSSRC: UInt32
    /// Codec index of the track → subscriber payload type | 0x80 (0 = no common codec).
    var payloadTypes = InlineBytes16.zeros16
    var extensions = ExtensionRewrite()
    /// Bumped whenever `extensions` changes (`Subscription.noteExtensions`), recorded with each
    /// sent packet so a resend uses the rewrite in force when it was first sent.
    var extensionsVersion: UInt8 = 0
    /// What was sent under each outgoing number, for NACK answers (`SentPacketLog`).
    var sent = SentPacketLog()
    var targetLayer: Int
    /// The layer asked for (`setTargetLayer`, default the highest); `targetLayer` is this or,
    /// while it does not arrive, the highest lower layer that does (Router+LayerFallback).
    var wantedLayer: Int
    /// Layer being forwarded; nil until the first (key)frame of the target layer.
    var currentLayer: Int?
    var waitingForKeyframe: Bool
    /// Forces the next forwarded packet to continue the output sequence (after mute/resume).
    var needsResync = false
    /// Identity of the current source for the rewriters: bumped on every source change or resync.
    var sourceEpoch: UInt32 = 0
    /// Identity of the current source for the sequence rewriter alone: also bumped around a
    /// padding packet inserted on the media SSRC (probing without RTX), so the next media
    /// packet continues after it while the timestamps stay untouched.
    var sequenceEpoch: UInt32 = 0
    /// Video paused by the layer selection (the downlink cannot carry even the lowest layer).
    var paused = false
    /// The subscriber has applied a description that carries this SSRC and its mid
    /// (`Router.markNegotiated`). Until then nothing is forwarded: libwebrtc drops a packet
    /// its RtpDemuxer cannot route (unknown mid and SSRC) before transport-cc records it, so
    /// it would read as loss to our estimator while no inbound-rtp stream ever counts it.
    var negotiated: Bool
    var currentSource: UInt32?
    var sequence = SequenceRewriter()
    var timestamps = TimestampRewriter()
    var lastForwardAt: Int64?
    var lastInputTimestamp: UInt32 = 0
    var lastOutputTimestamp: UInt32 = 0
    /// `PacketFacts.referenceOffset` of the last forwarded packet.
    var lastReferenceOffset: UInt32?
    /// VP8 PictureID / TL0PICIDX continuity across source switches.
    var vp8 = VP8PictureRewriter()
    var packetsSent: UInt32 = 0
    var octetsSent: UInt32 = 0
    var bytesSent: UInt64 = 0
    var droppedNoCodec: UInt64 = 0
    var droppedOtherLayer: UInt64 = 0
    var droppedLate: UInt64 = 0
    var layerSwitches: UInt64 = 0
    var droppedPaused: UInt64 = 0
    var droppedUnnegotiated: UInt64 = 0

    init(subscriber: ParticipantID, outgoingSSRC: UInt32, kind: MediaKind, highestLayer: Int, negotiated: Bool = true) {
        self.subscriber = subscriber
        self.negotiated = negotiated
        self.outgoingSSRC = outgoingSSRC
        targetLayer = highestLayer
        wantedLayer = highestLayer
        waitingForKeyframe = kind == .video
        currentLayer = kind == .audio ? 0 : nil
    }

    /// The forwarding decision for one packet, with all per-subscriber rewriting state updated.
    @inline(__always)
    mutating func forward(_ packet: PacketFacts) -> Forward? {
        guard negotiated else {
            droppedUnnegotiated += 1
            return nil
        }
        if paused {
            droppedPaused += 1
            return nil
        }
        // Layer selection: forward the current layer; move to the target layer at its keyframe.
        if currentLayer == packet.layer, !waitingForKeyframe || packet.canSwitch {
            waitingForKeyframe = false
        } else if targetLayer == packet.layer, packet.canSwitch {
            if currentLayer != nil { layerSwitches += 1 }
            currentLayer = packet.layer
            waitingForKeyframe = false
        } else {
            droppedOtherLayer += 1
            return nil
        }
        let mapped = packet.codecIndex < 16 ? payloadTypes[packet.codecIndex] : 0
        guard mapped & 0x80 != 0 else {
            droppedNoCodec += 1
            return nil
        }
        var gap: UInt32 = 1
        if currentSource != packet.ssrc || needsResync {
            currentSource = packet.ssrc
            needsResync = false
            sourceEpoch &+= 1
            sequenceEpoch &+= 1
            if let last = lastForwardAt {
                gap = switchGap(to: packet, lastForwardAt: last)
            }
            if let fields = packet.vp8 { vp8.startSource(fields) }
        }
        guard let sequenceNumber = sequence.rewrite(packet.sequenceNumber, source: sequenceEpoch) else {
            droppedLate += 1
            return nil
        }
        let timestamp = timestamps.rewrite(packet.timestamp, source: sourceEpoch, switchGap: gap)
        lastForwardAt = packet.now
        lastInputTimestamp = packet.timestamp
        lastOutputTimestamp = timestamp
        lastReferenceOffset = packet.referenceOffset
        if let fields = packet.vp8 { vp8.sent(fields) }
        packetsSent &+= 1
        octetsSent &+= packet.payloadOctets
        bytesSent &+= UInt64(packet.length)
        sent.record(SentPacket(
            outgoing: sequenceNumber, source: packet.sequenceNumber, timestampOffset: timestamp &- packet.timestamp,
            sentAt: UInt32(truncatingIfNeeded: packet.now), resentAt: 0, layer: UInt8(truncatingIfNeeded: packet.layer),
            payloadType: mapped & 0x7F, resends: 0, extensionsVersion: extensionsVersion,
            rewritesVP8: packet.vp8 != nil, vp8TL0Delta: vp8.tl0Delta, vp8PictureIDDelta: vp8.pictureIDDelta))
        return Forward(
            subscriber: subscriber, ssrc: outgoingSSRC, sequenceNumber: sequenceNumber,
            timestamp: timestamp, payloadType: mapped & 0x7F, extensions: extensions,
            rewritesVP8: packet.vp8 != nil, vp8PictureIDDelta: vp8.pictureIDDelta, vp8TL0Delta: vp8.tl0Delta)
    }

    /// How far past the highest output timestamp the first packet of a new source (another
    /// layer, or the same stream after a pause) lands, in clock-rate units.
    ///
    /// With the publisher's SR for both the last forwarded packet's stream and the new one,
    /// the gap is their capture-time difference (mediasoup's SimulcastConsumer aligns layers
    /// by their SRs the same way): the output timeline stays the capture timeline, so the
    /// subscriber's jitter buffer and its audio/video sync see no step at a switch. Without
    /// SRs, or when they disagree by more than `alignedSwitchLimit`, it is the gap between
    /// the two packets' arrivals, which differs from the capture gap by however much longer
    /// one layer waited on the way to us (a publisher's pacer, a stall and flush).
    func switchGap(to packet: PacketFacts, lastForwardAt: Int64) -> UInt32 {
        if let newReference = packet.referenceOffset, let oldReference = lastReferenceOffset, let highest = timestamps.lastOutput {
            let captured = Int64(Int32(bitPattern: (packet.timestamp &+ newReference) &- (lastInputTimestamp &+ oldReference)))
            if abs(captured) <= Self.alignedSwitchLimit * Int64(packet.clockRate) {
                // Never at or before a timestamp already sent: one unit past it at least.
                let ahead = Int64(Int32(bitPattern: lastOutputTimestamp &+ UInt32(truncatingIfNeeded: captured) &- highest))
                return UInt32(truncatingIfNeeded: max(ahead, 1))
            }
        }
        let elapsed = max(packet.now - lastForwardAt, 0)
        return UInt32(truncatingIfNeeded: max(elapsed * Int64(packet.clockRate) / 1_000_000, 1))
    }

    /// 10 s: a pause longer than this is rare and its exact length does not matter to the
    /// subscriber; a larger capture difference means an SR that does not describe the stream.
    static let alignedSwitchLimit: Int64 = 10

    /// Takes the next output sequence number for a padding-only packet on the media SSRC and
    /// makes the next media packet continue after it. Nil before anything was forwarded.
    mutating func insertPadding() -> (sequenceNumber: UInt16, timestamp: UInt32)? {
        guard sequence.lastOutput != nil, currentSource != nil else { return nil }
        sequenceEpoch &+= 1
        guard let number = sequence.rewrite(0, source: sequenceEpoch) else { return nil }
        sequenceEpoch &+= 1
        return (number, lastOutputTimestamp)
    }
}
