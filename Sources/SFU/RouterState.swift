import RTP

// Internal state of the router. Reference types so the hot path mutates in place through
// one dictionary lookup; owned by one router, which is owned by one worker thread.

/// Keyframe requests for one publisher stream: coalesced and throttled (docs/rtcp.md, PLI).
struct KeyframeRequestState {
    var pending = false
    var lastSentAt: Int64?
    /// RFC 5104 §4.3.1.2 command sequence number, incremented per new FIR.
    var firSequence: UInt8 = 0
    var requested = 0
    var sent = 0
}

/// The per-packet part of a received stream, mutated with one access per packet.
struct StreamHotState {
    var reception = ReceptionStats()
    var packets: UInt64 = 0
    var bytes: UInt64 = 0
    var keyframes: UInt64 = 0
    /// Source RTP time at a local instant: from the last SR, else from the last packet.
    var rtpAnchor: (rtp: UInt32, at: Int64)?
    var anchorFromSenderReport = false
    /// Arrival of the first and the latest packet (layer liveness, Router+LayerFallback).
    var firstArrival: Int64?
    var lastArrival: Int64?
    /// Start of the current unbroken run of arrivals (no gap over `Router.layerStall`), and
    /// how many runs began after such a gap (0: the layer never stopped).
    var liveSince: Int64?
    var resumptions: UInt32 = 0
    /// Highest sequence number seen: only packets beyond it advance `lastArrival`, so NACKed
    /// originals resent after the publisher paused a layer do not keep it looking alive.
    var liveSequence: UInt16 = 0

    @inline(__always)
    mutating func record(seq: UInt16, timestamp: UInt32, now: Int64, clockRate: UInt32, length: Int, isKeyframe: Bool) {
        reception.record(seq: seq, rtpTimestamp: timestamp, arrival: now, clockRate: Int(clockRate))
        packets &+= 1
        bytes &+= UInt64(length)
        if let last = lastArrival {
            // Newer within half the sequence space (RFC 3550 §A.1 style), or anything after a
            // full silence window (a publisher that restarted its numbering).
            let ahead = seq &- liveSequence
            if (ahead != 0 && ahead < 0x8000) || now - last > Router.layerSilence {
                if now - last > Router.layerStall {
                    liveSince = now
                    resumptions &+= 1
                }
                liveSequence = seq
                lastArrival = now
            }
        } else {
            firstArrival = now
            liveSince = now
            liveSequence = seq
            lastArrival = now
        }
        if isKeyframe { keyframes &+= 1 }
        if !anchorFromSenderReport { rtpAnchor = (timestamp, now) }
    }
}

/// One received RTP stream (a track's only stream, or one simulcast layer).
final class InboundStream {
    let layer: Int
    var ssrc: UInt32?
    var rtxSSRC: UInt32?
    let rid: String?
    var hot = StreamHotState()
    var rtxPackets: UInt64 = 0
    /// Publisher SR: NTP middle 32 bits and our arrival time (for LSR/DLSR).
    var lastSenderReport: (middle: UInt32, arrival: Int64)?
    /// The publisher's RTP↔NTP mapping from its last SR (our SRs to subscribers, layer switches).
    var senderClock: SenderClock?
    /// `senderClock.referenceOffset` at the stream's clock rate, once per SR rather than per packet.
    var referenceOffset: UInt32?
    var keyframeRequests = KeyframeRequestState()
    /// Uplink loss detection (video only: browsers negotiate `nack` for video, not Opus).
    var nacks: NackGenerator?
    /// Arrival window of audio streams (no `NackGenerator`) that tells duplicates apart.
    var duplicates: DuplicateFilter?
    /// Copies of packets already received (RTX payload padding, network duplicates): not
    /// forwarded, subscribers' libsrtp would drop them as replays.
    var duplicatesDropped: UInt64 = 0
    /// The originals of this stream, kept once for every subscriber's NACKs (issue 4).
    let cache: RetransmissionCache
    /// Measured rate of this stream (layer), fed per packet; read by the layer selection.
    var meter = BitrateMeter()
    /// Picture size from this layer's last VP8 keyframe (0 = not known: other codecs, or no
    /// keyframe seen yet); maps a subscriber's maximum size to a layer.
    var width = 0
    var height = 0

    /// The track's main clock rate (its first codec's), for `referenceOffset`.
    let clockRate: UInt32

