/// In-place rewriting of RTP header fields for the SFU forwarding path (no allocation).
///
/// Each function validates just enough of the buffer for the field it writes; the
/// extension rewrite parses the whole packet first.
public enum RTPPacketRewriter {
    /// Overwrites the SSRC.
    public static func setSSRC(_ ssrc: UInt32, in packet: UnsafeMutableRawBufferPointer) throws(RTPError) {
        try checkFixedHeader(packet)
        packet.storeBE32(ssrc, at: 8)
    }

    /// Overwrites the sequence number.
    public static func setSequenceNumber(_ sequenceNumber: UInt16, in packet: UnsafeMutableRawBufferPointer) throws(RTPError) {
        try checkFixedHeader(packet)
        packet.storeBE16(sequenceNumber, at: 2)
    }

    /// Overwrites the RTP timestamp.
    public static func setTimestamp(_ timestamp: UInt32, in packet: UnsafeMutableRawBufferPointer) throws(RTPError) {
        try checkFixedHeader(packet)
        packet.storeBE32(timestamp, at: 4)
    }

    /// Overwrites the payload type, keeping the marker bit.
    public static func setPayloadType(_ payloadType: UInt8, in packet: UnsafeMutableRawBufferPointer) throws(RTPError) {
        guard payloadType < 128 else { throw .invalidField }
        try checkFixedHeader(packet)
        packet[1] = (packet[1] & 0x80) | payloadType
    }

    /// Sets or clears the marker bit.
    public static func setMarker(_ marker: Bool, in packet: UnsafeMutableRawBufferPointer) throws(RTPError) {
        try checkFixedHeader(packet)
        packet[1] = marker ? packet[1] | 0x80 : packet[1] & 0x7F
    }

    /// Replaces the value of extension element `id` with `value` of the same length
    /// (e.g. rewriting abs-send-time or a transport-wide sequence number).
    public static func replaceExtensionValue(
        id: UInt8, with value: UnsafeRawBufferPointer, in packet: UnsafeMutableRawBufferPointer
    ) throws(RTPError) {
        let view = try RTPPacketView(UnsafeRawBufferPointer(packet))
        guard let range = view.extensionValueRange(id: id) else { throw .extensionNotFound }
        guard range.count == value.count else { throw .extensionLengthMismatch }
        for index in 0..<value.count { packet[range.lowerBound + index] = value[index] }
    }

    /// `[UInt8]` convenience for `replaceExtensionValue(id:with:in:)`.
    public static func replaceExtensionValue(
        id: UInt8, with value: [UInt8], in packet: UnsafeMutableRawBufferPointer
    ) throws(RTPError) {
        let result: Result<Void, RTPError> = value.withUnsafeBytes { bytes in
            do throws(RTPError) {
                try replaceExtensionValue(id: id, with: bytes, in: packet)
                return .success(())
            } catch { return .failure(error) }
        }
        try result.get()
    }

    private static func checkFixedHeader(_ packet: UnsafeMutableRawBufferPointer) throws(RTPError) {
        guard packet.count >= 12 else { throw .truncated }
        let version = packet[0] >> 6
        guard version == 2 else { throw .badVersion(version) }
    }
}
