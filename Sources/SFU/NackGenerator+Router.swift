import RTP

// Router hooks for loss repair on the publisher leg (docs/rtcp.md, NACK and RFC 4588 rows):
// each video stream's `NackGenerator` sees every arrival, its NACKs go out with `tick`, and
// the publisher's RTX answers are unwrapped and forwarded like the packets they repair.

extension Router {
    /// Records a media arrival for uplink NACKs; a sequence restart asks for a keyframe
    /// (the gap is too large to repair by retransmission).
    /// Returns false for a copy of a packet already received (network duplicate; audio through
    /// its `DuplicateFilter`, which also refuses packets older than its window): forwarded,
    /// it would reach every subscriber as an SRTP replay (see `unwrapRetransmission`).
    @inline(__always)
    func noteArrival(_ sequenceNumber: UInt16, publisher: ParticipantID, stream: InboundStream, now: Int64) -> Bool {
        guard stream.nacks != nil else {
            guard stream.duplicates?.accept(sequenceNumber) != false else {
                stream.duplicatesDropped &+= 1
                return false
            }
            return true
        }
        switch stream.nacks?.received(sequenceNumber, now: now) {
        case .restarted:
            requestKeyframe(publisher: publisher, stream: stream)
            return true
        case .duplicateOrLate:
            stream.duplicatesDropped &+= 1
            return false
        default:
            return true
        }
    }

    /// The original packet inside a publisher's RTX packet (RFC 4588 §4), written into
    /// `repairBuffer`; nil when it cannot be forwarded (padding-only probe, RTX payload type
    /// without a known `apt`, media SSRC not learned, too large).
    func unwrapRetransmission(_ rtx: RTPPacketView, of track: PublishedTrack, stream: InboundStream, now: Int64) -> RTPPacketView? {
        guard let osn = RTXPacket.originalSequenceNumber(rtx) else { return nil }
        // Even when it cannot be forwarded, the repair arrived: stop NACKing it.
        // Only a packet we were missing is forwarded. Chromium pads on the RTX SSRC with
        // copies of recently sent packets (RTPSender "payload padding", kRtxRedundantPayloads;
        // an idle or muted sender repeats its last packet hundreds of times): those copies
        // carry numbers every subscriber already got, so libsrtp's replay check drops them in
        // the subscriber's page (err=9, `srtp_err_status_replay_fail`) after the transport
        // counted the bytes and before transport-cc records them: phantom loss that drove
        // the subscribers' loss-based estimate down (BrowserSimulcastCapTests).
        if stream.nacks?.received(osn, now: now, isRetransmission: true) == .duplicateOrLate
            || (stream.nacks == nil && stream.duplicates?.accept(osn) == false) {
            stream.duplicatesDropped &+= 1
            return nil
        }
        guard let mediaSSRC = stream.ssrc, let original = track.payloads[Int(rtx.payloadType)].associatedPayloadType,
              let length = try? RTXPacket.unwrap(rtx, ssrc: mediaSSRC, payloadType: original, into: repairBuffer) else { return nil }
        return try? RTPPacketView(UnsafeRawBufferPointer(rebasing: repairBuffer[0..<length]))
    }

    /// One generic NACK per publisher stream with packets due (RFC 4585 §6.2.1), from the
    /// publisher's `controlSSRC`, named by the stream's media SSRC.
    func takeDueNACKs(now: Int64) -> [(participant: ParticipantID, packet: RTCPPacket)] {
        var due: [(ParticipantID, RTCPPacket)] = []
        // Index loops over arrays (no `for in`, no `first`): they allocate per call in debug
        // builds, and this runs per tick (issue 3).
        for state in participants.values {
            var trackIndex = 0
            while trackIndex < state.publishOrder.count {
                let trackID = state.publishOrder[trackIndex]
                trackIndex += 1
                guard let track = state.published[trackID], track.kind == .video else { continue }
                let codecs = track.description.codecs
                let clockRate = codecs.isEmpty ? 90000 : codecs[0].clockRate
                var streamIndex = 0
                while streamIndex < track.streams.count {
                    let stream = track.streams[streamIndex]
                    streamIndex += 1
                    guard let ssrc = stream.ssrc, stream.nacks != nil else { continue }
                    let jitter = NackGenerator.jitterMicroseconds(stream.hot.reception.jitter, clockRate: clockRate)
                    if let nack = stream.nacks?.makeNACK(senderSSRC: state.controlSSRC, mediaSSRC: ssrc, now: now, rtt: state.rtt, jitter: jitter) {
                        due.append((state.id, .nack(nack)))
                    }
                }
            }
        }
        return due
    }
}
