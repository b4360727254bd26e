/// A header extension element to serialize.
public struct RTPHeaderExtension: Equatable, Sendable {
    /// Local identifier negotiated in SDP (`a=extmap`).
    public var id: UInt8
    /// Value bytes.
    public var value: [UInt8]

    public init(id: UInt8, value: [UInt8]) {
        self.id = id
        self.value = value
    }
}

/// Serializes an RTP packet (RFC 3550 §5.1) into a caller-provided buffer.
///
/// Extensions use the RFC 8285 one-byte form when every id is 1–14 and every value is
/// 1–16 bytes, otherwise the two-byte form (profile 0x1000); the block is zero-padded to
/// a 32-bit boundary.
public struct RTPPacketBuilder: Equatable, Sendable {
    public var marker: Bool
    public var payloadType: UInt8
    public var sequenceNumber: UInt16
    public var timestamp: UInt32
    public var ssrc: UInt32
    public var csrcs: [UInt32]
    public var extensions: [RTPHeaderExtension]
    /// Padding octets to append (0 = none; 1–255 sets P and the count octet).
    public var paddingLength: Int

    public init(
        marker: Bool = false, payloadType: UInt8, sequenceNumber: UInt16, timestamp: UInt32,
        ssrc: UInt32, csrcs: [UInt32] = [], extensions: [RTPHeaderExtension] = [],
        paddingLength: Int = 0
    ) {
        self.marker = marker
        self.payloadType = payloadType
        self.sequenceNumber = sequenceNumber
        self.timestamp = timestamp
        self.ssrc = ssrc
        self.csrcs = csrcs
        self.extensions = extensions
        self.paddingLength = paddingLength
    }

    var usesOneByteExtensions: Bool {
        extensions.allSatisfy { (1...14).contains($0.id) && (1...16).contains($0.value.count) }
    }

    /// Length of the extension block's data (after the 4-byte word), padded to 4.
    var extensionDataLength: Int {
        let perElement = usesOneByteExtensions ? 1 : 2
        let raw = extensions.reduce(0) { $0 + perElement + $1.value.count }
        return (raw + 3) & ~3
    }

    /// Header length including CSRCs and extension block.
    public var headerLength: Int {
        12 + 4 * csrcs.count + (extensions.isEmpty ? 0 : 4 + extensionDataLength)
    }

    /// Total bytes `write` produces for a payload of `payloadCount` bytes.
    public func encodedLength(payloadCount: Int) -> Int { headerLength + payloadCount + paddingLength }

    /// Writes header, `payload` and padding into `output`; returns the byte count.
    @discardableResult
    public func write(payload: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws(RTPError) -> Int {
        guard payloadType < 128, csrcs.count <= 15, (0...255).contains(paddingLength) else { throw .invalidField }
        let oneByte = usesOneByteExtensions
        for element in extensions {
            guard element.id != 0, element.value.count <= 255 else { throw .invalidField }
        }
        let total = encodedLength(payloadCount: payload.count)
        guard output.count >= total else { throw .bufferTooSmall }
        output[0] = 0x80 | (paddingLength > 0 ? 0x20 : 0) | (extensions.isEmpty ? 0 : 0x10) | UInt8(csrcs.count)
        output[1] = (marker ? 0x80 : 0) | payloadType
        output.storeBE16(sequenceNumber, at: 2)
        output.storeBE32(timestamp, at: 4)
        output.storeBE32(ssrc, at: 8)
        var offset = 12
        for csrc in csrcs {
            output.storeBE32(csrc, at: offset)
            offset += 4
        }
        if !extensions.isEmpty {
            let dataLength = extensionDataLength
            output.storeBE16(oneByte ? 0xBEDE : 0x1000, at: offset)
            output.storeBE16(UInt16(dataLength / 4), at: offset + 2)
            offset += 4
            let end = offset + dataLength
            for element in extensions {
                if oneByte {
                    output[offset] = element.id << 4 | UInt8(element.value.count - 1)
                    offset += 1
                } else {
                    output[offset] = element.id
                    output[offset + 1] = UInt8(element.value.count)
                    offset += 2
                }
                for byte in element.value {
                    output[offset] = byte
                    offset += 1
                }
            }
            while offset < end {
                output[offset] = 0
                offset += 1
            }
        }
        for index in 0..<payload.count { output[offset + index] = payload[index] }
        offset += payload.count
        if paddingLength > 0 {
            for index in 0..<(paddingLength - 1) { output[offset + index] = 0 }
            output[offset + paddingLength - 1] = UInt8(paddingLength)
            offset += paddingLength
        }
        return offset
    }

    /// Convenience: serializes into a fresh array (allocates; not for the hot path).
    public func serialize(payload: [UInt8]) throws(RTPError) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: encodedLength(payloadCount: payload.count))
        let result: Result<Int, RTPError> = payload.withUnsafeBytes { input in
            output.withUnsafeMutableBytes { out in
                do throws(RTPError) { return .success(try write(payload: input, into: out)) } catch { return .failure(error) }
            }
        }
        _ = try result.get()
        return output
    }
}
