import RTP

/// RTX as negotiated with one subscriber for one outgoing stream (RFC 4588 §8: `a=rtpmap:N
/// rtx/…` with `a=fmtp:N apt=M`, and an `a=ssrc-group:FID` pairing the SSRCs).
public struct RTXConfiguration: Equatable, Sendable {
    /// Our RTX SSRC towards the subscriber (`SubscriptionInfo.rtxSSRC`).
    public var ssrc: UInt32
    /// (associated media payload type, RTX payload type) pairs, subscriber-side numbers.
    public var payloadTypes: [(apt: UInt8, rtx: UInt8)]

    public init(ssrc: UInt32, payloadTypes: [(apt: UInt8, rtx: UInt8)]) {
        self.ssrc = ssrc
        self.payloadTypes = payloadTypes
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.ssrc == rhs.ssrc && lhs.payloadTypes.elementsEqual(rhs.payloadTypes) { $0.apt == $1.apt && $0.rtx == $1.rtx }
    }

    /// RTX payload type for a media payload type, nil when that codec has no RTX.
    public func rtxPayloadType(for payloadType: UInt8) -> UInt8? {
        // Index loop: generic iteration allocates in debug builds (issue 3, NACK path).
        var index = 0
        while index < payloadTypes.count {
            if payloadTypes[index].apt == payloadType { return payloadTypes[index].rtx }
            index += 1
        }
        return nil
    }
}

/// One packet to resend, decided by `NackResponder.respond`; write it right away (with
/// `Router.writeRetransmission`): the original can leave its publisher's store.
public struct Retransmission: Equatable, Sendable {
    /// The NACKed (outgoing) sequence number: the `SentPacketLog` key.
    public let sequenceNumber: UInt16
    /// RTX: SSRC, payload type and sequence number of the RTX packet; nil = resend the original.
    public let rtx: (ssrc: UInt32, payloadType: UInt8, sequenceNumber: UInt16)?

    public init(sequenceNumber: UInt16, rtx: (ssrc: UInt32, payloadType: UInt8, sequenceNumber: UInt16)?) {
        self.sequenceNumber = sequenceNumber
        self.rtx = rtx
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.sequenceNumber == rhs.sequenceNumber && lhs.rtx?.ssrc == rhs.rtx?.ssrc
            && lhs.rtx?.payloadType == rhs.rtx?.payloadType && lhs.rtx?.sequenceNumber == rhs.rtx?.sequenceNumber
    }
}

/// What the responder needs to know about the packets one subscription sent: answered by
/// the router from the subscription's `SentPacketLog` and the publisher streams'
/// `RetransmissionCache`s (`SubscriptionRetransmissions`).
protocol RetransmissionLookup {
    /// Whether the packet sent as `sequenceNumber` can be resent now.
    func presence(of sequenceNumber: UInt16, now: Int64) -> RetransmissionCache.Presence
    /// The packet belongs to a simulcast layer the subscriber has since left: the keyframe it
    /// switched on replaced everything before it, so resending it only adds load to a path
    /// that is often congested just then (a downswitch follows a cut estimate).
    func isSuperseded(_ sequenceNumber: UInt16) -> Bool
    /// Last resend of that packet to this subscriber, nil = never.
    func resentAt(_ sequenceNumber: UInt16, now: Int64) -> Int64?
    /// Subscriber-side payload type it was sent with.
    func payloadType(of sequenceNumber: UInt16) -> UInt8?
    func markResent(_ sequenceNumber: UInt16, now: Int64)
}

/// Counters of one responder.
public struct NackResponderStats: Equatable, Sendable {
    /// Sequence numbers named by the subscriber's NACKs.
    public var requested: UInt64 = 0
    /// Packets resent (as RTX or original).
    public var resent: UInt64 = 0
    /// Requests refused by the per-packet throttle (asked again within the interval).
    public var throttled: UInt64 = 0
    /// Requests for packets not held (never sent, or evicted by the count or byte bound).
    public var missing: UInt64 = 0
    /// Requests for packets still held but older than the store's `maxAge`.
    public var expired: UInt64 = 0
    /// Requests for packets of a layer the subscriber has left (`RetransmissionLookup.isSuperseded`).
    public var superseded: UInt64 = 0

    public init(requested: UInt64 = 0, resent: UInt64 = 0, throttled: UInt64 = 0, missing: UInt64 = 0, expired: UInt64 = 0, superseded: UInt64 = 0) {
        self.requested = requested
        self.resent = resent
        self.throttled = throttled
        self.missing = missing
        self.expired = expired
        self.superseded = superseded
    }

    /// Requests that no resend can answer: the subscriber needs a keyframe instead.
    public var unrepairable: UInt64 { missing &+ expired }
}

