import RTP
import SFU

/// Receive side of one remote SSRC: counts, loss and jitter (RFC 3550 §A.1–A.8 via
/// `ReceptionStats`), Opus decoding with libopus into a ring of recent samples for the tone
/// check, and VP8 frame/keyframe counting from the payload descriptor.
///
/// Pure apart from libopus: packets and `now` in, no clock reads. One owner thread.
final class StreamReceiver {
    let ssrc: UInt32
    var codec: PeerTrack.Codec?
    var payloadType: UInt8
    var mid: String?
    var streamID: String?
    private var stats = ReceptionStats()
    private var packets: UInt64 = 0
    private var payloadBytes: UInt64 = 0
    private var decoder: OpusAudioDecoder?
    private var decodedSamples: UInt64 = 0
    private var decodeErrors: UInt64 = 0
    private var recent: SampleRing
    private var frames: UInt64 = 0
    private var keyframes: UInt64 = 0
    private var malformedDescriptors: UInt64 = 0
    private var highestSequence: UInt16?
    private var outOfOrder: UInt64 = 0
    private var lastArrival: Int64?
    private var maxArrivalGap: Int64 = 0
    private let channels = 2
    /// Middle 32 bits of the last SR's NTP time from this source and its arrival (µs), for LSR/DLSR.
    var lastSenderReport: (middle: UInt32, arrivalMicroseconds: Int64)?
    private(set) var residual: ResidualLossTracker
    private var retransmissions: UInt64 = 0
    private var concealedSamples: UInt64 = 0
    /// Video: the NACK generator asking the sender for this stream's gaps (nil: no NACKs).
    var nacks: NackGenerator?

    /// How long a missing packet may still be repaired before it counts as residual loss:
    /// video 1 s (the SFU's NACK give-up age and retransmission cache, docs/rtcp.md), audio
    /// 300 ms (NetEq's playout delay under jitter stays below it; the SFU does not NACK audio).
    static func residualWindow(_ codec: PeerTrack.Codec?) -> Int64 { codec == .opus ? 300_000 : 1_000_000 }
    /// 960: one 20 ms Opus frame at 48 kHz, what each missing packet of the peers carried.
    static let concealFrameSamples = 48_000 * OpusAudioEncoder.frameMilliseconds / 1000
    /// 50 frames (1 s): longest run concealed for one gap; a longer gap is an outage.
    static let maxConcealedFrames = 50

    init(ssrc: UInt32, payloadType: UInt8, codec: PeerTrack.Codec?, analysisSamples: Int) {
        self.ssrc = ssrc
        self.payloadType = payloadType
        self.codec = codec
        recent = SampleRing(capacity: analysisSamples)
        residual = ResidualLossTracker(windowMicroseconds: Self.residualWindow(codec))
    }

    /// RFC 3550 §A.8 interarrival jitter, RTP timestamp units.
    var jitter: UInt32 { stats.jitter }

    /// Declares residual loss for gaps older than the window (call before a report).
    func settle(nowMicroseconds: Int64) { residual.settle(now: nowMicroseconds) }

    /// Handles one unprotected RTP packet; `nowMicroseconds` is the arrival time.
    /// `isRetransmission`: unwrapped from RTX (RFC 4588), so it neither counts as a received
    /// packet nor feeds jitter (RFC 3550 statistics are about the media stream itself).
    func receive(_ packet: RTPPacketView, nowMicroseconds: Int64, isRetransmission: Bool = false) {
        let arrival = residual.record(packet.sequenceNumber, now: nowMicroseconds)
        nacks?.received(packet.sequenceNumber, now: nowMicroseconds, isRetransmission: isRetransmission)
        if isRetransmission {
            retransmissions += 1
        }
        // A duplicate (a resent original that crossed a late one) carries nothing new.
        if arrival == .duplicateOrLate { return }
        if isRetransmission {
            decodeMedia(packet, arrival: arrival)
            return
        }
        packets += 1
        payloadBytes += UInt64(packet.payload.count)
        // Older than the highest sequence number seen (RFC 3550 §A.1 serial arithmetic):
        // reordered on the way, or a duplicate.
        if let highest = highestSequence {
            let delta = packet.sequenceNumber &- highest
            if delta == 0 || delta >= 0x8000 { outOfOrder += 1 } else { highestSequence = packet.sequenceNumber }
        } else {
            highestSequence = packet.sequenceNumber
        }
        if let last = lastArrival { maxArrivalGap = max(maxArrivalGap, nowMicroseconds - last) }
        lastArrival = nowMicroseconds
        stats.record(seq: packet.sequenceNumber, rtpTimestamp: packet.timestamp, arrival: nowMicroseconds,
                     clockRate: Int(codec?.clockRate ?? 90_000))
        decodeMedia(packet, arrival: arrival)
    }

