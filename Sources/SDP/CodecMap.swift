/// Which payload type carries which codec for one participant (RFC 3264 §5.1: payload types are
/// chosen per session, so the forwarder rewrites them between publisher and subscriber).
///
/// Lookups go through a 128-entry table so the per-packet path does not hash.
public struct CodecMap: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        public var codec: SFUCodec
        public var payloadType: UInt8
        /// The RTX payload type whose `apt` is ``payloadType``.
        public var rtxPayloadType: UInt8?

        public init(codec: SFUCodec, payloadType: UInt8, rtxPayloadType: UInt8? = nil) {
            self.codec = codec
            self.payloadType = payloadType
            self.rtxPayloadType = rtxPayloadType
        }
    }

    /// What a payload type number carries.
    public enum Payload: Sendable, Equatable {
        case media(SFUCodec)
        case rtx(SFUCodec)
    }

    public private(set) var entries: [Entry]
    /// Index by payload type: entry index × 2 + 1 for RTX, −1 when unknown.
    private var table: [Int16]

    public init(entries: [Entry] = []) {
        self.entries = []
        self.table = Array(repeating: -1, count: 128)
        for entry in entries { add(entry) }
    }

    /// Adds a mapping; a payload type already mapped keeps its first meaning.
    public mutating func add(_ entry: Entry) {
        guard entry.payloadType < 128, table[Int(entry.payloadType)] < 0 else { return }
        let index = Int16(entries.count)
        entries.append(entry)
        table[Int(entry.payloadType)] = index * 2
        if let rtx = entry.rtxPayloadType, rtx < 128, table[Int(rtx)] < 0 {
            table[Int(rtx)] = index * 2 + 1
        }
    }

    /// The codecs of all accepted (port ≠ 0) media sections of a description, as that
    /// description numbers them. Works on an offer or an answer.
    public init(description: SessionDescription, codecs: [SFUCodec] = SFUCodec.allCases) throws(SDPError) {
        self.init()
        for section in description.media where !section.isRejected {
            let formats = try section.payloadFormats()
            for format in formats {
                guard let codec = codecs.first(where: { $0.matches(format) }) else { continue }
                let rtx = formats.first { $0.associatedPayloadType == format.payloadType }?.payloadType
                add(Entry(codec: codec, payloadType: format.payloadType, rtxPayloadType: codec.usesRTX ? rtx : nil))
            }
        }
    }

    public func payload(for payloadType: UInt8) -> Payload? {
        guard payloadType < 128 else { return nil }
        let slot = table[Int(payloadType)]
        guard slot >= 0 else { return nil }
        let codec = entries[Int(slot / 2)].codec
        return slot % 2 == 0 ? .media(codec) : .rtx(codec)
    }

    /// The first (preferred) payload type for a codec.
    public func payloadType(for codec: SFUCodec) -> UInt8? {
        entries.first { $0.codec == codec }?.payloadType
    }

    public func rtxPayloadType(for codec: SFUCodec) -> UInt8? {
        entries.first { $0.codec == codec }?.rtxPayloadType
    }

    /// The payload type to write when forwarding a packet numbered by this participant to a
    /// participant described by `other`; nil when `other` lacks the codec (or RTX for it).
    public func translate(_ payloadType: UInt8, to other: CodecMap) -> UInt8? {
        switch payload(for: payloadType) {
        case .media(let codec): return other.payloadType(for: codec)
        case .rtx(let codec): return other.rtxPayloadType(for: codec)
        case nil: return nil
        }
    }
}
