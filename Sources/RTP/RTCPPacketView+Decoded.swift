// RFC 3550 §6.4 (SR/RR), RFC 4585 §6.2-6.3 (NACK, PLI), RFC 5104 §4.3.1 (FIR).
/// Borrowed, validated views of the RTCP packets the SFU acts on, decoded in place from an
/// `RTCPPacketView` (no arrays: lists are read by index). `RTCPCompound.parse` builds the
/// owning `RTCPPacket` values from these same views, so both agree on what is malformed.
extension RTCPPacketView {
    public enum Decoded {
        case senderReport(RTCPSenderReportView)
        case receiverReport(RTCPReceiverReportView)
        case nack(RTCPGenericNACKView)
        case pictureLossIndication(RTCPPictureLossIndication)
        case fullIntraRequest(RTCPFullIntraRequestView)
        case remb(RTCPREMBView)
        /// Transport-wide feedback (RTPFB FMT 15): sender SSRC, media SSRC, then the body.
        case transportFeedback(senderSSRC: UInt32, mediaSSRC: UInt32, body: UnsafeRawBufferPointer)
        /// SDES (RFC 3550 §6.5), its chunks and items checked; see `RTCPCompound.parse` for values.
        case sourceDescription
        /// BYE (RFC 3550 §6.6) for `ssrcCount` sources, its reason length checked.
        case goodbye(ssrcCount: Int)
        /// APP (RFC 3550 §6.7).
        case application
        /// Unknown types and feedback formats (kept `.opaque` by `RTCPCompound.parse`).
        case other
    }

    /// The packet decoded in place; `.malformed` when its body is too short for its count.
    public func decoded() throws(RTCPError) -> Decoded {
        let malformed = RTCPError.malformed(packetType: packetType)
        let count = Int(countOrFormat)
        switch packetType {
        case RTCPPacketType.senderReport:
            guard body.count >= 24 + 24 * count else { throw malformed }
            return .senderReport(RTCPSenderReportView(body: body, blocks: RTCPReportBlocksView(body: body, start: 24, count: count)))
        case RTCPPacketType.receiverReport:
            guard body.count >= 4 + 24 * count else { throw malformed }
            return .receiverReport(RTCPReceiverReportView(ssrc: body.be32(0), blocks: RTCPReportBlocksView(body: body, start: 4, count: count)))
        case RTCPPacketType.transportFeedback where count == 1:
            guard body.count >= 8, (body.count - 8) % 4 == 0 else { throw malformed }
            return .nack(RTCPGenericNACKView(body: body))
        case RTCPPacketType.transportFeedback where count == 15:
            guard body.count >= 8 else { throw malformed }
            return .transportFeedback(senderSSRC: body.be32(0), mediaSSRC: body.be32(4),
                                      body: UnsafeRawBufferPointer(rebasing: body[8...]))
        case RTCPPacketType.payloadFeedback where count == 1:
            guard body.count >= 8 else { throw malformed }
            return .pictureLossIndication(RTCPPictureLossIndication(senderSSRC: body.be32(0), mediaSSRC: body.be32(4)))
        case RTCPPacketType.payloadFeedback where count == 4:
            guard body.count >= 8, (body.count - 8) % 8 == 0 else { throw malformed }
            return .fullIntraRequest(RTCPFullIntraRequestView(body: body))
        case RTCPPacketType.payloadFeedback where count == 15
            && body.count >= 16 && body.be32(8) == 0x5245_4D42:  // "REMB"
            guard body.count >= 16 + 4 * Int(body[12]) else { throw malformed }
            return .remb(RTCPREMBView(body: body))
        case RTCPPacketType.sourceDescription:
            try Self.checkSourceDescription(body, count: count)
            return .sourceDescription
        case RTCPPacketType.goodbye:
            guard body.count >= 4 * count else { throw malformed }
            if body.count > 4 * count {
                guard 4 * count + 1 + Int(body[4 * count]) <= body.count else { throw malformed }
            }
            return .goodbye(ssrcCount: count)
        case RTCPPacketType.application:
            guard body.count >= 8 else { throw malformed }
            return .application
        default:
            return .other
        }
    }

    /// SDES chunks: SSRC, then items (type, length, value) until a null type octet, then
    /// zero padding to the next 32-bit boundary (RFC 3550 §6.5). Throws where
    /// `RTCPCompound.sourceDescription` would.
    static func checkSourceDescription(_ body: UnsafeRawBufferPointer, count: Int) throws(RTCPError) {
        let malformed = RTCPError.malformed(packetType: RTCPPacketType.sourceDescription)
        var offset = 0
        var chunk = 0
        while chunk < count {
            guard offset + 4 <= body.count else { throw malformed }
            offset += 4
            while true {
                guard offset < body.count else { throw malformed }
                if body[offset] == 0 {
                    offset = (offset + 4) & ~3
                    break
                }
                guard offset + 2 <= body.count, offset + 2 + Int(body[offset + 1]) <= body.count else { throw malformed }
                offset += 2 + Int(body[offset + 1])
            }
            chunk += 1
        }
    }
}

/// Report blocks of an SR or RR (RFC 3550 §6.4.1), 24 bytes each, read by index.
/// ```
/// +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
/// |                 SSRC_1 (SSRC of first source)                 |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// | fraction lost |       cumulative number of packets lost       |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |           extended highest sequence number received           |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                      interarrival jitter                      |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                         last SR (LSR)                         |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                   delay since last SR (DLSR)                  |
/// +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
/// ```
public struct RTCPReportBlocksView {
    let body: UnsafeRawBufferPointer
    let start: Int
    public let count: Int

