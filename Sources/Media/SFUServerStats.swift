import SFU

/// Counters of the SFU media plane (loop thread writes; `stats()` snapshots).
public struct SFUServerCounters: Equatable, Sendable {
    /// SRTP packets received from known members.
    public var rtpIn: UInt64 = 0
    /// SRTCP packets received from known members.
    public var rtcpIn: UInt64 = 0
    /// RTP/RTCP before the member's DTLS handshake gave keys (dropped).
    public var mediaBeforeKeys: UInt64 = 0
    /// SRTP/SRTCP authentication failures (wrong key, tampering): dropped.
    public var srtpAuthFailures: UInt64 = 0
    /// SRTP/SRTCP replays (duplicate or older than the window): dropped.
    public var srtpReplays: UInt64 = 0
    /// SRTP/SRTCP too short or malformed before decryption: dropped.
    public var srtpMalformed: UInt64 = 0
    /// Decrypted RTP that did not parse (dropped, also counted per member by the router).
    public var rtpMalformed: UInt64 = 0
    /// Decrypted RTCP that did not parse.
    public var rtcpMalformed: UInt64 = 0
    /// RTP on an SSRC the member did not publish (and not learnable from mid/rid).
    public var unknownSSRC: UInt64 = 0
    /// RTP with a payload type outside the track's codecs.
    public var unknownPayloadType: UInt64 = 0
    /// SRTP packets sent to subscribers.
    public var forwarded: UInt64 = 0
    /// Forward decisions skipped because the subscriber's DTLS is not up yet.
    public var forwardSkippedNoKeys: UInt64 = 0
    /// Packets resent to subscribers in answer to their NACKs (RTX or original).
    public var retransmitted: UInt64 = 0
    /// Forward decisions that failed to write or protect (should stay 0).
    public var forwardErrors: UInt64 = 0
    /// SRTCP compounds sent.
    public var rtcpOut: UInt64 = 0
    /// DTLS datagrams the endpoint discarded (garbage, not DTLS).
    public var dtlsDropped: UInt64 = 0
    /// DTLS handshakes that failed (fingerprint mismatch, timeout, alert).
    public var dtlsFailures: UInt64 = 0
    /// DTLS handshakes completed.
    public var dtlsConnected: UInt64 = 0
    /// Server offers emitted.
    public var offersSent: UInt64 = 0
    /// Padding-only packets sent as bandwidth probes (Router+Probe.swift).
    public var probePadding: UInt64 = 0
    /// Nominated path changes followed (a member's new validated 5-tuple replaced the old:
    /// NAT rebinding, network switch, ICE restart).
    public var pathChanges: UInt64 = 0

    public init() {}
}

/// One member's view in a stats snapshot.
public struct SFUMemberStats: Equatable, Sendable {
    public var member: MemberID
    public var room: String
    /// DTLS done and SRTP keys installed.
    public var connected: Bool
    public var packetsIn: UInt64
    public var bytesIn: UInt64
    public var packetsOut: UInt64
    public var bytesOut: UInt64
    /// Cumulative packets lost on its published streams (RFC 3550 §A.3, from the router).
    public var packetsLost: Int64
    /// Latest RTT (µs) from LSR/DLSR on its subscriber leg, if any.
    public var rttMicroseconds: Int64?
    public var srtpAuthFailures: UInt64
    public var srtpReplays: UInt64
    /// Last server offer generation and whether it is unanswered.
    public var generation: UInt64
    public var offerOutstanding: Bool
    /// Downlink estimate, probes and per video track current/target layer (issue 4).
    public var downlink: DownlinkStats?
    /// Its lane in the worker's send-side pacer: counters, rate and queue now (nil before
    /// anything was sent to it). docs/stats.md, "Pacer".
    public var pacing: PacerLaneStats? = nil
}

/// A snapshot of the media plane.
public struct SFUServerStats: Equatable, Sendable {
    public var counters: SFUServerCounters
    public var loop: MediaLoopCounters
    public var members: [SFUMemberStats]
    /// Router size (rooms, participants, tracks, subscriptions, inbound SSRCs).
    public var rooms: Int
    public var subscriptions: Int
    /// The worker's send-side pacer (the sum of its lanes, including lanes of members that
    /// left). docs/stats.md, "Pacer".
    public var pacer = PacerStats()
}

extension MediaLoopCounters: @unchecked Sendable {}
