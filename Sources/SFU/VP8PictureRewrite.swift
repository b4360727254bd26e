/// The VP8 payload descriptor fields a receiver's frame reference finder keys on (RFC 7741
/// §4.2), and their rewrite so that one subscriber sees one continuous picture sequence
/// across simulcast layer switches.
///
/// ```
///       0 1 2 3 4 5 6 7
///      +-+-+-+-+-+-+-+-+
///      |X|R|N|S|R| PID | (REQUIRED)
///      +-+-+-+-+-+-+-+-+
/// X:   |I|L|T|K| RSV   | (OPTIONAL)
///      +-+-+-+-+-+-+-+-+
/// I:   |M| PictureID   | (OPTIONAL: 7 bits, or 15 with M and the next octet)
///      +-+-+-+-+-+-+-+-+
/// L:   |   TL0PICIDX   | (OPTIONAL)
///      +-+-+-+-+-+-+-+-+
/// T/K: |TID|Y| KEYIDX  | (OPTIONAL)
///      +-+-+-+-+-+-+-+-+
/// ```
///
/// Why: each simulcast layer numbers its pictures (and its base-layer pictures, TL0PICIDX)
/// on its own. libwebrtc's `RtpVp8RefFinder` remembers picture ids it has not received; after
/// a switch to a layer whose ids run behind the old one's, the new layer's frames reach
/// those ids and are stashed as waiting for them — nothing decodes until the receiver's 3 s
/// timeout asks for a keyframe (seen end to end: framesReceived stuck for 3.4–3.7 s after
/// an up-switch while every packet arrived). Janus, mediasoup and LiveKit rewrite both
/// fields for the same reason.
struct VP8PictureFields: Equatable {
    /// 7 or 15 bits.
    var pictureID: UInt16
    /// M bit: `pictureID` has 15 bits.
    var wide: Bool
    var tl0PicIdx: UInt8?

    init(pictureID: UInt16, wide: Bool, tl0PicIdx: UInt8?) {
        self.pictureID = pictureID
        self.wide = wide
        self.tl0PicIdx = tl0PicIdx
    }

    /// Nil when the descriptor carries no PictureID (nothing to keep continuous) or is cut short.
    init?(payload: UnsafeRawBufferPointer) {
        guard let layout = Self.layout(payload) else { return nil }
        let high = payload[layout.pictureID]
        wide = high & 0x80 != 0
        pictureID = wide ? UInt16(high & 0x7F) << 8 | UInt16(payload[layout.pictureID + 1]) : UInt16(high & 0x7F)
        tl0PicIdx = layout.tl0.map { payload[$0] }
    }

    /// Offsets of the PictureID's first octet and of TL0PICIDX in `payload`.
    static func layout(_ payload: UnsafeRawBufferPointer) -> (pictureID: Int, tl0: Int?)? {
        guard payload.count >= 3, payload[0] & 0x80 != 0 else { return nil }   // X
        let extended = payload[1]
        guard extended & 0x80 != 0 else { return nil }                          // I
        let wide = payload[2] & 0x80 != 0
        let next = wide ? 4 : 3                                                 // after the PictureID
        guard payload.count >= next else { return nil }
        guard extended & 0x40 != 0 else { return (2, nil) }                     // L
        guard payload.count > next else { return nil }
        return (2, next)
    }

    /// Adds the deltas to the PictureID (mod 2^15, or 2^7 for a 7-bit one) and TL0PICIDX
    /// (mod 2^8) of the descriptor at the start of `payload`, in place.
    static func rewrite(_ payload: UnsafeMutableRawBufferPointer, pictureIDDelta: UInt16, tl0Delta: UInt8) {
        guard let layout = layout(UnsafeRawBufferPointer(payload)) else { return }
        let high = payload[layout.pictureID]
        if high & 0x80 != 0 {
            let value = (UInt16(high & 0x7F) << 8 | UInt16(payload[layout.pictureID + 1])) &+ pictureIDDelta
            payload[layout.pictureID] = 0x80 | UInt8(truncatingIfNeeded: value >> 8) & 0x7F
            payload[layout.pictureID + 1] = UInt8(truncatingIfNeeded: value)
        } else {
            payload[layout.pictureID] = UInt8(truncatingIfNeeded: UInt16(high) &+ pictureIDDelta) & 0x7F
        }
        if let tl0 = layout.tl0 { payload[tl0] = payload[tl0] &+ tl0Delta }
    }
}

/// One subscription's PictureID / TL0PICIDX continuity (`VP8PictureFields`): on a source
/// switch the new source's first picture continues one past the last one sent, and every
/// later packet of it keeps its own spacing (gaps stay gaps: a picture really lost).
struct VP8PictureRewriter: Equatable {
    private(set) var pictureIDDelta: UInt16 = 0
    private(set) var tl0Delta: UInt8 = 0
    /// Newest output values (15-bit serial order for the PictureID).
    private var lastPictureID: UInt16?
    private var lastTL0: UInt8?

    /// The packet starts a new source (a layer switch or a resume): continue after the last
    /// picture sent. A repeat of the picture already sent last (a source whose first packet
    /// is the rest of a picture) would need the same id, which cannot be known here: one past.
    mutating func startSource(_ fields: VP8PictureFields) {
        if let lastPictureID {
            pictureIDDelta = (lastPictureID &+ 1) &- fields.pictureID
        }
        if let lastTL0, let tl0 = fields.tl0PicIdx {
            tl0Delta = (lastTL0 &+ 1) &- tl0
        }
    }

    /// Records the output values of a forwarded packet.
    mutating func sent(_ fields: VP8PictureFields) {
        let mask: UInt16 = fields.wide ? 0x7FFF : 0x7F
        let output = (fields.pictureID &+ pictureIDDelta) & mask
        if let last = lastPictureID {
            let ahead = (output &- last) & mask
            if ahead != 0, ahead <= mask / 2 { lastPictureID = output }
        } else {
            lastPictureID = output
        }
        if let tl0 = fields.tl0PicIdx {
            let out = tl0 &+ tl0Delta
            if let last = lastTL0 {
                let ahead = out &- last
                if ahead != 0, ahead < 0x80 { lastTL0 = out }
            } else {
                lastTL0 = out
            }
        }
    }
}
