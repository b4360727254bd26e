extension RTPPacketView {
    /// The transport-wide sequence number carried in header extension `id`
    /// (http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01 §2: a 16-bit
    /// value); nil when absent, when `id` is 0 (not negotiated) or when the element is not
    /// 2 bytes long. transport-wide-cc-02's 4-byte form starts with the same 16 bits.
    public func transportWideSequenceNumber(extensionID id: UInt8) -> UInt16? {
        guard id != 0, let range = extensionValueRange(id: id), range.count == 2 || range.count == 4 else { return nil }
        return buffer.be16(range.lowerBound)
    }
}
