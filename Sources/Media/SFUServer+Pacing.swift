import SFU
import SRTP

/// The send side of pacing (`Pacer`, docs/rtcp.md "Pacing"): the handlers admit each
/// written packet to the pacer and send it at once when it allows; the timer releases what
/// waited, stamping the transport-wide number, recording the send for the estimator and
/// protecting it at egress — the estimator compares these send times with the subscriber's
/// arrival times, so they must be when the packet leaves. Loop thread only.
extension SFUServer {
    /// Releases the queued packets the pacer allows at `now` (µs). No allocation: the
    /// callback is not escaping and each packet is protected in its pool slot.
    func releasePaced(now: Int64) {
        pacer.release(now: now) { packet in
            let raw = Int(packet.lane.raw)
            guard raw < slots.count, let subscriber = slots[raw], let outbound = subscriber.srtp else { return }
            router.recordSent(subscriber: packet.lane, transportSequenceNumber: packet.transportSequenceNumber, size: packet.length, now: now)
            do {
                if try protectAndSend(packet.bytes, length: packet.length, with: outbound, to: subscriber) {
                    if packet.packetClass == .retransmission { counters.retransmitted &+= 1 } else { counters.forwarded &+= 1 }
                }
            } catch {
                counters.forwardErrors &+= 1
            }
        }
        if pacer.hasKeyframeRequests { handlePacerKeyframeRequests() }
    }

    /// Protects the RTP packet in `buffer[0..<length]` in place with `outbound` (the
    /// subscriber's SRTP session) and sends it to `subscriber`, counting it on the
    /// subscriber; true when the socket took it. Every RTP send to a subscriber goes through
    /// here: forwards and resends sent at once, paced releases, probe padding.
    @inline(__always)
    func protectAndSend(_ buffer: UnsafeMutableRawBufferPointer, length: Int, with outbound: SRTPSession,
                        to subscriber: MediaParticipant) throws(SRTPError) -> Bool {
        let protected = try outbound.protectRTP(buffer, length: length)
        guard loop.send(UnsafeRawBufferPointer(rebasing: buffer[0..<protected]), to: subscriber.session) else { return false }
        subscriber.packetsOut &+= 1
        subscriber.bytesOut &+= UInt64(protected)
        return true
    }

    /// Frames the pacer dropped: the router stops the stream until a keyframe and asks the
    /// publisher for one (`Router.pacerDroppedFrame`).
    func handlePacerKeyframeRequests() {
        while let request = pacer.takeKeyframeRequest() {
            router.pacerDroppedFrame(subscriber: request.lane, ssrc: request.ssrc)
        }
    }

    /// Something was queued: make sure the loop's timer runs within a pacing interval.
    func schedulePacing() {
        loop.requestTimer(at: MediaLoop.monotonicMilliseconds() + pacingIntervalMilliseconds)
    }

    var pacingIntervalMilliseconds: Int64 { max(1, pacer.config.processInterval / 1_000) }

    /// Each subscriber's pacing rate from its downlink estimate (every housekeeping tick:
    /// the estimate moves with transport-cc feedback, every 100 ms).
    func updatePacingRates(now: Int64) {
        for participant in members.values {
            pacer.setEstimate(participant.id, bps: pacingEstimateOverride ?? router.pacingEstimate(participant.id, now: now), now: now)
        }
    }

    /// The timer's next deadline (ms): the housekeeping's, or a pacing interval while
    /// packets wait or a probe's padding is due.
    func nextTimerDeadline(now: Int64, micros: Int64) -> Int64 {
        if pacer.nextWakeup(now: micros) != nil || !probing.isEmpty {
            return min(nextHousekeeping, now + pacingIntervalMilliseconds)
        }
        return nextHousekeeping
    }
}
