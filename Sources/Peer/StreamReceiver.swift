import RTP

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

    init(ssrc: UInt32, payloadType: UInt8, codec: PeerTrack.Codec?, analysisSamples: Int) {
        self.ssrc = ssrc
        self.payloadType = payloadType
        self.codec = codec
        recent = SampleRing(capacity: analysisSamples)
    }

    /// Handles one unprotected RTP packet; `nowMicroseconds` is the arrival time.
    func receive(_ packet: RTPPacketView, nowMicroseconds: Int64) {
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
        switch codec {
        case .opus:
            if decoder == nil { decoder = try? OpusAudioDecoder() }
            guard let decoder, !packet.payload.isEmpty else { decodeErrors += 1; return }
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
            outOfOrder: outOfOrder, maxArrivalGapMicroseconds: maxArrivalGap)
    }
}
