import RTP

/// What happened to one inbound RTP packet (the decisions themselves are in the batch).
public enum RTPDisposition: Equatable, Sendable {
    /// Forwarded to `batch.count` subscribers (possibly 0: no subscriber wants it yet).
    case forwarded
    /// Not valid RTP (counted per participant).
    case malformed
    /// Not from a known participant.
    case unknownParticipant
    /// SSRC not published by this participant (counted per participant).
    case unknownSSRC
    /// Payload type not among the track's codecs (counted per track).
    case unknownPayloadType
    /// The track is muted (counted per track).
    case muted
    /// RTX: counted; forwarding and repair come with issue 4.
    case retransmission
}

extension Router {
    /// The forwarding hot path. Parses `packet` (SRTP already removed), updates reception
    /// statistics, and fills `batch` with one rewrite decision per subscriber that should
    /// receive it; the caller then writes each with `batch.write(_:into:)` into its send
    /// buffer. Does not allocate once the batch and the router's state are warm.
    /// - Parameter now: arrival time, monotonic µs.
    @discardableResult
    public func handleRTP(from participant: ParticipantID, packet: UnsafeRawBufferPointer, now: Int64, into batch: inout ForwardingBatch) -> RTPDisposition {
        batch.reset(source: nil)
        let view: RTPPacketView
        do { view = try RTPPacketView(packet) } catch {
            participants[participant]?.droppedMalformedRTP += 1
            return .malformed
        }
        let ssrc = view.ssrc
        guard let route = inbound[Self.key(participant, ssrc)] ?? bindUnsignaled(participant, view) else {
            guard let state = participants[participant] else { return .unknownParticipant }
            state.droppedUnknownSSRC += 1
            return .unknownSSRC
        }
        let track = route.track
        let stream = route.stream
        if route.isRTX {
            stream.rtxPackets += 1
            return .retransmission
        }
        let payloadType = view.payloadType
        let clockRate = track.clockRates[Int(payloadType)]
        guard clockRate != 0 else {
            track.droppedUnknownPayloadType += 1
            return .unknownPayloadType
        }
        stream.reception.record(seq: view.sequenceNumber, rtpTimestamp: view.timestamp, arrival: now, clockRate: Int(clockRate))
        stream.packets += 1
        stream.bytes += UInt64(packet.count)
        if !stream.anchorFromSenderReport { stream.rtpAnchor = (view.timestamp, now) }
        let detector = track.detectors[Int(payloadType)]
        let isKeyframe = detector.isKeyframeStart(view.payload)
        if isKeyframe {
            stream.keyframes += 1
            stream.keyframeRequests.pending = false  // the keyframe answers any waiting request
        }
        guard !track.muted else {
            track.droppedMuted += 1
            return .muted
        }
        batch.reset(source: view)
        let layer = stream.layer
        let canSwitch = isKeyframe || detector == .none
        let payloadOctets = UInt32(truncatingIfNeeded: view.payloadRange.count)
        for subscription in track.subscriptions {
            // Layer selection: forward the current layer; move to the target layer at its keyframe.
            if subscription.currentLayer == layer, !subscription.waitingForKeyframe || canSwitch {
                subscription.waitingForKeyframe = false
            } else if subscription.targetLayer == layer, canSwitch {
                if subscription.currentLayer != nil { subscription.layerSwitches += 1 }
                subscription.currentLayer = layer
                subscription.waitingForKeyframe = false
            } else {
                subscription.droppedOtherLayer += 1
                continue
            }
            let outputType = subscription.payloadTypes[Int(payloadType)]
            guard outputType != 0xFF else {
                subscription.droppedNoCodec += 1
                continue
            }
            var gap: UInt32 = 1
            if subscription.currentSource != ssrc || subscription.needsResync {
                subscription.currentSource = ssrc
                subscription.needsResync = false
                subscription.sourceEpoch &+= 1
                if let last = subscription.lastForwardAt {
                    let elapsed = max(now - last, 0)
                    gap = UInt32(truncatingIfNeeded: max(elapsed * Int64(clockRate) / 1_000_000, 1))
                }
            }
            guard let sequenceNumber = subscription.sequence.rewrite(view.sequenceNumber, source: subscription.sourceEpoch) else {
                subscription.droppedLate += 1
                continue
            }
            let timestamp = subscription.timestamps.rewrite(view.timestamp, source: subscription.sourceEpoch, switchGap: gap)
            subscription.lastForwardAt = now
            subscription.lastInputTimestamp = view.timestamp
            subscription.lastOutputTimestamp = timestamp
            subscription.packetsSent &+= 1
            subscription.octetsSent &+= payloadOctets
            subscription.bytesSent &+= UInt64(packet.count)
            batch.append(Forward(
                subscriber: subscription.subscriber, ssrc: subscription.outgoingSSRC, sequenceNumber: sequenceNumber,
                timestamp: timestamp, payloadType: outputType, extensions: subscription.extensions))
        }
        return .forwarded
    }

    /// Slow path for an unknown SSRC: bind it to a layer by its rid, or to a single-stream
    /// track by its mid, when those SSRCs were not signaled (RFC 8852 / RFC 8843 §9.2).
    func bindUnsignaled(_ participant: ParticipantID, _ view: RTPPacketView) -> InboundRoute? {
        guard let state = participants[participant] else { return nil }
        for trackID in state.publishOrder {
            guard let track = state.published[trackID] else { continue }
            let ids = track.description.extensions
            if ids.rid != 0, let rid = view.extensionValue(id: ids.rid) {
                if let stream = track.streams.first(where: { $0.ssrc == nil && $0.rid.map { Array($0.utf8).elementsEqual(rid) } == true }) {
                    guard !state.usedSSRCs.contains(view.ssrc) else { return nil }
                    stream.ssrc = view.ssrc
                    bind(view.ssrc, to: stream, of: track, state: state, isRTX: false)
                    return inbound[Self.key(participant, view.ssrc)]
                }
            } else if ids.mid != 0, track.streams.count == 1, track.streams[0].ssrc == nil,
                      let mid = track.description.mid, let value = view.extensionValue(id: ids.mid),
                      Array(mid.utf8).elementsEqual(value) {
                guard !state.usedSSRCs.contains(view.ssrc) else { return nil }
                track.streams[0].ssrc = view.ssrc
                bind(view.ssrc, to: track.streams[0], of: track, state: state, isRTX: false)
                return inbound[Self.key(participant, view.ssrc)]
            }
        }
        return nil
    }
}
