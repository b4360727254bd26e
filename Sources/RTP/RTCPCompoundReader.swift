/// One packet of an RTCP compound, borrowing the compound's bytes (valid only while they are).
///
/// The non-allocating counterpart of `RTCPPacket`: the SFU's RTCP handler walks a compound
/// with `RTCPCompoundReader` and decodes each view in place (`RTCPPacketView.decoded()`), so
/// answering a NACK or taking a receiver report touches no heap (issue 3).
public struct RTCPPacketView {
    /// PT field (RFC 3550 §12.1, RFC 4585 §6.1).
    public let packetType: UInt8
    /// The 5-bit RC / SC / FMT field.
    public let countOrFormat: UInt8
    /// Everything after the 4-byte common header, padding removed.
    public let body: UnsafeRawBufferPointer

    public init(packetType: UInt8, countOrFormat: UInt8, body: UnsafeRawBufferPointer) {
        self.packetType = packetType
        self.countOrFormat = countOrFormat
        self.body = body
    }
}

/// Walks an RTCP compound packet (RFC 3550 §6.1) one packet at a time, without copying.
///
/// Common header of every packet (RFC 3550 §6.4.1):
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |V=2|P|  RC/FMT |       PT      |    length (32-bit words - 1)  |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
/// With P set, the packet's last octet counts the padding octets, itself included
/// (RFC 3550 §6.4.1). Compound validity rules of RFC 3550 §A.2 (first packet SR/RR, padding
/// only on the last) are not enforced: RFC 5506 reduced-size RTCP is legal in WebRTC.
///
/// ```swift
/// var reader = RTCPCompoundReader(bytes)
/// while let packet = try reader.next() { ... }
/// ```
/// A framing error ends the walk with a throw; packets yielded before it stay valid.
public struct RTCPCompoundReader {
    public let buffer: UnsafeRawBufferPointer
    /// Start of the next packet.
    public private(set) var offset = 0

    public init(_ buffer: UnsafeRawBufferPointer) {
        self.buffer = buffer
    }

    /// The next packet, nil at the end of the compound.
    public mutating func next() throws(RTCPError) -> RTCPPacketView? {
        guard offset < buffer.count else { return nil }
        guard buffer.count - offset >= 4 else { throw .truncated }
        let first = buffer[offset]
        let version = first >> 6
        guard version == 2 else { throw .badVersion(version) }
        let length = (Int(buffer.be16(offset + 2)) + 1) * 4
        guard length <= buffer.count - offset else { throw .truncated }
        var bodyEnd = offset + length
        if first & 0x20 != 0 {
            let padding = Int(buffer[bodyEnd - 1])
            guard padding > 0, padding <= length - 4 else { throw .badPadding }
            bodyEnd -= padding
        }
        let view = RTCPPacketView(
            packetType: buffer[offset + 1], countOrFormat: first & 0x1F,
            body: UnsafeRawBufferPointer(rebasing: buffer[(offset + 4)..<bodyEnd]))
        offset += length
        return view
    }
}
