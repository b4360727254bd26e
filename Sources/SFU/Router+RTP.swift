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
    /// RTX not forwarded (counted): padding-only probe, unknown `apt`, unlearned media
    /// SSRC, or a copy of a packet already received (RTX payload padding). A repairing RTX
    /// packet is unwrapped (RFC 4588) and reported as `.forwarded`.
    case retransmission
    /// A media packet already received (video: the stream's `NackGenerator`; audio: its
    /// `DuplicateFilter`, which also refuses packets over 64 behind): not forwarded,
    /// subscribers' SRTP would reject it as a replay (counted per stream).
    case duplicate
}

extension Router {
    /// The forwarding hot path. Parses `packet` (SRTP already removed), updates reception
    /// statistics, and fills `batch` with one rewrite decision per subscriber that should
    /// receive it; the caller then writes each with `batch.write(_:into:)` into its send
    /// buffer. Does not allocate once the batch and the router's state are warm.
    /// - Parameters:
    ///   - now: the time the packet is handled, monotonic µs.
    ///   - arrival: when the packet reached our socket (kernel timestamp, same clock), for the
    ///     transport-cc feedback: the sender's delay-based estimator reads every difference
    ///     between arrival gaps and send gaps as queuing, so stamping with `now` would report
    ///     the SFU's own scheduling stalls as a congested path. nil: `now`.
    @discardableResult
    public func handleRTP(from participant: ParticipantID, packet: UnsafeRawBufferPointer, now: Int64, arrival: Int64? = nil,
                          into batch: inout ForwardingBatch) -> RTPDisposition {
        batch.reset(source: nil)
        var view: RTPPacketView
        do { view = try RTPPacketView(packet) } catch {
            participants[participant]?.droppedMalformedRTP += 1
            return .malformed
        }
        let ssrc = view.ssrc
        let route = inbound[Self.key(participant, ssrc)] ?? bindUnsignaled(participant, view)
        // Transport-wide CC (draft-holmer §2): every packet of the transport counts, RTX and
        // packets we cannot route included (the sender's padding probes on an unsignaled RTX
        // SSRC: reported missing, they would read as loss and hold its estimate down), so it
        // is recorded before any routing decision or unwrap. BUNDLE: one id per transport.
        let tccID = route?.track.description.extensions.transportCC
            ?? participants[participant]?.description.receiveExtensions.transportCC ?? 0
        if tccID != 0, let transportSequence = view.transportWideSequenceNumber(extensionID: tccID) {
            participants[participant]?.transportFeedback.record(sequenceNumber: transportSequence, arrival: min(arrival ?? now, now))
        }
        guard let route else {
            guard let state = participants[participant] else { return .unknownParticipant }
            state.droppedUnknownSSRC += 1
            return .unknownSSRC
        }
        let track = route.track
        lastRoutedKind = track.kind  // for the pacer (audio never waits behind video)
        let stream = route.stream
        if track.kind == .audio { observeAudioLevel(view, track: track, participant: participant, now: now) }
        var repaired = false
        if route.isRTX {
            stream.rtxPackets += 1
            guard let original = unwrapRetransmission(view, of: track, stream: stream, now: now) else { return .retransmission }
            view = original
            repaired = true
        }
        let payloadType = view.payloadType
        let payload = track.payloads[Int(payloadType)]
        guard payload.clockRate != 0 else {
            track.droppedUnknownPayloadType += 1
            return .unknownPayloadType
        }
        let isKeyframe = payload.detector != .none && payload.detector.isKeyframeStart(view.payload)
        if !repaired {  // RFC 3550 reception stats (and jitter) are about the media SSRC's own packets
            stream.hot.record(
                seq: view.sequenceNumber, timestamp: view.timestamp, now: now, clockRate: payload.clockRate,
                length: view.buffer.count, isKeyframe: isKeyframe)
            stream.meter.add(bytes: view.buffer.count, now: now)
            guard noteArrival(view.sequenceNumber, publisher: participant, stream: stream, now: now) else { return .duplicate }
        }
        if isKeyframe {
            stream.keyframeRequests.pending = false  // the keyframe answers any waiting request
            if payload.detector == .vp8, let size = KeyframeDetector.vp8KeyframeSize(view.payload) {
                stream.width = size.width
                stream.height = size.height
            }
        }
        guard !track.muted else {
            track.droppedMuted += 1
            return .muted
        }
        // The original, once for every subscriber's NACKs (their `SentPacketLog`s point here);
        // a publisher's RTX repair is stored in its unwrapped form, filling the hole.
        if !track.slots.isEmpty { stream.cache.insert(view.buffer, sequenceNumber: view.sequenceNumber, now: now) }
        batch.reset(source: view)
        let facts = PacketFacts(
            ssrc: view.ssrc, sequenceNumber: view.sequenceNumber, timestamp: view.timestamp, layer: stream.layer,
            codecIndex: payload.codecIndex, clockRate: payload.clockRate,
            canSwitch: isKeyframe || payload.detector == .none,
            payloadOctets: UInt32(truncatingIfNeeded: view.payloadRange.count), length: view.buffer.count, now: now,
            referenceOffset: stream.referenceOffset,
            vp8: payload.detector == .vp8 ? VP8PictureFields(payload: view.payload) : nil)
        // One exclusive access to all subscribers' hot state.
        track.slots.withUnsafeMutableBufferPointer { slots in
            for index in slots.indices {
                if let forward = slots[index].forward(facts) { batch.append(forward) }
            }
        }
        return .forwarded
    }

    /// Slow path for an unknown SSRC: bind it to a layer by its rid, to a layer's RTX by its
    /// repaired rid, or to a single-stream track by its mid, when those SSRCs were not signaled
    /// (RFC 8852 §3–4 / RFC 8843 §9.2). Chromium's rid simulcast signals no SSRCs at all.
    func bindUnsignaled(_ participant: ParticipantID, _ view: RTPPacketView) -> InboundRoute? {
        guard let state = participants[participant] else { return nil }
        for trackID in state.publishOrder {
            guard let track = state.published[trackID] else { continue }
            let ids = track.description.extensions
            if ids.repairedRid != 0, let rid = view.extensionValue(id: ids.repairedRid) {
                guard let stream = track.streams.first(where: { $0.rtxSSRC == nil && $0.rid.map { Array($0.utf8).elementsEqual(rid) } == true })
                else { continue }
                guard !state.usedSSRCs.contains(view.ssrc) else { return nil }
                stream.rtxSSRC = view.ssrc
                bind(view.ssrc, to: stream, of: track, state: state, isRTX: true)
                return inbound[Self.key(participant, view.ssrc)]
            } else if ids.rid != 0, let rid = view.extensionValue(id: ids.rid) {
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
