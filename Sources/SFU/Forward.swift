import RTP

/// How header extensions change between the publisher leg and one subscriber leg: which
/// ids to keep (remapped) and which to write fresh. Plain values only (no references), so
/// filling a `Forward` costs no reference counting.
public struct ExtensionRewrite: Equatable, Sendable {
    /// Publisher-side ids of extensions that are forwarded.
    public var sourceAudioLevel: UInt8 = 0
    public var sourceAbsSendTime: UInt8 = 0
    /// Subscriber-side ids (0 = not negotiated: not written).
    public var audioLevel: UInt8 = 0
    public var absSendTime: UInt8 = 0
    public var mid: UInt8 = 0
    public var transportCC: UInt8 = 0
    /// The subscriber's mid for this track (written when `mid` != 0 and non-empty).
    public var midValue = InlineBytes16()

    public init() {}
}

/// One forwarding decision: send the current packet to `subscriber` with these header values.
public struct Forward: Equatable, Sendable {
    public let subscriber: ParticipantID
    public let ssrc: UInt32
    public let sequenceNumber: UInt16
    public let timestamp: UInt32
    public let payloadType: UInt8
    public let extensions: ExtensionRewrite
    /// VP8: add these to the descriptor's PictureID and TL0PICIDX (`VP8PictureFields`).
    public var rewritesVP8 = false
    public var vp8PictureIDDelta: UInt16 = 0
    public var vp8TL0Delta: UInt8 = 0
}

/// Caller-owned, fixed-capacity output of `Router.handleRTP`. Reused across packets: storage
/// is reserved once in `init`, and `handleRTP` resets it, so the hot path does not allocate.
/// Decisions beyond `capacity` are dropped and counted in `overflowed`.
public struct ForwardingBatch {
    public private(set) var forwards: [Forward]
    public let capacity: Int
    /// Decisions dropped because the batch was full (cumulative).
    public private(set) var overflowed = 0
    /// The packet the decisions refer to; valid only while the caller's input buffer is.
    public private(set) var source: RTPPacketView?

    public init(capacity: Int) {
        self.capacity = max(capacity, 1)
        forwards = []
        forwards.reserveCapacity(self.capacity)
    }

    public var count: Int { forwards.count }
    public var isEmpty: Bool { forwards.isEmpty }
    public subscript(index: Int) -> Forward { forwards[index] }

    mutating func reset(source: RTPPacketView?) {
        forwards.removeAll(keepingCapacity: true)
        self.source = source
    }

    mutating func append(_ forward: Forward) {
        guard forwards.count < capacity else { overflowed += 1; return }
        forwards.append(forward)
    }

    /// Writes the packet for decision `index` into `output` (header rewritten: SSRC,
    /// sequence number, timestamp, payload type, extensions remapped; CSRCs, payload and
    /// padding copied). Leave room after it for the SRTP tag. Returns the byte count.
    /// - Parameter transportSequenceNumber: this subscriber transport's next transport-wide
    ///   sequence number, written when the subscriber negotiated transport-cc.
    public func write(_ index: Int, into output: UnsafeMutableRawBufferPointer, transportSequenceNumber: UInt16? = nil) throws(RTPError) -> Int {
        guard let source, index >= 0, index < forwards.count else { throw .invalidField }
        return try forwards[index].write(from: source, into: output, transportSequenceNumber: transportSequenceNumber)
    }
}