/// Answers one subscriber's NACKs (RFC 4585 §6.2.1) for one outgoing stream: RTX on its own
/// SSRC and sequence when negotiated (RFC 4588), else the original packet again. Anchors:
/// mediasoup `RtpStreamSend::ReceiveNack`, libwebrtc `RTPSender::ReSendPacket`.
///
/// NACKs name the subscriber's (rewritten) sequence numbers; the subscription's
/// `SentPacketLog` maps each back to the publisher stream's original, which is rewritten for
/// this subscriber by `Forward.write` exactly as it was first sent. Routed by media SSRC: the
/// caller finds the subscription from `RTCPGenericNACK.mediaSSRC`, never the sender SSRC.
public struct NackResponder: Sendable {
    /// Minimum spacing of resends of one packet. 20 ms: below that a second NACK for the same
    /// packet cannot have seen the first repair (one frame interval; below jitter noise).
    public static let minimumResendInterval: Int64 = 20_000
    /// RTT assumed before the first measurement: 100 ms, mediasoup's and libwebrtc's default.
    public static let defaultRTT: Int64 = 100_000

    public var rtx: RTXConfiguration?
    /// Next RTX sequence number (RFC 4588 §4: own sequence, +1 per RTX packet; start it random).
    public private(set) var nextRTXSequenceNumber: UInt16
    public private(set) var stats = NackResponderStats()

    /// - Parameters:
    ///   - rtx: the RTX negotiation with this subscriber, nil to resend originals.
    ///   - initialRTXSequenceNumber: random start of the RTX sequence (RFC 3550 §5.1).
    public init(rtx: RTXConfiguration?, initialRTXSequenceNumber: UInt16) {
        self.rtx = rtx
        nextRTXSequenceNumber = initialRTXSequenceNumber
    }

    /// Takes the next RTX sequence number for a packet sent outside a NACK answer (probe
    /// padding on the RTX SSRC shares the RTX sequence, RFC 4588 §4).
    public mutating func takeRTXSequenceNumber() -> UInt16 {
        defer { nextRTXSequenceNumber &+= 1 }
        return nextRTXSequenceNumber
    }

    /// The throttle interval for an RTT: a packet is resent at most once per RTT (its repair
    /// needs one RTT to be seen; asking again sooner is a duplicate request), min 20 ms.
    public static func resendInterval(rtt: Int64?) -> Int64 {
        max(rtt ?? defaultRTT, minimumResendInterval)
    }

    /// Decides what to resend for the sequence numbers of one NACK and appends them to `out`
    /// (in request order). Packets are marked resent (throttle).
    /// - Parameters:
    ///   - sequenceNumbers: `RTCPGenericNACK.sequenceNumbers` (subscriber numbering).
    ///   - rtt: this subscriber's RTT, µs (nil: `defaultRTT`).
    mutating func respond(to sequenceNumbers: [UInt16], lookup: some RetransmissionLookup, now: Int64, rtt: Int64?, into out: inout [Retransmission]) {
        let interval = Self.resendInterval(rtt: rtt)
        // Index loop, no `for in`: generic iteration allocates in debug builds (issue 3).
        var index = 0
        while index < sequenceNumbers.count {
            let seq = sequenceNumbers[index]
            index += 1
            stats.requested &+= 1
            if lookup.isSuperseded(seq) {
                stats.superseded &+= 1
                continue
            }
            switch lookup.presence(of: seq, now: now) {
            case .missing:
                stats.missing &+= 1
                continue
            case .expired:
                stats.expired &+= 1
                continue
            case .stored:
                break
            }
            if let last = lookup.resentAt(seq, now: now), now - last < interval {
                stats.throttled &+= 1
                continue
            }
            var rtxFields: (ssrc: UInt32, payloadType: UInt8, sequenceNumber: UInt16)?
            if let rtx, let payloadType = lookup.payloadType(of: seq), let rtxPT = rtx.rtxPayloadType(for: payloadType) {
                rtxFields = (rtx.ssrc, rtxPT, nextRTXSequenceNumber)
                nextRTXSequenceNumber &+= 1
            }
            lookup.markResent(seq, now: now)
            stats.resent &+= 1
            out.append(Retransmission(sequenceNumber: seq, rtx: rtxFields))
        }
    }

    /// Writes the packet for `retransmission` into `output` (pre-SRTP; leave room for the
    /// tag): `original` (the publisher's packet) rewritten by `forward` — the very decision
    /// the forward path made for it, so the bytes equal the first send except for the
    /// transport-wide number — then RTX-wrapped when decided. Returns the byte count.
    /// - Parameters:
    ///   - transportSequenceNumber: the subscriber transport's next transport-wide number
    ///     (a resend is a new packet on the wire, RFC draft-holmer §2), written when
    ///     `forward.extensions.transportCC` is negotiated.
    ///   - scratch: room for the rewritten packet before the RTX wrap (≥ 1600 bytes).
    public static func write(_ retransmission: Retransmission, original: RTPPacketView, forward: Forward, transportSequenceNumber: UInt16?,
                             scratch: UnsafeMutableRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws(RTPError) -> Int {
        guard let rtx = retransmission.rtx else {
            return try forward.write(from: original, into: output, transportSequenceNumber: transportSequenceNumber)
        }
        let length = try forward.write(from: original, into: scratch, transportSequenceNumber: transportSequenceNumber)
        return try RTXPacket.wrap(UnsafeRawBufferPointer(rebasing: scratch[..<length]), ssrc: rtx.ssrc, payloadType: rtx.payloadType,
                                  sequenceNumber: rtx.sequenceNumber, into: output)
    }
}
