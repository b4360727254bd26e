import RTP

/// RTCP packets for one participant, to serialize as one compound (RFC 3550 §6.1, or
/// reduced-size per RFC 5506 for feedback alone) and send over its SRTCP context.
public struct OutgoingRTCP: Equatable, Sendable {
    public var participant: ParticipantID
    public var packets: [RTCPPacket]
}

extension Router {
    /// Consumes an RTCP compound from a participant (SRTCP already removed); policy per
    /// packet type in docs/rtcp.md. Feedback is routed by the media SSRC it names, never by
    /// the RTCP sender SSRC. Returns RTCP due now (coalesced keyframe requests upstream).
    /// - Parameters:
    ///   - now: arrival time, monotonic µs.
    ///   - ntp: wall clock at arrival (for RTT from LSR/DLSR).
    ///
    /// Walks the compound in place (`RTCPCompoundReader`, `RTCPPacketView.decoded()`) and
    /// loops by index: in steady state this allocates nothing per packet (issue 3,
    /// `SFUServerAllocationTests`), transport-cc feedback included (`TransportFeedbackView`,
    /// `BandwidthEstimatorAllocationTests`).
    public func handleRTCP(from participant: ParticipantID, packet: UnsafeRawBufferPointer, now: Int64, ntp: NTPTime) throws(RTCPError) -> [OutgoingRTCP] {
        guard let state = participants[participant] else { return [] }
        // Two passes over the bytes (no copies): a malformed compound is refused whole,
        // before any of it is acted on.
        do {
            var check = RTCPCompoundReader(packet)
            while let view = try check.next() { _ = try view.decoded() }
        } catch {
            state.malformedRTCP += 1
            throw error
        }
        state.rtcpPackets += 1
        var reader = RTCPCompoundReader(packet)
        while let view = try? reader.next(), let decoded = try? view.decoded() {
            handle(decoded, from: state, now: now, ntp: ntp)
        }
        return collectRTCP(now: now, ntp: ntp, includeReports: false)
    }

    /// Policy for one packet of a compound (docs/rtcp.md).
    func handle(_ packet: RTCPPacketView.Decoded, from state: ParticipantState, now: Int64, ntp: NTPTime) {
        switch packet {
        case .senderReport(let report):
            if let route = inbound[Self.key(state.id, report.ssrc)], !route.isRTX {
                route.stream.lastSenderReport = (NTPTime(raw: report.ntpTimestamp).middle32, now)
                route.stream.hot.rtpAnchor = (report.rtpTimestamp, now)
                route.stream.hot.anchorFromSenderReport = true
                let clock = SenderClock(ntp: NTPTime(raw: report.ntpTimestamp), rtp: report.rtpTimestamp)
                route.stream.senderClock = clock
                let clockRate = route.stream.clockRate
                route.stream.referenceOffset = clockRate > 0 ? clock.referenceOffset(clockRate: clockRate) : nil
                state.senderClockOffset.observe(arrival: now, senderMicros: clock.senderMicros)
            }
            consume(report.blocks, from: state, now: now, ntp: ntp)
        case .receiverReport(let report):
            consume(report.blocks, from: state, now: now, ntp: ntp)
        case .nack(let nack):
            if let subscription = state.subscriptions[nack.mediaSSRC] {
                answerNACK(nack, subscription: subscription, subscriber: state, now: now)
            } else {
                state.unknownFeedbackSSRC += 1
            }
        case .pictureLossIndication(let pli):
            keyframeWanted(by: state, mediaSSRC: pli.mediaSSRC)
        case .fullIntraRequest(let fir):
            var index = 0
            while index < fir.entryCount {
                keyframeWanted(by: state, mediaSSRC: fir.entry(at: index).ssrc)
                index += 1
            }
        case .remb(let remb):
            // Terminated here, never forwarded upstream (docs/rtcp.md, REMB). The estimate
            // is what counts; the SSRC list is not copied (it would allocate).
            consumeREMB(RTCPReceiverEstimatedMaxBitrate(senderSSRC: remb.senderSSRC, bitrate: remb.bitrate, ssrcs: []), from: state, now: now)
        case .transportFeedback(_, _, let body):
            consumeTransportFeedback(body: body, from: state, now: now)
        case .goodbye:
            state.goodbyes += 1
        case .sourceDescription, .application, .other:
            break
        }
    }