    /// Block `index` (0 ..< count; bounds were checked by `decoded()`).
    public func block(at index: Int) -> RTCPReportBlock {
        let base = start + 24 * index
        // Sign-extend the 24-bit cumulative loss.
        let lost = Int32(bitPattern: body.be24(base + 5) << 8) >> 8
        return RTCPReportBlock(
            ssrc: body.be32(base), fractionLost: body[base + 4], cumulativeLost: lost,
            extendedHighestSequenceNumber: body.be32(base + 8), jitter: body.be32(base + 12),
            lastSenderReport: body.be32(base + 16), delaySinceLastSenderReport: body.be32(base + 20))
    }

    /// Owning copy (allocates).
    public var all: [RTCPReportBlock] { (0..<count).map(block(at:)) }
}

/// SR (RFC 3550 §6.4.1): sender info after the SSRC, then report blocks.
/// ```
/// |                         SSRC of sender                        |
/// |              NTP timestamp, most significant word             |
/// |             NTP timestamp, least significant word             |
/// |                         RTP timestamp                         |
/// |                     sender's packet count                     |
/// |                      sender's octet count                     |
/// |                   report blocks (24 bytes each)               |
/// ```
public struct RTCPSenderReportView {
    let body: UnsafeRawBufferPointer
    public let blocks: RTCPReportBlocksView
    public var ssrc: UInt32 { body.be32(0) }
    public var ntpTimestamp: UInt64 { body.be64(4) }
    public var rtpTimestamp: UInt32 { body.be32(12) }
    public var packetCount: UInt32 { body.be32(16) }
    public var octetCount: UInt32 { body.be32(20) }
}

/// RR (RFC 3550 §6.4.2): the reporter's SSRC, then report blocks.
public struct RTCPReceiverReportView {
    public let ssrc: UInt32
    public let blocks: RTCPReportBlocksView
}

/// Generic NACK (RFC 4585 §6.2.1): FCI entries of a lost packet ID and a bitmask of the
/// 16 following packets (bit i set = PID + i + 1 lost too).
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                  SSRC of packet sender                        |
/// |                  SSRC of media source                         |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |            PID                |             BLP               |  × n
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
public struct RTCPGenericNACKView {
    let body: UnsafeRawBufferPointer
    public var senderSSRC: UInt32 { body.be32(0) }
    public var mediaSSRC: UInt32 { body.be32(4) }
    /// FCI entries (PID + BLP pairs).
    public var itemCount: Int { (body.count - 8) / 4 }

    public func item(at index: Int) -> (pid: UInt16, blp: UInt16) {
        (body.be16(8 + 4 * index), body.be16(10 + 4 * index))
    }

    /// Appends the lost sequence numbers in wire order (PID, then BLP bits from the least
    /// significant) to `out`: reuse one array with `removeAll(keepingCapacity: true)` and
    /// this allocates only when `out` must grow.
    public func appendSequenceNumbers(to out: inout [UInt16]) {
        var index = 0
        while index < itemCount {
            let (pid, blp) = item(at: index)
            out.append(pid)
            var bit: UInt16 = 0
            while bit < 16 {
                if blp & (1 << bit) != 0 { out.append(pid &+ bit &+ 1) }
                bit += 1
            }
            index += 1
        }
    }
}

/// FIR (RFC 5104 §4.3.1): FCI entries of (SSRC, command sequence number, 3 reserved octets).
public struct RTCPFullIntraRequestView {
    let body: UnsafeRawBufferPointer
    public var senderSSRC: UInt32 { body.be32(0) }
    public var mediaSSRC: UInt32 { body.be32(4) }
    public var entryCount: Int { (body.count - 8) / 8 }

    public func entry(at index: Int) -> RTCPFullIntraRequest.Entry {
        RTCPFullIntraRequest.Entry(ssrc: body.be32(8 + 8 * index), sequenceNumber: body[12 + 8 * index])
    }
}

/// REMB (draft-alvestrand-rmcat-remb-03 §2.2): PSFB FMT 15 with "REMB", SSRC count,
/// 6-bit exponent and 18-bit mantissa, then the SSRCs the estimate applies to.
/// ```
/// |                  SSRC of packet sender                        |
/// |                  SSRC of media source (0)                     |
/// |  Unique identifier 'R' 'E' 'M' 'B'                            |
/// |  Num SSRC     | BR Exp    |  BR Mantissa                      |
/// |   SSRC feedback                                               |  × Num SSRC
/// ```
public struct RTCPREMBView {
    let body: UnsafeRawBufferPointer
    public var senderSSRC: UInt32 { body.be32(0) }
    public var ssrcCount: Int { Int(body[12]) }
    public func ssrc(at index: Int) -> UInt32 { body.be32(16 + 4 * index) }

    /// Bits per second = mantissa << exponent, saturated at `UInt64.max` (exponent up to 63
    /// with an 18-bit mantissa can overflow 64 bits).
    public var bitrate: UInt64 {
        let exponent = UInt64(body[13] >> 2)
        let mantissa = UInt64(body.be24(13) & 0x3FFFF)
        return exponent + 18 > 64 && mantissa >> (64 - exponent) != 0 ? UInt64.max : mantissa << exponent
    }
}
