/// Hand-built packets with a Wireshark-style dissection beside every byte.
enum Fixtures {
    /// Chromium-shaped Opus packet (M=1 at talk spurt start) with the extensions Chrome
    /// negotiates for audio: 1 = ssrc-audio-level (RFC 6464), 2 = abs-send-time,
    /// 3 = transport-wide-cc sequence number, 4 = sdes:mid (RFC 8843).
    static let chromiumOpus: [UInt8] = [
        0x90,                   // V=2 P=0 X=1 CC=0
        0xEF,                   // M=1 PT=111 (opus/48000/2)
        0x1A, 0x2B,             // sequence number 6699
        0x5C, 0x3E, 0x0C, 0x80, // timestamp 1547570304
        0x2F, 0x6B, 0x3C, 0x4D, // SSRC 0x2f6b3c4d
        0xBE, 0xDE,             // RFC 8285 one-byte profile
        0x00, 0x03,             // extension length: 3 words (12 bytes)
        0x10, 0x9E,             //   id=1 L=0 (1 byte): audio level V=1, level=30 (-30 dBov)
        0x22, 0x12, 0x34, 0x56, //   id=2 L=2 (3 bytes): abs-send-time 0x123456 (6.18 fixed point)
        0x31, 0x00, 0x2A,       //   id=3 L=1 (2 bytes): transport-wide seq 42
        0x40, 0x30,             //   id=4 L=0 (1 byte): mid "0"
        0x00,                   //   padding to 32-bit boundary
        0x78, 0x0B, 0xE4, 0xC1, 0x36, 0xEC, 0xC5, 0x8D, // Opus payload: TOC 0x78 (config 15, stereo=0, 1 frame) + data
    ]

    /// Two-byte header extension form (RFC 8285 §4.3) with two CSRCs and padding.
    static let twoByteWithCSRCsAndPadding: [UInt8] = [
        0xB2,                   // V=2 P=1 X=1 CC=2
        0x60,                   // M=0 PT=96 (VP8)
        0xFF, 0xFF,             // sequence number 65535
        0x00, 0x00, 0x00, 0x01, // timestamp 1
        0x01, 0x02, 0x03, 0x04, // SSRC 0x01020304
        0xAA, 0xAA, 0xAA, 0xAA, // CSRC[0]
        0xBB, 0xBB, 0xBB, 0xBB, // CSRC[1]
        0x10, 0x00,             // RFC 8285 two-byte profile, appbits 0
        0x00, 0x02,             // extension length: 2 words (8 bytes)
        0x0F, 0x00,             //   id=15 L=0 (empty value, legal in two-byte form)
        0x11, 0x03, 0x61, 0x62, 0x63, //   id=17 L=3: "abc"
        0x00,                   //   padding
        0x01, 0x02, 0x03,       // payload
        0x00, 0x00, 0x03,       // padding: 3 octets, last one is the count
    ]

    /// RTCP compound as Chromium sends it on a receive-only audio transceiver:
    /// RR (1 report block) + SDES CNAME + PSFB REMB.
    static let chromiumRRSDESREMB: [UInt8] = [
        // --- Receiver Report ---
        0x81,                   // V=2 P=0 RC=1
        0xC9,                   // PT=201 RR
        0x00, 0x07,             // length 7 → 32 bytes
        0x7A, 0x3C, 0x1E, 0x05, // sender SSRC
        0x2F, 0x6B, 0x3C, 0x4D, //   block: source SSRC
        0x0A,                   //   fraction lost 10/256
        0x00, 0x00, 0x03,       //   cumulative lost 3
        0x00, 0x01, 0x1A, 0x2B, //   extended highest seq: cycle 1, seq 6699
        0x00, 0x00, 0x00, 0x1E, //   jitter 30
        0x8B, 0x5C, 0x12, 0x34, //   LSR
        0x00, 0x01, 0x00, 0x00, //   DLSR 1.0 s
        // --- Source Description ---
        0x81,                   // V=2 P=0 SC=1
        0xCA,                   // PT=202 SDES
        0x00, 0x06,             // length 6 → 28 bytes
        0x7A, 0x3C, 0x1E, 0x05, //   chunk SSRC
        0x01, 0x10,             //   CNAME, 16 bytes
        0x61, 0x62, 0x63, 0x64, 0x45, 0x46, 0x47, 0x48, // "abcdEFGH"
        0x69, 0x6A, 0x6B, 0x6C, 0x4D, 0x4E, 0x4F, 0x50, // "ijklMNOP"
        0x00, 0x00,             //   END item + padding to 32 bits
        // --- REMB (PSFB FMT=15) ---
        0x8F,                   // V=2 P=0 FMT=15
        0xCE,                   // PT=206 PSFB
        0x00, 0x05,             // length 5 → 24 bytes
        0x7A, 0x3C, 0x1E, 0x05, // sender SSRC
        0x00, 0x00, 0x00, 0x00, // media SSRC (unused, 0)
        0x52, 0x45, 0x4D, 0x42, // "REMB"
        0x01,                   // Num SSRC 1
        0x0E, 0xDC, 0x6C,       // BR Exp=3, Mantissa=187500 → 1 500 000 bit/s
        0x2F, 0x6B, 0x3C, 0x4D, // SSRC feedback
    ]