    func consume(_ blocks: RTCPReportBlocksView, from state: ParticipantState, now: Int64, ntp: NTPTime) {
        var loss = (sum: 0, count: 0)
        defer { consumeReceiverLoss(loss, from: state, now: now) }
        var index = 0
        while index < blocks.count {
            let block = blocks.block(at: index)
            index += 1
            guard let subscription = state.subscriptions[block.ssrc] else {
                state.unknownFeedbackSSRC += 1
                continue
            }
            subscription.remoteReport = block
            loss.sum += Int(block.fractionLost)
            loss.count += 1
            // RFC 3550 §6.4.1: RTT = A - LSR - DLSR, in 1/65536 s.
            guard block.lastSenderReport != 0 else { continue }
            let rtt = ntp.middle32 &- block.lastSenderReport &- block.delaySinceLastSenderReport
            guard rtt < 0x8000_0000 else { continue }  // negative: clock or report mismatch
            let micros = CompactNTP.toMicroseconds(rtt)
            subscription.rtt = micros
            state.rtt = micros
        }
    }

    func keyframeWanted(by state: ParticipantState, mediaSSRC: UInt32) {
        guard let subscription = state.subscriptions[mediaSSRC] else {
            state.unknownFeedbackSSRC += 1
            return
        }
        subscription.keyframeRequestsReceived += 1
        requestKeyframe(for: subscription)
    }

    /// A keyframe of the layer `subscription` is on (or waits for), from its publisher.
    func requestKeyframe(for subscription: Subscription) {
        let track = subscription.track
        guard track.kind == .video, let slot = subscription.slot else { return }
        let layer = slot.waitingForKeyframe || slot.currentLayer == nil ? slot.targetLayer : (slot.currentLayer ?? slot.targetLayer)
        requestKeyframe(publisher: track.publisher, stream: track.streams[layer])
    }

    /// Periodic work: sender/receiver reports when a participant's interval is due, queued
    /// BYEs, and keyframe requests whose throttle window has passed.
    /// - Parameters:
    ///   - now: monotonic µs.
    ///   - ntp: wall clock now (SR NTP timestamps).
    public func tick(now: Int64, ntp: NTPTime) -> [OutgoingRTCP] {
        lastNow = now
        evaluateSpeakers(now: now)
        evaluateLayers(now: now)         // bandwidth: what each subscriber wants
        followArrivingLayers(now: now)   // liveness: never a layer that is not arriving
        requestKeyframesForUnrepairableLoss()
        return collectRTCP(now: now, ntp: ntp, includeReports: true)
    }

    func collectRTCP(now: Int64, ntp: NTPTime, includeReports: Bool) -> [OutgoingRTCP] {
        var byParticipant: [ParticipantID: [RTCPPacket]] = [:]
        if includeReports {
            for state in participants.values where now - state.lastReportAt >= reportInterval(for: state) {
                let reports = makeReports(for: state, now: now, ntp: ntp)
                state.lastReportAt = now
                if !reports.isEmpty { byParticipant[state.id, default: []] += reports }
            }
        }
        for state in participants.values where !state.outbox.isEmpty {
            byParticipant[state.id, default: []] += state.outbox
            state.outbox.removeAll()
        }
        for request in takeDueKeyframeRequests(now: now) {
            byParticipant[request.participant, default: []].append(request.packet)
        }
        if includeReports {
            for request in takeDueNACKs(now: now) { byParticipant[request.participant, default: []].append(request.packet) }
            for state in participants.values where state.transportFeedback.isDue(now: now) {
                // The media SSRC field is unused for transport-wide feedback; name one of the
                // participant's streams so strict parsers see a known SSRC.
                let mediaSSRC = firstPublishedSSRC(of: state) ?? 0
                for packet in state.transportFeedback.rtcpPackets(now: now, senderSSRC: state.controlSSRC, mediaSSRC: mediaSSRC) {
                    byParticipant[state.id, default: []].append(.transportFeedback(packet))
                }
            }
        }
        return byParticipant.keys.sorted().map { OutgoingRTCP(participant: $0, packets: byParticipant[$0] ?? []) }
    }

