/// Synthetic VP8-shaped video: frames that carry a valid VP8 frame tag (and, for keyframes, the
/// start code and dimensions, RFC 6386 §9.1) followed by pseudo-random bytes, packetized with a
/// valid VP8 payload descriptor (RFC 7741 §4.2). Nobody can decode the picture, but everything
/// an SFU looks at — keyframe flag, picture id, start-of-partition, marker — is real, so
/// forwarding, keyframe requests and layer logic see what a browser sends.
///
/// Deterministic for a given seed (a 64-bit LCG, Knuth MMIX constants), so tests repeat.
public struct VP8Synthesizer: Sendable {
    /// Frames per keyframe (e.g. 50 at 25 fps = one keyframe every 2 s).
    public let keyframeInterval: Int
    public let width: UInt16
    public let height: UInt16
    public let keyframeBytes: Int
    public let deltaFrameBytes: Int
    /// Largest RTP payload (descriptor + VP8 data): 1100 keeps SRTP packets well under the
    /// 1200-byte WebRTC datagram budget with header extensions and the SRTP tag.
    public let maxPayloadBytes: Int
    public private(set) var pictureID: UInt16
    public private(set) var frameIndex = 0
    private var random: UInt64
    /// A keyframe was asked for (PLI/FIR): the next frame is one.
    private var keyframeRequested = false

    public static let defaultMaxPayloadBytes = 1100

    public init(keyframeInterval: Int = 50, width: UInt16 = 320, height: UInt16 = 240, keyframeBytes: Int = 6000,
                deltaFrameBytes: Int = 1200, maxPayloadBytes: Int = VP8Synthesizer.defaultMaxPayloadBytes,
                seed: UInt64 = 1) throws(PeerError) {
        guard keyframeInterval >= 1 else { throw .invalidParameter("keyframeInterval < 1") }
        guard width > 0, width < 1 << 14, height > 0, height < 1 << 14 else { throw .invalidParameter("dimensions") }
        guard keyframeBytes >= 10, deltaFrameBytes >= 3 else { throw .invalidParameter("frame sizes") }
        guard maxPayloadBytes > VP8PayloadDescriptor.encodedLength + 1 else { throw .invalidParameter("maxPayloadBytes") }
        self.keyframeInterval = keyframeInterval
        self.width = width
        self.height = height
        self.keyframeBytes = keyframeBytes
        self.deltaFrameBytes = deltaFrameBytes
        self.maxPayloadBytes = maxPayloadBytes
        self.random = seed
        self.pictureID = UInt16(truncatingIfNeeded: seed) & 0x7FFF
    }

    /// One frame's RTP payloads in order; the last one gets the RTP marker bit.
    /// Makes the next frame a keyframe (as an encoder does on PLI/FIR, RFC 4585 §6.3.1).
    public mutating func requestKeyframe() { keyframeRequested = true }

    public mutating func nextFramePayloads() -> (keyframe: Bool, payloads: [[UInt8]]) {
        let keyframe = frameIndex % keyframeInterval == 0 || keyframeRequested
        keyframeRequested = false
        let frame = makeFrame(keyframe: keyframe)
        let chunk = maxPayloadBytes - VP8PayloadDescriptor.encodedLength
        var payloads: [[UInt8]] = []
        var offset = 0
        while offset < frame.count {
            let end = min(frame.count, offset + chunk)
            let descriptor = VP8PayloadDescriptor(nonReference: false, startOfPartition: offset == 0,
                                                  partitionIndex: 0, pictureID: pictureID)
            payloads.append(descriptor.encoded + frame[offset..<end])
            offset = end
        }
        frameIndex += 1
        pictureID = (pictureID &+ 1) & 0x7FFF
        return (keyframe, payloads)
    }

