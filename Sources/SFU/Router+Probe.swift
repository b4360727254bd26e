import RTP

// Bandwidth probing before a layer upgrade (issue 4). The send-side estimate cannot grow past
// about 1.5 × what is actually sent, so a subscriber on a low layer would never see the
// headroom for a higher one. When its `LayerSelector` asks (`wantsProbe`), the router opens a
// probe burst: for `probeDuration` every packet sent to it is tagged with a probe cluster, and
// padding-only RTP packets top the send rate up to the selector's `probeBps`. The estimator
// turns the acknowledged cluster into a delivered rate (libwebrtc `ProbeBitrateEstimator`).
//
// Padding follows libwebrtc's RTPSender: padding-only packets on the RTX SSRC with the RTX
// payload type when the subscriber negotiated RTX for the codec (`GeneratePadding` with
// `kRtxRedundantPayloads` off), else on the media SSRC with the P bit, taking the next output
// sequence number (the media continues after it), timestamp = the last one sent. 255 padding
// octets per packet: the most RFC 3550 §5.1 allows (the count is one octet); LiveKit pads
// with 255 too. Receivers drop padding-only packets before decoding.
extension Router {
    /// 300 ms: with the socket layer's 20 ms timer that is 15 bursts, so the probe's send
    /// and receive spans are long against the burst spacing; libwebrtc's clusters are ≥ 15 ms
    /// but paced per packet, which a 20 ms timer cannot do.
    static let probeDuration: Int64 = 300_000
    /// At most 200 KB of padding per probe (≈ 5 Mbit/s for 300 ms): bounds what one probe
    /// can add to a congested link whatever the selector asks.
    static let probeBudgetBytes = 200_000
    /// 255 padding octets (+ 12 header + 8 extension) per padding packet.
    static let paddingLength = 255

    func startProbe(for state: ParticipantState, targetBps: UInt64, now: Int64) {
        if let probe = state.downlink.probe, now < probe.end { return }
        // Not into a standing queue: the link is full, and 300 ms of padding (up to 200 KB)
        // would overflow it (seen end to end: a probe 1.2 s after a cap, the 30 kB queue
        // still 0.5 s deep, 31 packets tail-dropped and the low layer's picture froze).
        // libwebrtc probes only when application-limited, never behind a queue.
        guard !state.downlink.estimator.queueStanding else { return }
        guard let (ssrc, rtx) = probeCarrier(for: state) else { return }
        let sending = state.downlink.media.bitrate(now: now)
        let padding = targetBps > sending ? targetBps - sending : 0
        guard padding > 0 else { return }
        let budget = min(Int(padding * UInt64(Self.probeDuration) / 8_000_000), Self.probeBudgetBytes)
        state.downlink.probe = ProbeBurst(
            cluster: state.downlink.nextProbeCluster, targetBps: targetBps, paddingBps: padding, start: now,
            end: now + Self.probeDuration, budgetBytes: budget, ssrc: ssrc, rtxPayloadType: rtx)
        state.downlink.nextProbeCluster += 1
        state.downlink.probesStarted += 1
    }

    /// The video subscription padding goes on: the first one that has forwarded and is not
    /// paused, with the subscriber's RTX payload type for the track's codec if negotiated —
    /// else, when all its video is paused, the first one with RTX: padding on the RTX SSRC
    /// leaves the paused media sequence alone, and without a probe a subscriber whose video
    /// was paused could never show the bandwidth to resume it (the estimate cannot grow past
    /// 1.5 × the audio it still receives; seen end to end on a loaded host: 30 s paused).
    func probeCarrier(for state: ParticipantState) -> (UInt32, UInt8?)? {
        let candidates = state.subscriptions.values
            .filter { $0.track.kind == .video && ($0.slot.map { $0.packetsSent > 0 } ?? false) }
            .sorted { $0.outgoingSSRC < $1.outgoingSSRC }
        func rtxType(_ subscription: Subscription) -> UInt8? {
            for codec in subscription.track.description.codecs {
                if let match = state.description.receiveCodecs.first(where: { $0.matches(codec) }),
                   let type = match.rtxPayloadType, type < 128 {
                    return type
                }
            }
            return nil
        }
        if let live = candidates.first(where: { !($0.slot?.paused ?? true) }) { return (live.outgoingSSRC, rtxType(live)) }
        for paused in candidates { if let rtx = rtxType(paused) { return (paused.outgoingSSRC, rtx) } }
        return nil
    }

    func finishProbes(now: Int64) {
        for state in participants.values {
            if let probe = state.downlink.probe, now >= probe.end { endProbe(of: state) }
        }
    }

    /// Ends the running probe of `state` and tells its estimator the cluster is complete.
    func endProbe(of state: ParticipantState) {
        guard let probe = state.downlink.probe else { return }
        state.downlink.probe = nil
        state.downlink.estimator.probeClusterEnded(probe.cluster)
    }

