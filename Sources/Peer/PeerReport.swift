import DTLS
import SFU

/// Where a synthetic peer's connection stands.
public enum PeerConnectionState: String, Sendable, Equatable {
    /// Created; no offer or answer yet.
    case new
    /// Remote description applied; ICE connectivity checks running.
    case checking
    /// ICE component READY (a nominated pair); DTLS handshake running.
    case dtlsHandshaking
    /// DTLS done, SRTP keys installed: media can flow.
    case connected
    /// ICE or DTLS failed for good (see `PeerReport.failure`).
    case failed
    case closed
}

/// What one remote SSRC delivered.
public struct ReceivedStreamReport: Sendable, Equatable {
    public var ssrc: UInt32
    public var codec: PeerTrack.Codec?
    public var payloadType: UInt8
    /// The section (mid) and msid stream id announced for this SSRC, when the remote SDP had it.
    public var mid: String?
    public var streamID: String?
    public var packets: UInt64
    /// RTP payload bytes (after SRTP and RTP headers).
    public var payloadBytes: UInt64
    /// RFC 3550 §A.3 expected and cumulative lost (negative with duplicates).
    public var expectedPackets: UInt64
    public var lost: Int64
    /// Interarrival jitter in RTP timestamp units (RFC 3550 §A.8).
    public var jitter: UInt32
    /// Opus: samples per channel decoded, and packets libopus refused.
    public var decodedSamplesPerChannel: UInt64
    public var decodeErrors: UInt64
    /// Opus: the most recent decoded audio (see `SyntheticPeer.Configuration.analysisWindowMilliseconds`).
    public var tone: ToneAnalysis?
    /// VP8: frames completed (marker bit) and keyframes started.
    public var frames: UInt64
    public var keyframes: UInt64
    /// VP8: packets whose payload descriptor did not parse.
    public var malformedDescriptors: UInt64
    /// Packets older than the highest sequence number already received (reordered or
    /// duplicated on the way; Opus decodes them out of order, which smears the tone).
    public var outOfOrder: UInt64 = 0
    /// The longest time between two packets of this stream, µs (a stall on the path).
    public var maxArrivalGapMicroseconds: Int64 = 0
    /// Residual loss (after repair): sequence numbers still missing `StreamReceiver.residualWindow`
    /// after their gap was seen (the receiver's playout has moved past them), counted once each.
    public var residualLost: UInt64 = 0
    /// Sequence numbers that were missing and arrived later: by RTX, as a resent original, or
    /// merely late (reordered). Each counts once.
    public var repaired: UInt64 = 0
    /// Missing now but still inside the residual window (neither lost nor repaired yet).
    public var pendingMissing: UInt64 = 0
    /// RTX packets (RFC 4588) received for this stream, and duplicates of packets already had
    /// (resent originals that crossed a late original, or RTX for one).
    public var retransmissionsReceived: UInt64 = 0
    public var duplicates: UInt64 = 0
    /// Opus: samples per channel produced by libopus packet-loss concealment for missing packets.
    public var concealedSamplesPerChannel: UInt64 = 0
    /// Video: what our NACK generator did for this stream (nil when the peer does not NACK).
    public var nackGenerator: NackGeneratorStats?

    /// residualLost / expected (0 when nothing was expected).
    public var residualLossRatio: Double {
        expectedPackets > 0 ? Double(residualLost) / Double(expectedPackets) : 0
    }

    /// Concealed / (decoded + concealed) samples: the share of audio libopus invented.
    public var concealmentRatio: Double {
        let total = decodedSamplesPerChannel + concealedSamplesPerChannel
        return total > 0 ? Double(concealedSamplesPerChannel) / Double(total) : 0
    }
}

/// Loss-repair counters of one peer (RFC 4585 §6.2.1 NACK, §6.3.1 PLI, RFC 4588 RTX).
public struct PeerRepairCounters: Sendable, Equatable {
    /// As a sender: NACK packets and sequence numbers received about our SSRCs.
    public var nacksReceived: UInt64 = 0
    public var nackedSequenceNumbersReceived: UInt64 = 0
    /// Packets resent in answer (as RTX when negotiated, else the original), and NACKed
    /// packets we no longer had (older than the cache's age or count bound).
    public var retransmissionsSent: UInt64 = 0
    public var rtxSent: UInt64 = 0
    public var retransmissionsUnavailable: UInt64 = 0
    /// PLIs and FIRs received about our video SSRC (each forces a keyframe).
    public var keyframeRequestsReceived: UInt64 = 0
    /// As a receiver: NACK packets and sequence numbers we sent, and PLIs we sent.
    public var nacksSent: UInt64 = 0
    public var nackedSequenceNumbersSent: UInt64 = 0
    public var plisSent: UInt64 = 0
    /// Feedback naming an SSRC we neither send nor receive.
    public var unknownFeedbackSSRC: UInt64 = 0
    public init() {}
}

/// A snapshot of everything a synthetic peer did and received.
public struct PeerReport: Sendable, Equatable {
    public var state: PeerConnectionState
    /// Why the peer failed, when it did.
    public var failure: String?
    /// The DTLS-SRTP profile negotiated (RFC 5764 §4.1.2).
    public var srtpProfile: DTLSSRTPProfile?
    public var sentAudioPackets: UInt64
    public var sentVideoPackets: UInt64
    public var sentVideoFrames: UInt64
    /// Bytes handed to libnice (DTLS flights and SRTP).
    public var sentBytes: UInt64
    /// 20 ms ticks skipped because the loop fell more than `SyntheticPeer.maxCatchUpFrames` behind.
    public var skippedFrames: UInt64
    /// nice_agent_send calls that did not take the whole datagram.
    public var sendFailures: UInt64
    /// Received SRTP that failed authentication/replay checks, and SRTCP packets received.
    public var srtpUnprotectFailures: UInt64
    public var rtcpPackets: UInt64
    /// Compound RTCP packets we sent (SR or RR + SDES, RFC 3550 §6.1).
    public var rtcpSent: UInt64
    /// Sender reports received, and report blocks about our SSRCs received.
    public var senderReportsReceived: UInt64
    public var reportBlocksReceived: UInt64
    /// Latest RTT from a report block's LSR/DLSR (RFC 3550 §6.4.1), ms.
    public var roundTripMilliseconds: Double?
    /// Datagrams that were neither DTLS nor RTP/RTCP (RFC 7983), or arrived before keys.
    public var droppedDatagrams: UInt64
    /// Per remote SSRC, sorted by SSRC.
    public var streams: [ReceivedStreamReport]
    /// NACK/RTX/PLI counters (SyntheticPeer+Retransmission.swift).
    public var repair = PeerRepairCounters()

    public func stream(ssrc: UInt32) -> ReceivedStreamReport? { streams.first { $0.ssrc == ssrc } }
}
