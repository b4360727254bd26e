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

/// One received RTP stream (a track's only stream, or one simulcast layer).
final class InboundStream {
    let layer: Int
    var ssrc: UInt32?
    var rtxSSRC: UInt32?
    let rid: String?
    var reception = ReceptionStats()
    var packets: UInt64 = 0
    var bytes: UInt64 = 0
    var rtxPackets: UInt64 = 0
    var keyframes: UInt64 = 0
    /// Publisher SR: NTP middle 32 bits and our arrival time (for LSR/DLSR).
    var lastSenderReport: (middle: UInt32, arrival: Int64)?
    /// Source RTP time at a local instant: from the last SR, else from the last packet.
    var rtpAnchor: (rtp: UInt32, at: Int64)?
    var anchorFromSenderReport = false
    var keyframeRequests = KeyframeRequestState()

    init(layer: Int, description: StreamDescription) {
        self.layer = layer
        ssrc = description.ssrc
        rtxSSRC = description.rtxSSRC
        rid = description.rid
    }
}

/// A published track with its subscribers.
final class PublishedTrack {
    let publisher: ParticipantID
    var description: TrackDescription
    var streams: [InboundStream]
    var muted = false
    /// Clock rate per payload type (0 = not a payload type of this track).
    var clockRates: [UInt32]
    var detectors: [KeyframeDetector]
    var subscriptions: [Subscription] = []
    var droppedUnknownPayloadType: UInt64 = 0
    var droppedMuted: UInt64 = 0

    init(publisher: ParticipantID, description: TrackDescription) {
        self.publisher = publisher
        self.description = description
        streams = description.layers.enumerated().map { InboundStream(layer: $0.offset, description: $0.element) }
        clockRates = Array(repeating: 0, count: 128)
        detectors = Array(repeating: .none, count: 128)
        for codec in description.codecs {
            clockRates[Int(codec.payloadType)] = codec.clockRate
            detectors[Int(codec.payloadType)] = description.kind == .video ? KeyframeDetector(codecName: codec.name) : .none
        }
    }

    var kind: MediaKind { description.kind }
    var highestLayer: Int { streams.count - 1 }
}

/// One subscriber receiving one published track.
final class Subscription {
    let subscriber: ParticipantID
    unowned let track: PublishedTrack
    let outgoingSSRC: UInt32
    /// Reserved for RTX towards this subscriber (issue 4).
    let outgoingRTXSSRC: UInt32
    /// Publisher payload type → subscriber payload type (0xFF = no common codec).
    var payloadTypes: [UInt8]
    var extensions: ExtensionRewrite
    var targetLayer: Int
    /// Layer being forwarded; nil until the first (key)frame of the target layer.
    var currentLayer: Int?
    var waitingForKeyframe: Bool
    /// Forces the next forwarded packet to continue the output sequence (after mute/resume).
    var needsResync = false
    var sourceEpoch: UInt32 = 0
    var currentSource: UInt32?
    var sequence = SequenceRewriter()
    var timestamps = TimestampRewriter()
    var lastForwardAt: Int64?
    var lastInputTimestamp: UInt32 = 0
    var lastOutputTimestamp: UInt32 = 0
    var packetsSent: UInt32 = 0
    var octetsSent: UInt32 = 0
    var bytesSent: UInt64 = 0
    var droppedNoCodec: UInt64 = 0
    var droppedOtherLayer: UInt64 = 0
    var droppedLate: UInt64 = 0
    var layerSwitches: UInt64 = 0
    var nackedPackets: UInt64 = 0
    var keyframeRequestsReceived: UInt64 = 0
    var remoteReport: RTCPReportBlock?
    var rtt: Int64?

    init(subscriber: ParticipantID, track: PublishedTrack, outgoingSSRC: UInt32, outgoingRTXSSRC: UInt32) {
        self.subscriber = subscriber
        self.track = track
        self.outgoingSSRC = outgoingSSRC
        self.outgoingRTXSSRC = outgoingRTXSSRC
        payloadTypes = Array(repeating: 0xFF, count: 128)
        extensions = ExtensionRewrite()
        targetLayer = track.highestLayer
        waitingForKeyframe = track.kind == .video
        if track.kind == .audio { currentLayer = 0 }
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
    var unknownFeedbackSSRC: UInt64 = 0
    var goodbyes: UInt64 = 0

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
