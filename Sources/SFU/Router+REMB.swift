import RTP

// REMB towards publishers that cannot use transport-cc (docs/rtcp.md, REMB): a publisher
// whose video tracks accept REMB (`TrackDescription.acceptsREMB`) but carry no transport-wide
// sequence numbers gets, with each of its regular reports, a REMB
// (draft-alvestrand-rmcat-remb-03 §2.2) with our receive-side estimate
// (`ReceiveSideEstimate`), naming all its media SSRCs. Its browser then caps its send rate
// (and drops simulcast layers) on our word, as it would with transport-cc feedback.
// Subscribers' REMBs are never forwarded to publishers: the SFU terminates them.
extension Router {
    /// True when the participant should get REMB from us.
    func wantsREMB(_ state: ParticipantState) -> Bool {
        var accepts = false
        for track in state.published.values where track.kind == .video {
            if track.description.extensions.transportCC != 0 { return false }
            if track.description.acceptsREMB { accepts = true }
        }
        return accepts
    }

    /// The REMB for a report interval, from the report blocks just made about its streams
    /// (their fraction lost is this interval's) and its streams' measured rates.
    func makeREMB(for state: ParticipantState, blocks: [RTCPReportBlock], now: Int64) -> RTCPPacket? {
        guard wantsREMB(state) else { return nil }
        var incoming: UInt64 = 0
        var ssrcs: [UInt32] = []
        for trackID in state.publishOrder {
            guard let track = state.published[trackID] else { continue }
            for stream in track.streams {
                incoming += stream.meter.bitrate(now: now)
                if let ssrc = stream.ssrc { ssrcs.append(ssrc) }
            }
        }
        guard incoming > 0, !ssrcs.isEmpty else { return nil }
        // The mean fraction lost over its streams' report blocks of this interval.
        let fraction = blocks.isEmpty ? 0 : Double(blocks.reduce(0) { $0 + Int($1.fractionLost) }) / Double(blocks.count) / 256
        let bitrate = state.downlink.receiveEstimate.update(incomingBps: incoming, fractionLost: fraction, now: now)
        state.downlink.rembSent += 1
        return .remb(RTCPReceiverEstimatedMaxBitrate(senderSSRC: state.controlSSRC, bitrate: bitrate, ssrcs: Array(ssrcs.prefix(255))))
    }
}