    /// The first learned SSRC of the participant's tracks, in publish order. Index loops: the
    /// lazy flatMap/compactMap chain it replaces allocated ≈ 9 times per tick in debug builds.
    func firstPublishedSSRC(of state: ParticipantState) -> UInt32? {
        var trackIndex = 0
        while trackIndex < state.publishOrder.count {
            if let track = state.published[state.publishOrder[trackIndex]] {
                var streamIndex = 0
                while streamIndex < track.streams.count {
                    if let ssrc = track.streams[streamIndex].ssrc { return ssrc }
                    streamIndex += 1
                }
            }
            trackIndex += 1
        }
        return nil
    }

    func reportInterval(for state: ParticipantState) -> Int64 {
        let publishesVideo = state.published.values.contains { $0.kind == .video }
        let receivesVideo = state.subscriptions.values.contains { $0.track.kind == .video }
        return publishesVideo || receivesVideo ? config.videoReportInterval : config.audioReportInterval
    }

    /// Keyframe requests whose throttle window has passed, as PLI or FIR per the track's
    /// negotiation; the rest stay queued. The queue is compacted in place, so an RTCP input
    /// while a request waits out its window allocates nothing (issue 3).
    func takeDueKeyframeRequests(now: Int64) -> [(participant: ParticipantID, packet: RTCPPacket)] {
        var due: [(ParticipantID, RTCPPacket)] = []
        var kept = 0
        var index = 0
        while index < pendingKeyframeStreams.count {
            let entry = pendingKeyframeStreams[index]
            index += 1
            let stream = entry.stream
            guard stream.keyframeRequests.pending, let ssrc = stream.ssrc,
                  let publisher = participants[entry.publisher],
                  let track = inbound[Self.key(entry.publisher, ssrc)]?.track
            else {
                // Answered by a keyframe, SSRC not learned yet, or gone: keep only the unlearned.
                if stream.keyframeRequests.pending, stream.ssrc == nil {
                    pendingKeyframeStreams[kept] = entry
                    kept += 1
                }
                continue
            }
            if let last = stream.keyframeRequests.lastSentAt, now - last < config.keyframeRequestInterval {
                pendingKeyframeStreams[kept] = entry
                kept += 1
                continue
            }
            stream.keyframeRequests.pending = false
            stream.keyframeRequests.lastSentAt = now
            stream.keyframeRequests.sent += 1
            switch track.description.keyframeRequest {
            case .pli:
                due.append((entry.publisher, .pictureLossIndication(RTCPPictureLossIndication(senderSSRC: publisher.controlSSRC, mediaSSRC: ssrc))))
            case .fir:
                stream.keyframeRequests.firSequence &+= 1
                due.append((entry.publisher, .fullIntraRequest(RTCPFullIntraRequest(
                    senderSSRC: publisher.controlSSRC, mediaSSRC: 0,
                    entries: [.init(ssrc: ssrc, sequenceNumber: stream.keyframeRequests.firSequence)]))))
            }
        }
        pendingKeyframeStreams.removeLast(pendingKeyframeStreams.count - kept)
        return due
    }

