/// A non-copying, validated view of one RTP packet (RFC 3550 §5.1).
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |V=2|P|X|  CC   |M|     PT      |       sequence number         |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                           timestamp                           |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |           synchronization source (SSRC) identifier            |
/// +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
/// |            contributing source (CSRC) identifiers             |
/// |                             ....                              |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |      defined by profile       |           length              |   (if X, §5.3.1)
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                        header extension                       |
/// |                             ....                              |
/// ```
///
/// The view holds the caller's buffer pointer and a handful of offsets; it never allocates
/// and never copies, so it must not outlive the buffer (use it inside `withUnsafeBytes`).
/// All validation happens in `init`: every accessor afterwards is bounds-safe. Header
/// extension elements (RFC 8285 one-byte `0xBEDE` and two-byte `0x100X` profiles) are
/// walked once at init to reject malformed ones; lookups walk again without allocating.
public struct RTPPacketView {
    /// The whole packet.
    public let buffer: UnsafeRawBufferPointer
    /// Byte range of the payload (after header, CSRCs and extension; before padding).
    public let payloadRange: Range<Int>
    /// Number of padding octets at the end, including the count octet itself (0 if P unset).
    public let paddingLength: Int
    /// Range of the header extension data after its 4-byte profile/length word (empty if X unset).
    public let extensionDataRange: Range<Int>

    /// Parses and validates `buffer`.
    public init(_ buffer: UnsafeRawBufferPointer) throws(RTPError) {
        guard buffer.count >= 12 else { throw .truncated }
        let version = buffer[0] >> 6
        guard version == 2 else { throw .badVersion(version) }
        let csrcCount = Int(buffer[0] & 0x0F)
        var offset = 12 + 4 * csrcCount
        guard offset <= buffer.count else { throw .badCSRCCount }
        var extensionData = offset..<offset
        if buffer[0] & 0x10 != 0 {
            guard offset + 4 <= buffer.count else { throw .truncated }
            let words = Int(buffer.be16(offset + 2))
            let start = offset + 4
            let end = start + 4 * words
            guard end <= buffer.count else { throw .badExtension }
            extensionData = start..<end
            offset = end
            try RTPHeaderExtensionElements.validate(
                buffer, profile: buffer.be16(start - 4), range: extensionData)
        }
        var padding = 0
        if buffer[0] & 0x20 != 0 {
            guard buffer.count > offset else { throw .badPadding }
            padding = Int(buffer[buffer.count - 1])
            guard padding > 0, padding <= buffer.count - offset else { throw .badPadding }
        }
        self.buffer = buffer
        self.extensionDataRange = extensionData
        self.payloadRange = offset..<(buffer.count - padding)
        self.paddingLength = padding
    }

    /// RTP version; always 2 for a parsed view.
    public var version: UInt8 { buffer[0] >> 6 }
    /// P bit.
    public var hasPadding: Bool { buffer[0] & 0x20 != 0 }
    /// X bit.
    public var hasExtension: Bool { buffer[0] & 0x10 != 0 }
    /// CC field.
    public var csrcCount: Int { Int(buffer[0] & 0x0F) }
    /// M bit.
    public var marker: Bool { buffer[1] & 0x80 != 0 }
    /// PT field (7 bits).
    public var payloadType: UInt8 { buffer[1] & 0x7F }
    /// Sequence number.
    public var sequenceNumber: UInt16 { buffer.be16(2) }
    /// RTP timestamp.
    public var timestamp: UInt32 { buffer.be32(4) }
    /// Synchronization source.
    public var ssrc: UInt32 { buffer.be32(8) }
    /// Length of everything before the payload.
    public var headerLength: Int { payloadRange.lowerBound }

    /// The `index`-th CSRC, or nil when out of range.
    public func csrc(at index: Int) -> UInt32? {
        guard index >= 0, index < csrcCount else { return nil }
        return buffer.be32(12 + 4 * index)
    }

    /// All CSRCs (allocates; convenience for tests and control paths).
    public var csrcs: [UInt32] { (0..<csrcCount).map { buffer.be32(12 + 4 * $0) } }

    /// The extension profile ("defined by profile" field), nil when X is unset.
    public var extensionProfile: UInt16? {
        hasExtension ? buffer.be16(extensionDataRange.lowerBound - 4) : nil
    }

    /// The payload bytes, rebased to index 0.
    public var payload: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: buffer[payloadRange]) }

    /// Iterates RFC 8285 extension elements (empty for other profiles).
    public var headerExtensions: RTPHeaderExtensionElements {
        RTPHeaderExtensionElements(
            buffer: buffer, profile: extensionProfile ?? 0, range: extensionDataRange)
    }

    /// Byte range of the value of extension element `id`, nil when absent.
    public func extensionValueRange(id: UInt8) -> Range<Int>? {
        for element in headerExtensions where element.id == id { return element.valueRange }
        return nil
    }

    /// The value of extension element `id`, rebased to index 0; nil when absent.
    public func extensionValue(id: UInt8) -> UnsafeRawBufferPointer? {
        extensionValueRange(id: id).map { UnsafeRawBufferPointer(rebasing: buffer[$0]) }
    }
}
