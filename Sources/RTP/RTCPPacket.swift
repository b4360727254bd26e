/// One RTCP packet out of a compound packet (RFC 3550 §6, RFC 4585 §6, RFC 5104 §4.3).
///
/// Control traffic is low-rate, so these are owning value types (arrays allowed); the SFU's
/// per-packet path reads borrowed views instead (`RTCPCompoundReader`, `RTCPPacketView`).
/// Anything not understood is kept as `.opaque`, never rejected.
public enum RTCPPacket: Equatable, Sendable {
    case senderReport(RTCPSenderReport)
    case receiverReport(RTCPReceiverReport)
    case sourceDescription(RTCPSourceDescription)
    case goodbye(RTCPGoodbye)
    case application(RTCPApplication)
    case nack(RTCPGenericNACK)
    case transportFeedback(RTCPTransportFeedback)
    case pictureLossIndication(RTCPPictureLossIndication)
    case fullIntraRequest(RTCPFullIntraRequest)
    case remb(RTCPReceiverEstimatedMaxBitrate)
    case opaque(RTCPOpaquePacket)
}

/// RTCP packet type values (RFC 3550 §12.1, RFC 4585 §6.1).
public enum RTCPPacketType {
    public static let senderReport: UInt8 = 200
    public static let receiverReport: UInt8 = 201
    public static let sourceDescription: UInt8 = 202
    public static let goodbye: UInt8 = 203
    public static let application: UInt8 = 204
    /// Transport-layer feedback (RFC 4585 §6.2): FMT 1 NACK, FMT 15 transport-cc.
    public static let transportFeedback: UInt8 = 205
    /// Payload-specific feedback (RFC 4585 §6.3): FMT 1 PLI, FMT 4 FIR, FMT 15 AFB/REMB.
    public static let payloadFeedback: UInt8 = 206
}

/// Report block (RFC 3550 §6.4.1), 24 bytes on the wire.
public struct RTCPReportBlock: Equatable, Sendable {
    public var ssrc: UInt32
    /// Fraction lost since the previous report, as a fixed-point fraction of 256.
    public var fractionLost: UInt8
    /// Cumulative packets lost, 24-bit signed on the wire (clamped when serializing).
    public var cumulativeLost: Int32
    public var extendedHighestSequenceNumber: UInt32
    /// Interarrival jitter in timestamp units.
    public var jitter: UInt32
    /// Middle 32 bits of the last SR's NTP timestamp.
    public var lastSenderReport: UInt32
    /// Delay since that SR, in 1/65536 s.
    public var delaySinceLastSenderReport: UInt32

    public init(
        ssrc: UInt32, fractionLost: UInt8, cumulativeLost: Int32, extendedHighestSequenceNumber: UInt32,
        jitter: UInt32, lastSenderReport: UInt32, delaySinceLastSenderReport: UInt32
    ) {
        self.ssrc = ssrc
        self.fractionLost = fractionLost
        self.cumulativeLost = cumulativeLost
        self.extendedHighestSequenceNumber = extendedHighestSequenceNumber
        self.jitter = jitter
        self.lastSenderReport = lastSenderReport
        self.delaySinceLastSenderReport = delaySinceLastSenderReport
    }
}

/// SR (RFC 3550 §6.4.1).
public struct RTCPSenderReport: Equatable, Sendable {
    public var ssrc: UInt32
    /// 64-bit NTP timestamp (seconds << 32 | fraction).
    public var ntpTimestamp: UInt64
    public var rtpTimestamp: UInt32
    public var packetCount: UInt32
    public var octetCount: UInt32
    public var reportBlocks: [RTCPReportBlock]

    public init(ssrc: UInt32, ntpTimestamp: UInt64, rtpTimestamp: UInt32, packetCount: UInt32, octetCount: UInt32, reportBlocks: [RTCPReportBlock] = []) {
        self.ssrc = ssrc
        self.ntpTimestamp = ntpTimestamp
        self.rtpTimestamp = rtpTimestamp
        self.packetCount = packetCount
        self.octetCount = octetCount
        self.reportBlocks = reportBlocks
    }
}

/// RR (RFC 3550 §6.4.2).
public struct RTCPReceiverReport: Equatable, Sendable {
    public var ssrc: UInt32
    public var reportBlocks: [RTCPReportBlock]

    public init(ssrc: UInt32, reportBlocks: [RTCPReportBlock] = []) {
        self.ssrc = ssrc
        self.reportBlocks = reportBlocks
    }
}

/// SDES (RFC 3550 §6.5).
public struct RTCPSourceDescription: Equatable, Sendable {
    public struct Item: Equatable, Sendable {
        /// Item type (1 = CNAME, 2 = NAME, ...).
        public var type: UInt8
        public var value: [UInt8]
        public init(type: UInt8, value: [UInt8]) {
            self.type = type
            self.value = value
        }
    }

