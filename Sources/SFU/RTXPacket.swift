import RTP

/// RFC 4588 §4 retransmission packets: building them from an original packet and taking the
/// original back out of one.
///
/// ```
///  RTX packet = original RTP header with SSRC := RTX SSRC, PT := RTX PT (apt → original),
///               sequence number := the RTX stream's own sequence;
///               timestamp, marker, CSRCs and header extensions unchanged
///  payload    = OSN (original sequence number, 16 bits) | original payload
/// ```
/// Original padding is not carried (RFC 4588 §4: padding belongs to each packet).
public enum RTXPacket {
    /// Writes the RTX form of `original` into `output`; returns the byte count.
    /// - Throws: `RTPError` when `original` is not valid RTP, `.bufferTooSmall` when the
    ///   output cannot hold it.
    public static func wrap(_ original: UnsafeRawBufferPointer, ssrc: UInt32, payloadType: UInt8, sequenceNumber: UInt16, into output: UnsafeMutableRawBufferPointer) throws(RTPError) -> Int {
        let view = try RTPPacketView(original)
        let header = view.headerLength
        let payload = view.payloadRange.count
        let total = header + 2 + payload
        guard output.count >= total, let target = output.baseAddress, let source = original.baseAddress else { throw .bufferTooSmall }
        target.copyMemory(from: source, byteCount: header)
        output[0] = original[0] & 0xDF  // clear P: the original padding is not carried
        output[1] = (original[1] & 0x80) | (payloadType & 0x7F)
        storeBE16(sequenceNumber, output, 2)
        storeBE32(ssrc, output, 8)
        storeBE16(view.sequenceNumber, output, header)
        if payload > 0 {
            (target + header + 2).copyMemory(from: source + view.payloadRange.lowerBound, byteCount: payload)
        }
        return total
    }

    /// The original sequence number of an RTX packet (first two payload bytes), nil when the
    /// payload is shorter (an RTX padding-only packet: bandwidth probe, nothing to repair).
    public static func originalSequenceNumber(_ rtx: RTPPacketView) -> UInt16? {
        let range = rtx.payloadRange
        guard range.count >= 2 else { return nil }
        return UInt16(rtx.buffer[range.lowerBound]) << 8 | UInt16(rtx.buffer[range.lowerBound + 1])
    }

    /// Writes the original packet carried by `rtx` into `output` (SSRC and payload type of
    /// the media stream, sequence number = OSN, OSN removed); returns the byte count.
    /// - Throws: `.truncated` for an RTX packet without OSN, `.bufferTooSmall`.
    public static func unwrap(_ rtx: RTPPacketView, ssrc: UInt32, payloadType: UInt8, into output: UnsafeMutableRawBufferPointer) throws(RTPError) -> Int {
        guard let osn = originalSequenceNumber(rtx) else { throw .truncated }
        let header = rtx.headerLength
        let payload = rtx.payloadRange.count - 2
        let total = header + payload
        guard output.count >= total, let target = output.baseAddress, let source = rtx.buffer.baseAddress else { throw .bufferTooSmall }
        target.copyMemory(from: source, byteCount: header)
        output[0] = rtx.buffer[0] & 0xDF
        output[1] = (rtx.buffer[1] & 0x80) | (payloadType & 0x7F)
        storeBE16(osn, output, 2)
        storeBE32(ssrc, output, 8)
        if payload > 0 {
            (target + header).copyMemory(from: source + rtx.payloadRange.lowerBound + 2, byteCount: payload)
        }
        return total
    }
}

@inline(__always)
func storeBE16(_ value: UInt16, _ buffer: UnsafeMutableRawBufferPointer, _ offset: Int) {
    buffer[offset] = UInt8(truncatingIfNeeded: value >> 8)
    buffer[offset + 1] = UInt8(truncatingIfNeeded: value)
}

@inline(__always)
func storeBE32(_ value: UInt32, _ buffer: UnsafeMutableRawBufferPointer, _ offset: Int) {
    buffer[offset] = UInt8(truncatingIfNeeded: value >> 24)
    buffer[offset + 1] = UInt8(truncatingIfNeeded: value >> 16)
    buffer[offset + 2] = UInt8(truncatingIfNeeded: value >> 8)
    buffer[offset + 3] = UInt8(truncatingIfNeeded: value)
}