    private func decodeMedia(_ packet: RTPPacketView, arrival: ResidualLossTracker.Arrival) {
        switch codec {
        case .opus:
            if decoder == nil { decoder = try? OpusAudioDecoder() }
            guard let decoder, !packet.payload.isEmpty else { decodeErrors += 1; return }
            // No jitter buffer: a gap is concealed when the next packet shows it, so a packet
            // of the gap arriving later is too late to play (its time was concealed).
            if arrival == .repaired { return }
            if case .new(let gap) = arrival, gap > 0 {
                for _ in 0..<min(gap, Self.maxConcealedFrames) {
                    guard let pcm = try? decoder.conceal(samplesPerChannel: Self.concealFrameSamples) else { break }
                    concealedSamples += UInt64(pcm.count / channels)
                    recent.append(contentsOf: ToneAnalysis.mono(pcm, channels: channels))
                }
            }
            do {
                let pcm = try decoder.decode(packet.payload)
                decodedSamples += UInt64(pcm.count / channels)
                recent.append(contentsOf: ToneAnalysis.mono(pcm, channels: channels))
            } catch {
                decodeErrors += 1
            }
        case .vp8:
            if VP8PayloadDescriptor(parsing: packet.payload) == nil { malformedDescriptors += 1 }
            if VP8PayloadDescriptor.isKeyframeStart(packet.payload) { keyframes += 1 }
            if packet.marker { frames += 1 }
        case nil:
            break
        }
    }

    /// RFC 3550 §6.4.1 report block for this source; starts a new fraction-lost interval.
    func reportBlock(nowMicroseconds: Int64) -> RTCPReportBlock {
        var lsr: UInt32 = 0, dlsr: UInt32 = 0
        if let last = lastSenderReport {
            lsr = last.middle
            dlsr = UInt32(clamping: (nowMicroseconds - last.arrivalMicroseconds) * 65_536 / 1_000_000)
        }
        return stats.makeReportBlock(ssrc: ssrc, lastSenderReport: lsr, delaySinceLastSenderReport: dlsr)
    }

    /// The report with `tone` left nil, and the recent samples to analyse: the caller runs
    /// `ToneAnalysis` off the loop thread (it costs milliseconds per stream in a debug build,
    /// which would stall the 20 ms send clock of the peer if done on the loop).
    var reportWithoutTone: (report: ReceivedStreamReport, samples: [Int16]) {
        (report(tone: nil), codec == .opus ? recent.samples : [])
    }

    private func report(tone: ToneAnalysis?) -> ReceivedStreamReport {
        ReceivedStreamReport(
            ssrc: ssrc, codec: codec, payloadType: payloadType, mid: mid, streamID: streamID, packets: packets,
            payloadBytes: payloadBytes, expectedPackets: UInt64(stats.expected), lost: stats.cumulativeLost,
            jitter: stats.jitter, decodedSamplesPerChannel: decodedSamples, decodeErrors: decodeErrors,
            tone: tone,
            frames: frames, keyframes: keyframes, malformedDescriptors: malformedDescriptors,
            outOfOrder: outOfOrder, maxArrivalGapMicroseconds: maxArrivalGap,
            residualLost: residual.residualLost, repaired: residual.repaired, pendingMissing: UInt64(residual.pending),
            retransmissionsReceived: retransmissions, duplicates: residual.duplicates,
            concealedSamplesPerChannel: concealedSamples, nackGenerator: nacks?.stats)
    }
}