    /// Subscribers with probe padding due at `now`, appended to `out`; for each, call
    /// `writeProbePadding` until it returns nil.
    public func takeProbingSubscribers(now: Int64, into out: inout [ParticipantID]) {
        for state in participants.values {
            guard let probe = state.downlink.probe else { continue }
            if now >= probe.end && paddingDue(probe, now: now) <= 0 { endProbe(of: state); continue }
            if paddingDue(probe, now: now) > 0 { out.append(state.id) }
        }
    }

    func paddingDue(_ probe: ProbeBurst, now: Int64) -> Int {
        let elapsed = min(max(now - probe.start, 0), probe.end - probe.start)
        let owed = Int(probe.paddingBps * UInt64(elapsed) / 8_000_000)
        return min(owed, probe.budgetBytes) - probe.paddingBytes
    }

    /// Writes the next padding-only packet of `subscriber`'s probe (pre-SRTP) into `output`
    /// and records it as sent in the probe cluster; nil when no padding is due.
    /// - Parameter transportSequenceNumber: the subscriber transport's next transport-wide
    ///   number (written when it negotiated transport-cc; the caller then increments it).
    public func writeProbePadding(subscriber: ParticipantID, now: Int64, transportSequenceNumber: UInt16?, into output: UnsafeMutableRawBufferPointer) throws(RTPError) -> Int? {
        guard let state = participants[subscriber], var probe = state.downlink.probe, paddingDue(probe, now: now) > 0,
              let subscription = state.subscriptions[probe.ssrc] else { return nil }
        let tccID = state.description.receiveExtensions.transportCC
        let tcc = transportSequenceNumber.flatMap { tccID == 0 || tccID > 14 ? nil : $0 }
        let size = 12 + (tcc == nil ? 0 : 8) + Self.paddingLength
        guard output.count >= size else { throw .bufferTooSmall }
        let ssrc: UInt32
        let payloadType: UInt8
        let sequenceNumber: UInt16
        let timestamp: UInt32
        // Paused since the probe began: only RTX padding goes on (the media sequence is left alone).
        guard let slot = subscription.slot, !slot.paused || probe.rtxPayloadType != nil else { return nil }
        if let rtx = probe.rtxPayloadType {
            ssrc = subscription.outgoingRTXSSRC
            payloadType = rtx
            if subscription.repair != nil, let number = subscription.repair?.responder.takeRTXSequenceNumber() {
                sequenceNumber = number
            } else {
                sequenceNumber = subscription.probeRTXSequence
                subscription.probeRTXSequence &+= 1
            }
            timestamp = slot.lastOutputTimestamp
        } else {
            var inserted: (sequenceNumber: UInt16, timestamp: UInt32)?
            subscription.updateSlot { inserted = $0.insertPadding() }
            guard let inserted else { return nil }
            ssrc = subscription.outgoingSSRC
            payloadType = (0..<16).lazy.map { slot.payloadTypes[$0] }.first { $0 & 0x80 != 0 }.map { $0 & 0x7F } ?? 0
            sequenceNumber = inserted.sequenceNumber
            timestamp = inserted.timestamp
        }
        output[0] = 0x80 | 0x20 | (tcc == nil ? 0 : 0x10)  // V=2, P, X
        output[1] = payloadType & 0x7F
        output[2] = UInt8(truncatingIfNeeded: sequenceNumber >> 8)
        output[3] = UInt8(truncatingIfNeeded: sequenceNumber)
        for (index, value) in [timestamp, ssrc].enumerated() {
            for byte in 0..<4 { output[4 + 4 * index + byte] = UInt8(truncatingIfNeeded: value >> (24 - 8 * UInt32(byte))) }
        }
        var offset = 12
        if let tcc {
            // RFC 8285 one-byte form: 0xBEDE, one word: id/len, 2 bytes, 1 pad.
            output[12] = 0xBE; output[13] = 0xDE; output[14] = 0; output[15] = 1
            output[16] = tccID << 4 | 1
            output[17] = UInt8(truncatingIfNeeded: tcc >> 8)
            output[18] = UInt8(truncatingIfNeeded: tcc)
            output[19] = 0
            offset = 20
        }
        for index in offset..<(offset + Self.paddingLength - 1) { output[index] = 0 }
        output[offset + Self.paddingLength - 1] = UInt8(Self.paddingLength)  // RFC 3550 §5.1: last octet = count
        probe.paddingBytes += size
        probe.packets += 1
        state.downlink.probe = probe
        state.downlink.paddingPackets += 1
        state.downlink.paddingBytes += UInt64(size)
        state.downlink.sent.add(bytes: size, now: now)
        if let tcc { state.downlink.estimator.packetSent(transportSequenceNumber: tcc, size: size, now: now, probeCluster: probe.cluster) }
        return size
    }
}
