import IO
import RTP
import SFU
import SRTP

/// Loss repair state of a `SyntheticPeer` (loop thread only).
struct RetransmissionState {
    /// What we sent recently, for NACKs.
    var cache = SendPacketCache()
    /// Media SSRC → our RTX SSRC and the RTX payload type the remote answered (RFC 4588 §8).
    var rtxSend: [UInt32: (ssrc: UInt32, payloadType: UInt8)] = [:]
    /// RTX SSRC → next RTX sequence number (RFC 4588 §4: its own sequence, random start).
    var rtxSequence: [UInt32: UInt16] = [:]
    /// Remote RTX SSRC → the media SSRC it repairs (`a=ssrc-group:FID`), and the remote's RTX
    /// payload types.
    var rtxReceive: [UInt32: UInt32] = [:]
    var rtxReceivePayloadTypes: Set<UInt8> = []
    var feedbackTimer: TimerHandle?
    var counters = PeerRepairCounters()
    /// Scratch for RTX wrapping/unwrapping: the largest UDP payload.
    var scratch = [UInt8](repeating: 0, count: 65_535)
}

/// Loss repair of `SyntheticPeer`, on the loop thread:
/// - as a sender, a bounded cache of what it sent (`SendPacketCache`) and answers to generic
///   NACKs (RFC 4585 §6.2.1): RTX (RFC 4588 §4: own SSRC and payload type, the original
///   sequence number in the first two payload bytes) when negotiated, else the original again;
/// - as a receiver, RTX unwrapping into the repaired stream, and NACKs for its video gaps
///   from the SFU's own `NackGenerator` (reorder wait, RTT-spaced retries, give-up age);
/// - PLIs (RFC 4585 §6.3.1) on request, and a count of those received.
extension SyntheticPeer {
    /// 20 ms: the NackGenerator's tick (it batches one NACK per tick; its `minRetryInterval`).
    static let feedbackIntervalMilliseconds: Int64 = 20

    /// The SSRC our feedback is sent from (RFC 4585 §6.1 "SSRC of packet sender"): our video
    /// SSRC, else our first, else the receive-only one; the audio SSRC when configured so
    /// (a receiver that sends all feedback from one SSRC: the SFU must route by media SSRC).
    var feedbackSenderSSRC: UInt32 {
        if configuration.feedbackFromAudioSSRC, let audio = tracks.first(where: { $0.codec == .opus }) { return audio.ssrc }
        return (tracks.first { $0.codec == .vp8 } ?? tracks.first)?.ssrc ?? receiveOnlySSRC
    }

    /// Sends a PLI for `mediaSSRC` (a stream we receive). False when not connected or the
    /// send failed.
    public func sendPictureLossIndication(mediaSSRC: UInt32) -> Bool {
        onLoop { [self] in
            let pli = RTCPPictureLossIndication(senderSSRC: feedbackSenderSSRC, mediaSSRC: mediaSSRC)
            guard sendFeedback([.pictureLossIndication(pli)]) else { return false }
            repair.counters.plisSent += 1
            return true
        }
    }

    // MARK: - Negotiation hooks.

    /// RTX in both directions from the remote description (called by `apply(remote:)`).
    func updateRetransmission(remote: RemoteDescription) {
        for section in remote.sections {
            for (rtx, media) in section.rtxSSRCs { repair.rtxReceive[rtx] = media }
            repair.rtxReceivePayloadTypes.formUnion(section.rtxPayloadTypes.keys)
        }
        for track in tracks {
            guard let rtxSSRC = track.rtxSSRC, let parameters = sendParameters[track.mid],
                  let section = remote.sections.first(where: { $0.mid == track.mid }),
                  let rtxPayloadType = section.rtxPayloadTypes.first(where: { $0.value == parameters.payloadType })?.key else {
                repair.rtxSend[track.ssrc] = nil
                continue
            }
            repair.rtxSend[track.ssrc] = (rtxSSRC, rtxPayloadType)
            if repair.rtxSequence[rtxSSRC] == nil { repair.rtxSequence[rtxSSRC] = UInt16.random(in: 0...UInt16.max) }
        }
    }

    /// The remote candidates libnice is given: all of them, or — with `relayPort` — one host
    /// candidate per component on 127.0.0.1:relayPort (an impairment relay in front of the
    /// remote forwards to it).
    func relayedCandidates(_ candidates: [String]) -> [String] {
        guard let port = configuration.relayPort else { return candidates }
        var rewritten: [String] = []
        for candidate in candidates {
            // foundation component transport priority address port typ type …
            var fields = candidate.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            guard fields.count >= 8, fields[2].lowercased() == "udp" else { continue }
            fields[4] = "127.0.0.1"
            fields[5] = String(port)
            let value = fields.joined(separator: " ")
            if !rewritten.contains(value) { rewritten.append(value) }
        }
        return rewritten
    }

    // MARK: - Send side.

    /// Remembers an outgoing packet (unprotected) for NACKs.
    func rememberSent(_ packet: [UInt8], ssrc: UInt32, sequenceNumber: UInt16) {
        repair.cache.store(ssrc: ssrc, sequenceNumber: sequenceNumber, packet: packet, now: EventLoop.monotonicMicroseconds())
    }