    init(layer: Int, description: StreamDescription, highestLayer: Int, kind: MediaKind, clockRate: UInt32) {
        self.layer = layer
        self.clockRate = clockRate
        cache = RetransmissionCache(config: .forLayer(layer, highestLayer: highestLayer, kind: kind))
        if kind == .audio { duplicates = DuplicateFilter() }
        ssrc = description.ssrc
        rtxSSRC = description.rtxSSRC
        rid = description.rid
    }
}

/// What a payload type of a track means (indexed by payload type).
struct PayloadInfo {
    /// 0 = not a payload type of this track.
    var clockRate: UInt32 = 0
    var detector: KeyframeDetector = .none
    /// Index into the track's codec list (subscriber mapping key).
    var codecIndex: Int = 0
    /// For an RTX payload type: the media payload type it repairs (RFC 4588 `apt`).
    var associatedPayloadType: UInt8?
}

/// A published track with its subscribers.
final class PublishedTrack {
    let publisher: ParticipantID
    var description: TrackDescription
    var streams: [InboundStream]
    var muted = false
    var payloads: [PayloadInfo]
    /// Hot per-subscriber state, same order as `subscriptions`.
    var slots: ContiguousArray<ForwardingSlot> = []
    var subscriptions: [Subscription] = []
    var droppedUnknownPayloadType: UInt64 = 0
    var droppedMuted: UInt64 = 0

    init(publisher: ParticipantID, description: TrackDescription) {
        self.publisher = publisher
        self.description = description
        let highest = description.layers.count - 1
        streams = description.layers.enumerated().map {
            InboundStream(layer: $0.offset, description: $0.element, highestLayer: highest, kind: description.kind,
                          clockRate: description.codecs.first?.clockRate ?? 0)
        }
        payloads = Self.payloads(for: description)
        if description.kind == .video { for stream in streams { stream.nacks = NackGenerator(config: .video) } }
    }

    static func payloads(for description: TrackDescription) -> [PayloadInfo] {
        var payloads = Array(repeating: PayloadInfo(), count: 128)
        for (index, codec) in description.codecs.enumerated() where codec.payloadType < 128 {
            payloads[Int(codec.payloadType)] = PayloadInfo(
                clockRate: codec.clockRate,
                detector: description.kind == .video ? KeyframeDetector(codecName: codec.name) : .none,
                codecIndex: index)
        }
        for codec in description.codecs where codec.payloadType < 128 {
            if let rtx = codec.rtxPayloadType, rtx < 128, payloads[Int(rtx)].clockRate == 0 {
                payloads[Int(rtx)].associatedPayloadType = codec.payloadType
            }
        }
        return payloads
    }

    var kind: MediaKind { description.kind }
    var highestLayer: Int { streams.count - 1 }

    /// Index loop, not `firstIndex(where:)`: unspecialized in debug builds, that allocates
    /// on every call (the NACK path reads `Subscription.slot` per resend; issue 3).
    func slotIndex(_ outgoingSSRC: UInt32) -> Int? {
        var index = 0
        while index < slots.count {
            if slots[index].outgoingSSRC == outgoingSSRC { return index }
            index += 1
        }
        return nil
    }
}

/// Control-path side of one subscriber receiving one track (the per-packet side is its
/// `ForwardingSlot` in the track).
final class Subscription {
    let subscriber: ParticipantID
    unowned let track: PublishedTrack
    let outgoingSSRC: UInt32
    /// Reserved for RTX towards this subscriber (issue 4).
    let outgoingRTXSSRC: UInt32
    var nackedPackets: UInt64 = 0
    /// NACK responder (RTX negotiation, RTX sequence, counters), from the first NACK on.
    var repair: DownlinkRepair?
    /// What this subscription sent, by outgoing number (its slot's `SentPacketLog` writes
    /// here): from the first packet on, so even the first NACK can be answered.
    let sentPackets: SentPacketStorage
    /// The extension rewrites the slot used lately, by `ForwardingSlot.extensionsVersion`
    /// mod 4 (a resend uses the rewrite in force when the packet was first sent).
    var extensionHistory = [ExtensionRewrite](repeating: ExtensionRewrite(), count: Subscription.extensionHistoryCount)
    /// 4: mid/extension ids change only on (re)negotiation, far apart compared with the
    /// store's 1 s age bound.
    static let extensionHistoryCount = 4
    var keyframeRequestsReceived: UInt64 = 0
    var keyframesForUnrepairableLoss: UInt64 = 0
    /// A NACK named a packet no longer held: a keyframe is asked for at the next tick.
    var keyframeForUnrepairableLoss = false
    var remoteReport: RTCPReportBlock?
    var rtt: Int64?
    /// Bandwidth-driven layer choice (video only; see Router+Bandwidth.swift).
    var layers = SubscriptionLayerState()
    /// RTX sequence for probe padding before the repair state exists (then its responder
    /// owns the RTX sequence, started from here, so the two never collide).
    var probeRTXSequence: UInt16

