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
        for pair in payloadTypes where pair.apt == payloadType { return pair.rtx }
        return nil
    }
}

/// One packet to resend, decided by `NackResponder.respond`; write it with
/// `NackResponder.write` right away (the cache slot can be overwritten by the next insert).
public struct Retransmission: Equatable, Sendable {
    /// The NACKed (outgoing) sequence number: the cache key.
    public let sequenceNumber: UInt16
    /// RTX: SSRC, payload type and sequence number of the RTX packet; nil = resend the original.
    public let rtx: (ssrc: UInt32, payloadType: UInt8, sequenceNumber: UInt16)?

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.sequenceNumber == rhs.sequenceNumber && lhs.rtx?.ssrc == rhs.rtx?.ssrc
            && lhs.rtx?.payloadType == rhs.rtx?.payloadType && lhs.rtx?.sequenceNumber == rhs.rtx?.sequenceNumber
    }
}

/// Counters of one responder.
public struct NackResponderStats: Equatable, Sendable {
    /// Sequence numbers named by the subscriber's NACKs.
    public var requested: UInt64 = 0
    /// Packets resent (as RTX or original).
    public var resent: UInt64 = 0
    /// Requests refused by the per-packet throttle (asked again within the interval).
    public var throttled: UInt64 = 0
    /// Requests for packets not in the cache (never sent, or evicted by the count bound).
    public var missing: UInt64 = 0
    /// Requests for packets in the cache but older than its `maxAge`.
    public var expired: UInt64 = 0

    public init(requested: UInt64 = 0, resent: UInt64 = 0, throttled: UInt64 = 0, missing: UInt64 = 0, expired: UInt64 = 0) {
        self.requested = requested
        self.resent = resent
        self.throttled = throttled
        self.missing = missing
        self.expired = expired
    }
}

/// Answers one subscriber's NACKs (RFC 4585 §6.2.1) for one outgoing stream from its
/// `RetransmissionCache`: RTX on its own SSRC and sequence when negotiated (RFC 4588), else
/// the original packet again. Anchors: mediasoup `RtpStreamSend::ReceiveNack`, libwebrtc
/// `RTPSender::ReSendPacket`.
///
/// NACKs name the subscriber's (rewritten) sequence numbers, which are exactly the cache
/// keys, so no mapping back through the rewriter is needed. Routed by media SSRC: the
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
    /// (in request order). Packets are marked resent in the cache (throttle).
    /// - Parameters:
    ///   - sequenceNumbers: `RTCPGenericNACK.sequenceNumbers` (subscriber numbering).
    ///   - rtt: this subscriber's RTT, µs (nil: `defaultRTT`).
    public mutating func respond(to sequenceNumbers: [UInt16], cache: RetransmissionCache, now: Int64, rtt: Int64?, into out: inout [Retransmission]) {
        let interval = Self.resendInterval(rtt: rtt)
        for seq in sequenceNumbers {
            stats.requested &+= 1
            switch cache.presence(of: seq, now: now) {
            case .missing:
                stats.missing &+= 1
                continue
            case .expired:
                stats.expired &+= 1
                continue
            case .stored:
                break
            }
            if let last = cache.resendState(of: seq)?.resentAt, now - last < interval {
                stats.throttled &+= 1
                continue
            }
            var rtxFields: (ssrc: UInt32, payloadType: UInt8, sequenceNumber: UInt16)?
            if let rtx, let payloadType = try? cache.withPacket(seq, now: now, { $0[1] & 0x7F }),
               let rtxPT = rtx.rtxPayloadType(for: payloadType) {
                rtxFields = (rtx.ssrc, rtxPT, nextRTXSequenceNumber)
                nextRTXSequenceNumber &+= 1
            }
            cache.markResent(seq, now: now)
            stats.resent &+= 1
            out.append(Retransmission(sequenceNumber: seq, rtx: rtxFields))
        }
    }

    /// Writes the packet for `retransmission` into `output` (pre-SRTP; leave room for the
    /// tag); returns the byte count, or nil when the packet left the cache since `respond`.
    /// - Parameter transportSequenceNumber: when the subscriber negotiated transport-cc, its
    ///   extension id and this transport's next number: a resend is a new packet on the
    ///   wire and needs its own transport-wide number (the cached one was already used).
    public static func write(_ retransmission: Retransmission, from cache: RetransmissionCache, now: Int64, transportSequenceNumber: (id: UInt8, value: UInt16)? = nil, into output: UnsafeMutableRawBufferPointer) throws(RTPError) -> Int? {
        try cache.withPacket(retransmission.sequenceNumber, now: now) { (packet) throws(RTPError) -> Int in
            let length: Int
            if let rtx = retransmission.rtx {
                length = try RTXPacket.wrap(packet, ssrc: rtx.ssrc, payloadType: rtx.payloadType, sequenceNumber: rtx.sequenceNumber, into: output)
            } else {
                guard output.count >= packet.count, let target = output.baseAddress, let source = packet.baseAddress else { throw .bufferTooSmall }
                target.copyMemory(from: source, byteCount: packet.count)
                length = packet.count
            }
            if let transportSequenceNumber {
                let view = try RTPPacketView(UnsafeRawBufferPointer(rebasing: output[..<length]))
                if let range = view.extensionValueRange(id: transportSequenceNumber.id), range.count == 2 {
                    storeBE16(transportSequenceNumber.value, output, range.lowerBound)
                }
            }
            return length
        }
    }
}
