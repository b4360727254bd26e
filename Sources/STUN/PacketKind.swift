/// What arrived on the shared media UDP port, by first byte (RFC 7983 §7) and, for RTP vs
/// RTCP, by the second byte (RFC 5761 §4: RTCP packet types 192–223 never collide with
/// RTP payload types once the marker bit is included).
public enum PacketKind: Equatable, Sendable {
    /// First byte 0–3.
    case stun
    /// First byte 20–63.
    case dtls
    /// First byte 128–191 (only the first byte known).
    case rtpOrRTCP
    /// 128–191 and second byte outside 192–223.
    case rtp
    /// 128–191 and second byte 192–223.
    case rtcp
    /// ZRTP (16–19), TURN channel (64–79) and everything else: dropped by the SFU.
    case unknown

    /// Classifies by the first byte alone (RFC 7983 §7).
    public static func classify(firstByte: UInt8) -> PacketKind {
        switch firstByte {
        case 0...3: .stun
        case 20...63: .dtls
        case 128...191: .rtpOrRTCP
        default: .unknown
        }
    }

    /// Classifies a whole packet, splitting RTP from RTCP (RFC 5761 §4).
    public static func classify(_ packet: UnsafeRawBufferPointer) -> PacketKind {
        guard let first = packet.first else { return .unknown }
        let kind = classify(firstByte: first)
        guard kind == .rtpOrRTCP else { return kind }
        guard packet.count >= 2 else { return .unknown }
        return (192...223).contains(packet[1]) ? .rtcp : .rtp
    }

    /// `[UInt8]` convenience.
    public static func classify(_ packet: [UInt8]) -> PacketKind {
        packet.withUnsafeBytes { classify($0) }
    }
}