    /// SRs for every outgoing SSRC that has sent, RRs about every received stream, SDES.
    func makeReports(for state: ParticipantState, now: Int64, ntp: NTPTime) -> [RTCPPacket] {
        var packets: [RTCPPacket] = []
        var chunks: [RTCPSourceDescription.Chunk] = []
        let sending = state.subscriptions.values.compactMap { subscription in
            subscription.slot.flatMap { $0.packetsSent > 0 ? (subscription, $0) : nil }
        }.sorted { $0.0.outgoingSSRC < $1.0.outgoingSSRC }
        for (subscription, slot) in sending {
            packets.append(.senderReport(senderReport(for: slot, of: subscription.track, now: now, ntp: ntp)))
            let cname = participants[subscription.track.publisher]?.description.cname ?? ""
            chunks.append(.init(ssrc: subscription.outgoingSSRC, items: [.init(type: 1, value: Array(cname.utf8.prefix(255)))]))
        }
        var blocks: [RTCPReportBlock] = []
        for trackID in state.publishOrder {
            guard let track = state.published[trackID] else { continue }
            for stream in track.streams where stream.hot.packets > 0 {
                guard let ssrc = stream.ssrc else { continue }
                let lsr = stream.lastSenderReport
                let dlsr = lsr.map { CompactNTP.fromMicroseconds(now - $0.arrival) } ?? 0
                blocks.append(stream.hot.reception.makeReportBlock(ssrc: ssrc, lastSenderReport: lsr?.middle ?? 0, delaySinceLastSenderReport: dlsr))
            }
        }
        // RFC 3550 §6.4: at most 31 report blocks per packet; more go in further RRs.
        var start = 0
        while start < blocks.count {
            let end = min(start + 31, blocks.count)
            packets.append(.receiverReport(RTCPReceiverReport(ssrc: state.controlSSRC, reportBlocks: Array(blocks[start..<end]))))
            start = end
        }
        if let remb = makeREMB(for: state, blocks: blocks, now: now) { packets.append(remb) }
        if !chunks.isEmpty {
            // 31 chunks per SDES packet (5-bit count).
            var index = 0
            while index < chunks.count {
                let end = min(index + 31, chunks.count)
                packets.append(.sourceDescription(RTCPSourceDescription(chunks: Array(chunks[index..<end]))))
                index = end
            }
        }
        return packets
    }

    /// RFC 3550 §6.4.1 SR for an outgoing SSRC: NTP = wall clock; RTP timestamp = the source's
    /// RTP time now, mapped through this subscription's current timestamp offset.
    ///
    /// The source's RTP time now comes from the publisher's last SR read on the publisher's
    /// clock (`SenderClock`, `PublisherClockOffset`): every stream of one publisher is then
    /// shifted by the same amount, so a subscriber's audio/video sync sees the publisher's
    /// own relation between them. Before the publisher's first SR: its last packet's RTP
    /// time at that packet's arrival.
    func senderReport(for slot: ForwardingSlot, of track: PublishedTrack, now: Int64, ntp: NTPTime) -> RTCPSenderReport {
        let offset = slot.lastOutputTimestamp &- slot.lastInputTimestamp
        let clockRate = track.description.codecs.first?.clockRate ?? 0
        var sourceNow = slot.lastInputTimestamp
        var anchorAt = slot.lastForwardAt ?? now
        let stream = slot.currentLayer.flatMap { $0 < track.streams.count ? track.streams[$0] : nil }
        if let stream, let clock = stream.senderClock, let publisherOffset = participants[track.publisher]?.senderClockOffset.offset {
            sourceNow = clock.rtp(atSenderMicros: now - publisherOffset, clockRate: clockRate)
            anchorAt = now
        } else if let anchor = stream?.hot.rtpAnchor {
            sourceNow = anchor.rtp
            anchorAt = anchor.at
        }
        let elapsed = now - anchorAt
        let advance = elapsed * Int64(clockRate) / 1_000_000
        let rtp = sourceNow &+ UInt32(truncatingIfNeeded: advance) &+ offset
        return RTCPSenderReport(
            ssrc: slot.outgoingSSRC, ntpTimestamp: ntp.raw, rtpTimestamp: rtp,
            packetCount: slot.packetsSent, octetCount: slot.octetsSent)
    }
}