extension Forward {
    /// See `ForwardingBatch.write`.
    public func write(from packet: RTPPacketView, into output: UnsafeMutableRawBufferPointer, transportSequenceNumber: UInt16? = nil) throws(RTPError) -> Int {
        let input = packet.buffer
        let rewrite = extensions
        let tccID = transportSequenceNumber == nil ? 0 : rewrite.transportCC
        let midID = rewrite.midValue.count == 0 ? 0 : rewrite.mid
        if let written = try writeOneByteFast(packet, into: output, midID: midID, tccID: tccID, transportSequenceNumber: transportSequenceNumber ?? 0) {
            return written
        }
        // Pass 1: size the extension block and choose the RFC 8285 form.
        var elementCount = 0
        var valueBytes = 0
        var oneByte = true
        func consider(_ id: UInt8, _ length: Int) {
            elementCount += 1
            valueBytes += length
            if id > 14 || length < 1 || length > 16 { oneByte = false }
        }
        for element in packet.headerExtensions {
            if let id = mappedID(element.id) { consider(id, element.valueRange.count) }
        }
        if midID != 0 { consider(midID, rewrite.midValue.count) }
        if tccID != 0 { consider(tccID, 2) }
        let extensionData = elementCount == 0 ? 0 : (valueBytes + elementCount * (oneByte ? 1 : 2) + 3) & ~3
        let csrcBytes = 4 * packet.csrcCount
        let tailStart = packet.payloadRange.lowerBound
        let tailCount = input.count - tailStart  // payload + padding
        let total = 12 + csrcBytes + (elementCount == 0 ? 0 : 4 + extensionData) + tailCount
        guard output.count >= total else { throw .bufferTooSmall }

        // Pass 2: write.
        output[0] = (input[0] & 0xEF) | (elementCount == 0 ? 0 : 0x10)  // keep V, P, CC; set X
        output[1] = (input[1] & 0x80) | (payloadType & 0x7F)
        output[2] = UInt8(truncatingIfNeeded: sequenceNumber >> 8)
        output[3] = UInt8(truncatingIfNeeded: sequenceNumber)
        store32(timestamp, output, 4)
        store32(ssrc, output, 8)
        var offset = 12
        for index in 0..<csrcBytes { output[offset + index] = input[12 + index] }
        offset += csrcBytes
        if elementCount != 0 {
            output[offset] = oneByte ? 0xBE : 0x10
            output[offset + 1] = oneByte ? 0xDE : 0x00
            output[offset + 2] = UInt8(truncatingIfNeeded: (extensionData / 4) >> 8)
            output[offset + 3] = UInt8(truncatingIfNeeded: extensionData / 4)
            offset += 4
            let end = offset + extensionData
            func header(_ id: UInt8, _ length: Int) {
                if oneByte {
                    output[offset] = id << 4 | UInt8(length - 1)
                    offset += 1
                } else {
                    output[offset] = id
                    output[offset + 1] = UInt8(length)
                    offset += 2
                }
            }
            for element in packet.headerExtensions {
                guard let id = mappedID(element.id) else { continue }
                header(id, element.valueRange.count)
                for position in element.valueRange {
                    output[offset] = input[position]
                    offset += 1
                }
            }
            if midID != 0 {
                header(midID, rewrite.midValue.count)
                for index in 0..<rewrite.midValue.count { output[offset + index] = rewrite.midValue[index] }
                offset += rewrite.midValue.count
            }
            if tccID != 0, let transportSequenceNumber {
                header(tccID, 2)
                output[offset] = UInt8(truncatingIfNeeded: transportSequenceNumber >> 8)
                output[offset + 1] = UInt8(truncatingIfNeeded: transportSequenceNumber)
                offset += 2
            }
            while offset < end {
                output[offset] = 0
                offset += 1
            }
        }
        if tailCount > 0 {
            let tail = UnsafeMutableRawBufferPointer(rebasing: output[offset..<(offset + tailCount)])
            tail.copyMemory(from: UnsafeRawBufferPointer(rebasing: input[tailStart...]))
            if rewritesVP8 { VP8PictureFields.rewrite(tail, pictureIDDelta: vp8PictureIDDelta, tl0Delta: vp8TL0Delta) }
        }
        return offset + tailCount
    }