    init(subscriber: ParticipantID, track: PublishedTrack, outgoingSSRC: UInt32, outgoingRTXSSRC: UInt32) {
        self.subscriber = subscriber
        self.track = track
        self.outgoingSSRC = outgoingSSRC
        self.outgoingRTXSSRC = outgoingRTXSSRC
        sentPackets = SentPacketStorage.forKind(track.kind)
        // RFC 3550 §5.1: a random first sequence number; the RTX SSRC is random already.
        probeRTXSequence = UInt16(truncatingIfNeeded: outgoingRTXSSRC ^ (outgoingRTXSSRC >> 16))
    }

    /// A copy of the hot state (nil only if the slot was already removed).
    var slot: ForwardingSlot? { track.slotIndex(outgoingSSRC).map { track.slots[$0] } }

    /// Mutates the hot state in place.
    func updateSlot(_ body: (inout ForwardingSlot) -> Void) {
        guard let index = track.slotIndex(outgoingSSRC) else { return }
        body(&track.slots[index])
        noteExtensions(&track.slots[index])
    }

    /// Starts a new extension-rewrite version when `slot.extensions` changed since the
    /// version it carries (call after every change of `extensions`).
    func noteExtensions(_ slot: inout ForwardingSlot) {
        let count = Self.extensionHistoryCount
        guard extensionHistory[Int(slot.extensionsVersion) % count] != slot.extensions else { return }
        slot.extensionsVersion &+= 1
        extensionHistory[Int(slot.extensionsVersion) % count] = slot.extensions
    }

    /// The extension rewrite of a version, nil when it has left the history.
    func extensions(version: UInt8, current slot: ForwardingSlot) -> ExtensionRewrite? {
        let age = slot.extensionsVersion &- version
        guard Int(age) < Self.extensionHistoryCount else { return nil }
        return extensionHistory[Int(version) % Self.extensionHistoryCount]
    }
}

/// A participant's transport-level state.
final class ParticipantState {
    let id: ParticipantID
    let room: RoomID
    let description: ParticipantDescription
    /// Our sender SSRC on this participant's publisher leg (RR, PLI, FIR).
    let controlSSRC: UInt32
    var published: [TrackID: PublishedTrack] = [:]
    var publishOrder: [TrackID] = []
    /// Subscriptions keyed by our outgoing SSRC (feedback is routed by that media SSRC).
    var subscriptions: [UInt32: Subscription] = [:]
    /// Every SSRC in this participant's RTP session: its own and the ones we send it.
    var usedSSRCs: Set<UInt32> = []
    var lastReportAt: Int64
    var outbox: [RTCPPacket] = []
    var rtt: Int64?
    var downlinkEstimateBps: UInt64?
    var droppedUnknownSSRC: UInt64 = 0
    var droppedMalformedRTP: UInt64 = 0
    var rtcpPackets: UInt64 = 0
    var malformedRTCP: UInt64 = 0
    var transportFeedbackPackets: UInt64 = 0
    /// Transport-cc feedback about what this participant sends us (its publisher leg), so
    /// its congestion controller can adapt (docs/rtcp.md).
    var transportFeedback = TransportFeedbackGenerator()
    var unknownFeedbackSSRC: UInt64 = 0
    var goodbyes: UInt64 = 0
    /// Downlink bandwidth estimation, probing and the receive-side estimate for REMB.
    var downlink = DownlinkState()
    /// This participant's wall clock on ours, from its SRs (one for all its streams).
    var senderClockOffset = PublisherClockOffset()

    init(id: ParticipantID, room: RoomID, description: ParticipantDescription, controlSSRC: UInt32, joinedAt: Int64) {
        self.id = id
        self.room = room
        self.description = description
        self.controlSSRC = controlSSRC
        lastReportAt = joinedAt
        usedSSRCs.insert(controlSSRC)
    }
}

/// Where an inbound SSRC goes.
struct InboundRoute {
    unowned let track: PublishedTrack
    let stream: InboundStream
    let isRTX: Bool
}

/// Deterministic SSRC source (SplitMix64) seeded by the caller, so the router stays pure.
struct SSRCGenerator {
    var state: UInt64
    mutating func next(avoiding used: Set<UInt32>) -> UInt32 {
        while true {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            let candidate = UInt32(truncatingIfNeeded: z ^ (z >> 31))
            if candidate != 0, !used.contains(candidate) { return candidate }
        }
    }
}
