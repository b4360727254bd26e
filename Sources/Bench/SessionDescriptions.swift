/// Realistic SDP bodies (RFC 8866) of about 3 KB, shaped like a browser's audio+video
/// offer/answer (RFC 8829 JSEP), so that frame sizes and SQLite row sizes match real calls.
enum SessionDescriptions {
    /// An offer with `a=ice-ufrag:` (RFC 8839 §5.4); `ufrag` must be 4–256 ice-chars.
    static func offer(ufrag: String, sessionID: Int) -> String {
        body(ufrag: ufrag, sessionID: sessionID, setup: "actpass", extraCodecs: true)
    }

    static func answer(ufrag: String, sessionID: Int) -> String {
        body(ufrag: ufrag, sessionID: sessionID, setup: "active", extraCodecs: false)
    }

    /// `text` as the inside of a JSON string (RFC 8259 §7): SDP lines end in CRLF.
    static func jsonEscaped(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count + text.utf8.count / 16)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\r": out += "\\r"
            case "\n": out += "\\n"
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    private static func body(ufrag: String, sessionID: Int, setup: String, extraCodecs: Bool) -> String {
        let fingerprint = "sha-256 4A:AD:B9:B1:3F:82:18:3B:54:02:12:DF:3E:5D:49:6B:19:E5:7C:AB:4F:3D:E1:73:85:F4:B2:3C:1E:20:89:6D"
        var lines = [
            "v=0",
            "o=- \(4_611_731_400_430_051_000 + sessionID) 2 IN IP4 127.0.0.1",
            "s=-",
            "t=0 0",
            "a=group:BUNDLE 0 1",
            "a=extmap-allow-mixed",
            "a=msid-semantic: WMS stream-\(sessionID)",
            "m=audio 9 UDP/TLS/RTP/SAVPF 111 63 9 0 8 13 110 126",
            "c=IN IP4 0.0.0.0",
            "a=rtcp:9 IN IP4 0.0.0.0",
            "a=ice-ufrag:\(ufrag)",
            "a=ice-pwd:asd88fgpdd777uzjYhagZg0Xq7L3UeB2",
            "a=ice-options:trickle",
            "a=fingerprint:\(fingerprint)",
            "a=setup:\(setup)",
            "a=mid:0",
            "a=extmap:1 urn:ietf:params:rtp-hdrext:ssrc-audio-level",
            "a=extmap:2 http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time",
            "a=extmap:3 http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01",
            "a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:mid",
            "a=sendrecv",
            "a=msid:stream-\(sessionID) audio-\(sessionID)",
            "a=rtcp-mux",
            "a=rtpmap:111 opus/48000/2",
            "a=rtcp-fb:111 transport-cc",
            "a=fmtp:111 minptime=10;useinbandfec=1",
            "a=rtpmap:63 red/48000/2",
            "a=fmtp:63 111/111",
            "a=rtpmap:9 G722/8000",
            "a=rtpmap:0 PCMU/8000",
            "a=rtpmap:8 PCMA/8000",
            "a=rtpmap:13 CN/8000",
            "a=rtpmap:110 telephone-event/48000",
            "a=rtpmap:126 telephone-event/8000",
            "a=ssrc:\(1_000_000 + sessionID) cname:bench\(sessionID)",
            "a=ssrc:\(1_000_000 + sessionID) msid:stream-\(sessionID) audio-\(sessionID)",
            "m=video 9 UDP/TLS/RTP/SAVPF 96 97 102 103 104 105 106 107 108 109 127 125",
            "c=IN IP4 0.0.0.0",
            "a=rtcp:9 IN IP4 0.0.0.0",
            "a=ice-ufrag:\(ufrag)",
            "a=ice-pwd:asd88fgpdd777uzjYhagZg0Xq7L3UeB2",
            "a=ice-options:trickle",
            "a=fingerprint:\(fingerprint)",
            "a=setup:\(setup)",
            "a=mid:1",
            "a=extmap:14 urn:ietf:params:rtp-hdrext:toffset",
            "a=extmap:2 http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time",
            "a=extmap:13 urn:3gpp:video-orientation",
            "a=extmap:3 http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01",
            "a=extmap:5 http://www.webrtc.org/experiments/rtp-hdrext/playout-delay",
            "a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:mid",
            "a=sendrecv",
            "a=msid:stream-\(sessionID) video-\(sessionID)",
            "a=rtcp-mux",
            "a=rtcp-rsize",
            "a=rtpmap:96 VP8/90000",
            "a=rtcp-fb:96 goog-remb",
            "a=rtcp-fb:96 transport-cc",
            "a=rtcp-fb:96 ccm fir",
            "a=rtcp-fb:96 nack",
            "a=rtcp-fb:96 nack pli",
            "a=rtpmap:97 rtx/90000",
            "a=fmtp:97 apt=96",
            "a=rtpmap:102 H264/90000",
            "a=rtcp-fb:102 goog-remb",
            "a=rtcp-fb:102 transport-cc",
            "a=rtcp-fb:102 ccm fir",
            "a=rtcp-fb:102 nack",
            "a=rtcp-fb:102 nack pli",
            "a=fmtp:102 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42001f",
            "a=rtpmap:103 rtx/90000",
            "a=fmtp:103 apt=102",
        ]
        if extraCodecs {
            lines += [
                "a=rtpmap:104 H264/90000",
                "a=rtcp-fb:104 goog-remb",
                "a=rtcp-fb:104 transport-cc",
                "a=rtcp-fb:104 ccm fir",
                "a=rtcp-fb:104 nack",
                "a=rtcp-fb:104 nack pli",
                "a=fmtp:104 level-asymmetry-allowed=1;packetization-mode=0;profile-level-id=42001f",
                "a=rtpmap:105 rtx/90000",
                "a=fmtp:105 apt=104",
                "a=rtpmap:106 VP9/90000",
                "a=rtcp-fb:106 goog-remb",
                "a=rtcp-fb:106 transport-cc",
                "a=rtcp-fb:106 nack pli",
                "a=fmtp:106 profile-id=0",
                "a=rtpmap:107 rtx/90000",
                "a=fmtp:107 apt=106",
                "a=rtpmap:108 AV1/90000",
                "a=rtcp-fb:108 transport-cc",
                "a=rtcp-fb:108 nack pli",
                "a=rtpmap:109 rtx/90000",
                "a=fmtp:109 apt=108",
                "a=rtpmap:127 red/90000",
                "a=rtpmap:125 ulpfec/90000",
            ]
        }
        lines += [
            "a=ssrc-group:FID \(2_000_000 + sessionID) \(3_000_000 + sessionID)",
            "a=ssrc:\(2_000_000 + sessionID) cname:bench\(sessionID)",
            "a=ssrc:\(2_000_000 + sessionID) msid:stream-\(sessionID) video-\(sessionID)",
            "a=ssrc:\(3_000_000 + sessionID) cname:bench\(sessionID)",
            "a=ssrc:\(3_000_000 + sessionID) msid:stream-\(sessionID) video-\(sessionID)",
        ]
        return lines.joined(separator: "\r\n") + "\r\n"
    }
}
