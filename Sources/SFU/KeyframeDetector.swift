/// Detects whether an RTP payload starts a keyframe. Reads codec payload, so it needs the
/// payload unencrypted (no SFrame / insertable-streams E2EE) — see docs/rtcp.md.
public enum KeyframeDetector: Sendable, Equatable {
    case vp8
    case h264
    /// No detection (audio, unknown codecs): every packet counts as a switching point.
    case none

    init(codecName: String) {
        switch codecName.lowercased() {
        case "vp8": self = .vp8
        case "h264": self = .h264
        default: self = .none
        }
    }

    /// True when `payload` is the first packet of a keyframe.
    public func isKeyframeStart(_ payload: UnsafeRawBufferPointer) -> Bool {
        switch self {
        case .vp8: Self.isVP8KeyframeStart(payload)
        case .h264: Self.isH264KeyframeStart(payload)
        case .none: false
        }
    }

    /// RFC 7741 §4.2 payload descriptor, then §4.3 payload header:
    /// ```
    ///  descriptor: |X|R|N|S|R| PID |  [I|L|T|K|RSV]  [M|PictureID(7 or 15)]  [TL0PICIDX]  [TID|Y|KEYIDX]
    ///  header:     |Size0|H| VER |P|  ...   (P = 0: keyframe; only in the first partition's first packet)
    /// ```
    /// A keyframe starts where S = 1, PID = 0 and the header's P bit is 0.
    public static func isVP8KeyframeStart(_ payload: UnsafeRawBufferPointer) -> Bool {
        guard let offset = vp8HeaderOffset(payload) else { return false }
        return payload[offset] & 0x01 == 0  // P bit: 0 = keyframe
    }

    /// Picture size of a VP8 keyframe's first packet (RFC 6386 §9.1: 3-byte frame tag, start
    /// code 9D 01 2A, then 14-bit width and height, little-endian, 2 scaling bits each).
    public static func vp8KeyframeSize(_ payload: UnsafeRawBufferPointer) -> (width: Int, height: Int)? {
        guard let offset = vp8HeaderOffset(payload), payload.count >= offset + 10, payload[offset] & 0x01 == 0,
              payload[offset + 3] == 0x9D, payload[offset + 4] == 0x01, payload[offset + 5] == 0x2A else { return nil }
        let width = (Int(payload[offset + 6]) | Int(payload[offset + 7]) << 8) & 0x3FFF
        let height = (Int(payload[offset + 8]) | Int(payload[offset + 9]) << 8) & 0x3FFF
        return (width, height)
    }

    /// Where the VP8 payload header starts after the RFC 7741 descriptor, for the first
    /// packet of a frame (S = 1, PID = 0); nil otherwise.
    static func vp8HeaderOffset(_ payload: UnsafeRawBufferPointer) -> Int? {
        guard payload.count >= 1 else { return nil }
        let first = payload[0]
        guard first & 0x10 != 0, first & 0x07 == 0 else { return nil }  // S=1, PID=0
        var offset = 1
        if first & 0x80 != 0 {  // X
            guard payload.count > offset else { return nil }
            let extended = payload[offset]
            offset += 1
            if extended & 0x80 != 0 {  // I: PictureID, 15 bits when M is set
                guard payload.count > offset else { return nil }
                offset += payload[offset] & 0x80 != 0 ? 2 : 1
            }
            if extended & 0x40 != 0 { offset += 1 }  // L: TL0PICIDX
            if extended & 0x30 != 0 { offset += 1 }  // T or K: TID/Y/KEYIDX
        }
        guard payload.count > offset else { return nil }
        return offset
    }

    /// RFC 6184: single NAL unit types IDR (5) or SPS (7) (§5.6), STAP-A (24) containing one
    /// (§5.7.1), or FU-A (28) with the start bit over an IDR (§5.8).
    public static func isH264KeyframeStart(_ payload: UnsafeRawBufferPointer) -> Bool {
        guard payload.count >= 1 else { return false }
        let type = payload[0] & 0x1F
        switch type {
        case 5, 7: return true
        case 24:
            var offset = 1
            while offset + 2 < payload.count {
                let size = Int(payload[offset]) << 8 | Int(payload[offset + 1])
                let nal = payload[offset + 2] & 0x1F
                if nal == 5 || nal == 7 { return true }
                offset += 2 + size
            }
            return false
        case 28:
            guard payload.count >= 2 else { return false }
            return payload[1] & 0x80 != 0 && payload[1] & 0x1F == 5
        default: return false
        }
    }
}