    public struct Chunk: Equatable, Sendable {
        public var ssrc: UInt32
        public var items: [Item]
        public init(ssrc: UInt32, items: [Item]) {
            self.ssrc = ssrc
            self.items = items
        }

        /// The CNAME item (type 1) decoded as UTF-8, if present.
        public var cname: String? {
            items.first { $0.type == 1 }.map { String(decoding: $0.value, as: UTF8.self) }
        }
    }

    public var chunks: [Chunk]
    public init(chunks: [Chunk]) { self.chunks = chunks }
}

/// BYE (RFC 3550 §6.6).
public struct RTCPGoodbye: Equatable, Sendable {
    public var ssrcs: [UInt32]
    /// Optional reason for leaving (raw bytes, nominally UTF-8).
    public var reason: [UInt8]?
    public init(ssrcs: [UInt32], reason: [UInt8]? = nil) {
        self.ssrcs = ssrcs
        self.reason = reason
    }
}

/// APP (RFC 3550 §6.7), kept opaque.
public struct RTCPApplication: Equatable, Sendable {
    public var subtype: UInt8
    public var ssrc: UInt32
    /// Four ASCII characters, big-endian.
    public var name: UInt32
    public var data: [UInt8]
    public init(subtype: UInt8, ssrc: UInt32, name: UInt32, data: [UInt8]) {
        self.subtype = subtype
        self.ssrc = ssrc
        self.name = name
        self.data = data
    }
}

/// Generic NACK (RFC 4585 §6.2.1): PID + BLP pairs, expanded to sequence numbers.
public struct RTCPGenericNACK: Equatable, Sendable {
    public var senderSSRC: UInt32
    public var mediaSSRC: UInt32
    /// Lost sequence numbers in wire order (PID, then BLP bits from least significant).
    public var sequenceNumbers: [UInt16]
    public init(senderSSRC: UInt32, mediaSSRC: UInt32, sequenceNumbers: [UInt16]) {
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
        self.sequenceNumbers = sequenceNumbers
    }
}

/// Transport-wide congestion control feedback (draft-holmer-rmcat-transport-wide-cc-extensions
/// §3.1, RTPFB FMT 15); identified only, body kept opaque for now.
public struct RTCPTransportFeedback: Equatable, Sendable {
    public var senderSSRC: UInt32
    public var mediaSSRC: UInt32
    /// Everything after the media SSRC (base seq, status count, reference time, chunks, deltas).
    public var body: [UInt8]
    public init(senderSSRC: UInt32, mediaSSRC: UInt32, body: [UInt8]) {
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
        self.body = body
    }
}

/// Picture Loss Indication (RFC 4585 §6.3.1).
public struct RTCPPictureLossIndication: Equatable, Sendable {
    public var senderSSRC: UInt32
    public var mediaSSRC: UInt32
    public init(senderSSRC: UInt32, mediaSSRC: UInt32) {
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
    }
}

/// Full Intra Request (RFC 5104 §4.3.1): FCI entries of (SSRC, command sequence number).
public struct RTCPFullIntraRequest: Equatable, Sendable {
    public struct Entry: Equatable, Sendable {
        public var ssrc: UInt32
        public var sequenceNumber: UInt8
        public init(ssrc: UInt32, sequenceNumber: UInt8) {
            self.ssrc = ssrc
            self.sequenceNumber = sequenceNumber
        }
    }

    public var senderSSRC: UInt32
    /// RFC 5104 §4.3.1.2: SHALL be 0 on send; kept as received.
    public var mediaSSRC: UInt32
    public var entries: [Entry]
    public init(senderSSRC: UInt32, mediaSSRC: UInt32 = 0, entries: [Entry]) {
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
        self.entries = entries
    }
}

/// Receiver Estimated Max Bitrate (draft-alvestrand-rmcat-remb-03 §2.2; PSFB FMT 15 "REMB").
public struct RTCPReceiverEstimatedMaxBitrate: Equatable, Sendable {
    public var senderSSRC: UInt32
    /// Bits per second = mantissa << exponent (18-bit mantissa, 6-bit exponent on the wire).
    public var bitrate: UInt64
    public var ssrcs: [UInt32]
    public init(senderSSRC: UInt32, bitrate: UInt64, ssrcs: [UInt32]) {
        self.senderSSRC = senderSSRC
        self.bitrate = bitrate
        self.ssrcs = ssrcs
    }
}

/// Any packet not decoded above: type, the 5-bit count/FMT field and the body after the
/// 4-byte header (padding removed).
public struct RTCPOpaquePacket: Equatable, Sendable {
    public var packetType: UInt8
    public var countOrFormat: UInt8
    public var body: [UInt8]
    public init(packetType: UInt8, countOrFormat: UInt8, body: [UInt8]) {
        self.packetType = packetType
        self.countOrFormat = countOrFormat
        self.body = body
    }
}