    /// Feedback about our own streams (NACK, PLI, FIR); false for other packet types.
    func handleSenderFeedback(_ packet: RTCPPacket) -> Bool {
        let ours = Set(tracks.flatMap(\.mediaSSRCs))
        switch packet {
        case .nack(let nack):
            guard ours.contains(nack.mediaSSRC) else { repair.counters.unknownFeedbackSSRC += 1; return true }
            repair.counters.nacksReceived += 1
            repair.counters.nackedSequenceNumbersReceived += UInt64(nack.sequenceNumbers.count)
            for sequenceNumber in nack.sequenceNumbers { retransmit(ssrc: nack.mediaSSRC, sequenceNumber: sequenceNumber) }
            return true
        case .pictureLossIndication(let pli):
            if ours.contains(pli.mediaSSRC) { repair.counters.keyframeRequestsReceived += 1 } else { repair.counters.unknownFeedbackSSRC += 1 }
            sender?.requestKeyframe(ssrc: pli.mediaSSRC)  // simulcast layers answer with a keyframe
            return true
        case .fullIntraRequest(let fir):
            for entry in fir.entries {
                if ours.contains(entry.ssrc) { repair.counters.keyframeRequestsReceived += 1 } else { repair.counters.unknownFeedbackSSRC += 1 }
                sender?.requestKeyframe(ssrc: entry.ssrc)
            }
            return true
        default:
            return false
        }
    }

    /// Resends one cached packet: as RTX when negotiated for its SSRC, else as it was.
    func retransmit(ssrc: UInt32, sequenceNumber: UInt16) {
        let now = EventLoop.monotonicMicroseconds()
        guard let srtp, let original = repair.cache.packet(ssrc: ssrc, sequenceNumber: sequenceNumber, now: now) else {
            repair.counters.retransmissionsUnavailable += 1
            return
        }
        var packet = original
        var isRTX = false
        if let rtx = repair.rtxSend[ssrc], let rtxSequence = repair.rtxSequence[rtx.ssrc] {
            let written: Int? = original.withUnsafeBytes { source in
                repair.scratch.withUnsafeMutableBytes { output in
                    try? RTXPacket.wrap(source, ssrc: rtx.ssrc, payloadType: rtx.payloadType, sequenceNumber: rtxSequence, into: output)
                }
            }
            guard let written else { repair.counters.retransmissionsUnavailable += 1; return }
            packet = Array(repair.scratch[0..<written])
            repair.rtxSequence[rtx.ssrc] = rtxSequence &+ 1
            isRTX = true
        }
        packet.reserveCapacity(packet.count + srtp.profile.rtpOverhead)
        do { try srtp.protectRTP(&packet) } catch {
            counters.sendFailures += 1
            return
        }
        if send(packet) {
            repair.counters.retransmissionsSent += 1
            if isRTX { repair.counters.rtxSent += 1 }
        }
    }

    // MARK: - Receive side.

    /// True when `view` is RTX for a stream we receive (then it has been handled).
    func receiveRetransmission(_ view: RTPPacketView) -> Bool {
        guard repair.rtxReceivePayloadTypes.contains(view.payloadType), let mediaSSRC = repair.rtxReceive[view.ssrc] else {
            return false
        }
        guard let receiver = receivers[mediaSSRC] else { return true }  // nothing of it seen yet
        let written: Int? = repair.scratch.withUnsafeMutableBytes { output in
            try? RTXPacket.unwrap(view, ssrc: mediaSSRC, payloadType: receiver.payloadType, into: output)
        }
        guard let written else { counters.droppedDatagrams += 1; return true }  // padding-only probe
        let now = EventLoop.monotonicMicroseconds()
        repair.scratch.withUnsafeBytes { raw in
            guard let original = try? RTPPacketView(UnsafeRawBufferPointer(rebasing: raw[0..<written])) else { return }
            receiver.receive(original, nowMicroseconds: now, isRetransmission: true)
        }
        return true
    }

    /// A NACK generator for a new video stream when the peer NACKs.
    func attachNACKGenerator(_ receiver: StreamReceiver) {
        guard configuration.sendNACKs, receiver.codec == .vp8, receiver.nacks == nil else { return }
        receiver.nacks = NackGenerator(config: .video)
    }

    func scheduleFeedback() {
        guard repair.feedbackTimer == nil, state != .closed else { return }
        repair.feedbackTimer = loop.schedule(afterMilliseconds: Self.feedbackIntervalMilliseconds) { [weak self] in
            guard let self else { return }
            self.repair.feedbackTimer = nil
            guard self.state == .connected else { return }
            self.sendDueNACKs()
            self.scheduleFeedback()
        }
    }

    func cancelFeedback() {
        repair.feedbackTimer?.cancel()
        repair.feedbackTimer = nil
    }

    /// One reduced-size compound (RFC 5506) with a generic NACK per stream that has packets due.
    func sendDueNACKs() {
        let now = EventLoop.monotonicMicroseconds()
        let rtt = counters.roundTripMilliseconds.map { Int64($0 * 1000) }
        var packets: [RTCPPacket] = []
        var numbers = 0
        for receiver in receivers.values where receiver.nacks != nil {
            let jitter = NackGenerator.jitterMicroseconds(receiver.jitter, clockRate: receiver.codec?.clockRate ?? 90_000)
            if let nack = receiver.nacks?.makeNACK(senderSSRC: feedbackSenderSSRC, mediaSSRC: receiver.ssrc, now: now, rtt: rtt, jitter: jitter) {
                packets.append(.nack(nack))
                numbers += nack.sequenceNumbers.count
            }
        }
        guard !packets.isEmpty, sendFeedback(packets) else { return }
        repair.counters.nacksSent += UInt64(packets.count)
        repair.counters.nackedSequenceNumbersSent += UInt64(numbers)
    }

    /// Protects and sends feedback packets as one compound.
    func sendFeedback(_ packets: [RTCPPacket]) -> Bool {
        guard let srtp, state == .connected, var bytes = try? RTCPCompound.serialize(packets) else { return false }
        bytes.reserveCapacity(bytes.count + srtp.profile.rtcpOverhead)
        do { try srtp.protectRTCP(&bytes) } catch {
            counters.sendFailures += 1
            return false
        }
        return send(bytes)
    }
}