    /// Single-pass writer for the common case: the input uses the RFC 8285 one-byte form (or
    /// has no extension) and every subscriber id fits it (≤ 14). Nil when not applicable.
    @inline(__always)
    private func writeOneByteFast(_ packet: RTPPacketView, into output: UnsafeMutableRawBufferPointer, midID: UInt8, tccID: UInt8, transportSequenceNumber: UInt16) throws(RTPError) -> Int? {
        let rewrite = extensions
        guard rewrite.audioLevel <= 14, rewrite.absSendTime <= 14, midID <= 14, tccID <= 14 else { return nil }
        let input = packet.buffer
        let source = packet.extensionDataRange
        guard source.isEmpty || packet.extensionProfile == 0xBEDE else { return nil }
        let csrcBytes = 4 * packet.csrcCount
        let tailStart = packet.payloadRange.lowerBound
        let tailCount = input.count - tailStart
        // Upper bound of the output: mapped elements are never longer than the input ones.
        let maxExtension = source.count + 4 + (midID == 0 ? 0 : 1 + rewrite.midValue.count) + (tccID == 0 ? 0 : 3) + 3
        guard output.count >= 12 + csrcBytes + maxExtension + tailCount else { return nil }
        output[1] = (input[1] & 0x80) | (payloadType & 0x7F)
        output[2] = UInt8(truncatingIfNeeded: sequenceNumber >> 8)
        output[3] = UInt8(truncatingIfNeeded: sequenceNumber)
        store32(timestamp, output, 4)
        store32(ssrc, output, 8)
        var offset = 12
        for index in 0..<csrcBytes { output[offset + index] = input[12 + index] }
        offset += csrcBytes
        let blockStart = offset
        offset += 4
        var position = source.lowerBound
        while position < source.upperBound {
            let first = input[position]
            if first == 0 { position += 1; continue }
            let id = first >> 4
            if id == 15 { break }
            let length = Int(first & 0x0F) + 1
            let target: UInt8 = id == rewrite.sourceAudioLevel ? rewrite.audioLevel : id == rewrite.sourceAbsSendTime ? rewrite.absSendTime : 0
            if target != 0 {
                output[offset] = target << 4 | (first & 0x0F)
                for index in 1...length { output[offset + index] = input[position + index] }
                offset += 1 + length
            }
            position += 1 + length
        }
        if midID != 0 {
            output[offset] = midID << 4 | UInt8(rewrite.midValue.count - 1)
            for index in 0..<rewrite.midValue.count { output[offset + 1 + index] = rewrite.midValue[index] }
            offset += 1 + rewrite.midValue.count
        }
        if tccID != 0 {
            output[offset] = tccID << 4 | 1
            output[offset + 1] = UInt8(truncatingIfNeeded: transportSequenceNumber >> 8)
            output[offset + 2] = UInt8(truncatingIfNeeded: transportSequenceNumber)
            offset += 3
        }
        if offset == blockStart + 4 {
            offset = blockStart  // nothing to carry: no extension block
            output[0] = input[0] & 0xEF
        } else {
            while (offset - blockStart) % 4 != 0 { output[offset] = 0; offset += 1 }
            let words = (offset - blockStart - 4) / 4
            output[blockStart] = 0xBE
            output[blockStart + 1] = 0xDE
            output[blockStart + 2] = UInt8(truncatingIfNeeded: words >> 8)
            output[blockStart + 3] = UInt8(truncatingIfNeeded: words)
            output[0] = input[0] | 0x10
        }
        if tailCount > 0 {
            let tail = UnsafeMutableRawBufferPointer(rebasing: output[offset..<(offset + tailCount)])
            tail.copyMemory(from: UnsafeRawBufferPointer(rebasing: input[tailStart...]))
            if rewritesVP8 { VP8PictureFields.rewrite(tail, pictureIDDelta: vp8PictureIDDelta, tl0Delta: vp8TL0Delta) }
        }
        return offset + tailCount
    }

    /// Subscriber id for a publisher-side extension id, nil when the element is dropped.
    private func mappedID(_ id: UInt8) -> UInt8? {
        let rewrite = extensions
        if id == rewrite.sourceAudioLevel, rewrite.audioLevel != 0 { return rewrite.audioLevel }
        if id == rewrite.sourceAbsSendTime, rewrite.absSendTime != 0 { return rewrite.absSendTime }
        return nil
    }
}

@inline(__always)
private func store32(_ value: UInt32, _ buffer: UnsafeMutableRawBufferPointer, _ offset: Int) {
    buffer[offset] = UInt8(truncatingIfNeeded: value >> 24)
    buffer[offset + 1] = UInt8(truncatingIfNeeded: value >> 16)
    buffer[offset + 2] = UInt8(truncatingIfNeeded: value >> 8)
    buffer[offset + 3] = UInt8(truncatingIfNeeded: value)
}