    /// A VP8 frame: 3-byte frame tag (RFC 6386 §9.1), for keyframes the start code 9d 01 2a and
    /// 14-bit width/height with zero scaling, then pseudo-random data.
    mutating func makeFrame(keyframe: Bool) -> [UInt8] {
        let size = keyframe ? keyframeBytes : deltaFrameBytes
        let header = keyframe ? 10 : 3
        // First partition: claim the whole frame minus the header (a plausible size that fits).
        let partition = UInt32(min(size - header, (1 << 19) - 1))
        // Bit 0: inverse key frame flag (0 = key frame); bits 1–3 version 0; bit 4 show_frame;
        // bits 5–23 first partition size.
        let tag = (keyframe ? 0 : 1) | (1 << 4) | (partition << 5)
        var frame: [UInt8] = [UInt8(tag & 0xFF), UInt8((tag >> 8) & 0xFF), UInt8((tag >> 16) & 0xFF)]
        if keyframe {
            frame += [0x9D, 0x01, 0x2A, UInt8(width & 0xFF), UInt8(width >> 8), UInt8(height & 0xFF), UInt8(height >> 8)]
        }
        frame.reserveCapacity(size)
        while frame.count < size {
            random = random &* 6364136223846793005 &+ 1442695040888963407
            frame.append(UInt8(truncatingIfNeeded: random >> 33))
        }
        return frame
    }
}

/// The VP8 RTP payload descriptor (RFC 7741 §4.2) in the form WebRTC stacks send: X=1 with a
/// 15-bit PictureID (I=1, M=1), no TL0PICIDX/TID/KEYIDX. Parses any valid descriptor.
public struct VP8PayloadDescriptor: Sendable, Equatable {
    public var nonReference: Bool
    public var startOfPartition: Bool
    public var partitionIndex: UInt8
    public var pictureID: UInt16?
    /// Bytes the descriptor takes in the packet it was parsed from (or `encodedLength`).
    public var length: Int

    /// Length of the descriptor this type writes: 1 + X byte + 2 PictureID bytes.
    public static let encodedLength = 4

    public init(nonReference: Bool, startOfPartition: Bool, partitionIndex: UInt8, pictureID: UInt16) {
        self.nonReference = nonReference
        self.startOfPartition = startOfPartition
        self.partitionIndex = partitionIndex & 0x07
        self.pictureID = pictureID & 0x7FFF
        self.length = Self.encodedLength
    }

    public var encoded: [UInt8] {
        let first: UInt8 = 0x80 | (nonReference ? 0x20 : 0) | (startOfPartition ? 0x10 : 0) | (partitionIndex & 0x07)
        let id = (pictureID ?? 0) & 0x7FFF
        return [first, 0x80, 0x80 | UInt8(id >> 8), UInt8(id & 0xFF)]
    }

    /// Parses the descriptor at the start of an RTP payload; nil when truncated.
    public init?(parsing payload: UnsafeRawBufferPointer) {
        guard payload.count >= 1 else { return nil }
        let first = payload[0]
        nonReference = first & 0x20 != 0
        startOfPartition = first & 0x10 != 0
        partitionIndex = first & 0x07
        pictureID = nil
        var offset = 1
        if first & 0x80 != 0 {
            guard payload.count > offset else { return nil }
            let x = payload[offset]
            offset += 1
            if x & 0x80 != 0 {  // I: PictureID
                guard payload.count > offset else { return nil }
                if payload[offset] & 0x80 != 0 {
                    guard payload.count > offset + 1 else { return nil }
                    pictureID = UInt16(payload[offset] & 0x7F) << 8 | UInt16(payload[offset + 1])
                    offset += 2
                } else {
                    pictureID = UInt16(payload[offset])
                    offset += 1
                }
            }
            if x & 0x40 != 0 { offset += 1 }  // L: TL0PICIDX
            if x & 0x30 != 0 { offset += 1 }  // T or K: TID/Y/KEYIDX byte
        }
        guard offset <= payload.count else { return nil }
        length = offset
    }

    /// Whether the payload starts a keyframe: start of partition 0 and the frame tag's inverse
    /// key frame bit clear (RFC 7741 §4.3).
    public static func isKeyframeStart(_ payload: UnsafeRawBufferPointer) -> Bool {
        guard let descriptor = VP8PayloadDescriptor(parsing: payload), descriptor.startOfPartition,
              descriptor.partitionIndex == 0, payload.count > descriptor.length else { return false }
        return payload[descriptor.length] & 0x01 == 0
    }
}