    /// SR with one report block, then BYE with a reason (padded).
    static let senderReportAndBye: [UInt8] = [
        0x81, 0xC8, 0x00, 0x0C, // V=2 RC=1 PT=200 SR, length 12 → 52 bytes
        0x2F, 0x6B, 0x3C, 0x4D, // sender SSRC
        0xE9, 0x4F, 0x3A, 0x10, // NTP seconds
        0x80, 0x00, 0x00, 0x00, // NTP fraction (0.5 s)
        0x5C, 0x3E, 0x0C, 0x80, // RTP timestamp
        0x00, 0x00, 0x01, 0xF4, // sender packet count 500
        0x00, 0x00, 0x9C, 0x40, // sender octet count 40000
        0x7A, 0x3C, 0x1E, 0x05, //   block: SSRC
        0x00,                   //   fraction lost 0
        0xFF, 0xFF, 0xFF,       //   cumulative lost -1 (duplicates)
        0x00, 0x00, 0x10, 0x00, //   extended highest seq 4096
        0x00, 0x00, 0x00, 0x05, //   jitter 5
        0x00, 0x00, 0x00, 0x00, //   LSR none
        0x00, 0x00, 0x00, 0x00, //   DLSR none
        0x81, 0xCB, 0x00, 0x03, // V=2 SC=1 PT=203 BYE, length 3 → 16 bytes
        0x2F, 0x6B, 0x3C, 0x4D, //   SSRC
        0x06, 0x6C, 0x65, 0x61, 0x76, 0x69, 0x6E, // reason length 6 "leavin"
        0x00,                   //   padding to 32 bits
    ]

    /// RTPFB NACK + PSFB PLI + PSFB FIR + RTPFB transport-cc + APP + an unknown PT 210.
    static let feedbackMix: [UInt8] = [
        0x81, 0xCD, 0x00, 0x04, // V=2 FMT=1 PT=205 RTPFB generic NACK, length 4 → 20 bytes
        0x7A, 0x3C, 0x1E, 0x05, //   sender SSRC
        0x2F, 0x6B, 0x3C, 0x4D, //   media SSRC
        0xFF, 0xFE, 0x00, 0x05, //   PID 65534, BLP 0b101 → 65534, 65535, 1 (wraps)
        0x00, 0x10, 0x80, 0x00, //   PID 16, BLP bit 15 → 16, 32
        0x81, 0xCE, 0x00, 0x02, // V=2 FMT=1 PT=206 PSFB PLI, length 2 → 12 bytes
        0x7A, 0x3C, 0x1E, 0x05, //   sender SSRC
        0x2F, 0x6B, 0x3C, 0x4D, //   media SSRC
        0x84, 0xCE, 0x00, 0x04, // V=2 FMT=4 PT=206 PSFB FIR, length 4 → 20 bytes
        0x7A, 0x3C, 0x1E, 0x05, //   sender SSRC
        0x00, 0x00, 0x00, 0x00, //   media SSRC 0 (RFC 5104 §4.3.1.2)
        0x2F, 0x6B, 0x3C, 0x4D, //   FCI: SSRC
        0x07, 0x00, 0x00, 0x00, //   FCI: command seq 7, reserved
        0x8F, 0xCD, 0x00, 0x05, // V=2 FMT=15 PT=205 transport-cc, length 5 → 24 bytes
        0x7A, 0x3C, 0x1E, 0x05, //   sender SSRC
        0x2F, 0x6B, 0x3C, 0x4D, //   media SSRC
        0x00, 0x2A, 0x00, 0x02, //   base seq 42, status count 2
        0x00, 0x01, 0x00, 0x00, //   reference time 1, fb pkt count 0
        0x20, 0x02, 0x04, 0x04, //   run-length chunk (2 × small delta), deltas 4, 4
        0x83, 0xCC, 0x00, 0x03, // V=2 subtype=3 PT=204 APP, length 3 → 16 bytes
        0x2F, 0x6B, 0x3C, 0x4D, //   SSRC
        0x71, 0x75, 0x61, 0x6B, //   name "quak"
        0xDE, 0xAD, 0xBE, 0xEF, //   application data
        0x85, 0xD2, 0x00, 0x01, // V=2 count=5 PT=210 (unknown), length 1 → 8 bytes
        0x01, 0x02, 0x03, 0x04, //   opaque body
    ]
}
