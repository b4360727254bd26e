import Foundation
@testable import Media
import SRTP

/// SSRCs of a synthetic publisher's audio + VP8 video (1–3 simulcast layers, each with RTX).
struct PublishedSSRCs {
    var audio: UInt32
    /// Lowest layer first (RFC 8853 SIM group order as Chromium sends it).
    var video: [UInt32]
    var rtx: [UInt32]

    /// Distinct SSRCs derived from `base` (the client's random audio SSRC).
    init(audio: UInt32, layers: Int) {
        self.audio = audio
        video = (0..<layers).map { audio &+ 100 &+ UInt32($0) }
        rtx = (0..<layers).map { audio &+ 200 &+ UInt32($0) }
    }
}

extension SyntheticClient {
    /// A Chromium-shaped offer with audio (mid 0, opus 111) and video (mid 1, VP8 96 + RTX 97
    /// with `nack`), SSRC-signaled simulcast (`a=ssrc-group:SIM`, RFC 5576 §4.2 + FID per
    /// layer) when `ssrcs.video` has more than one layer.
    func audioVideoOffer(_ ssrcs: PublishedSSRCs, direction: String = "sendrecv") -> String {
        let fp = certificate.sha256Fingerprint.sdpValue
        let account = member.account
        let transport = ["c=IN IP4 0.0.0.0", "a=ice-ufrag:\(ufrag)", "a=ice-pwd:\(password)", "a=fingerprint:\(fp)",
                         "a=setup:actpass"]
        var lines = ["v=0", "o=- 4611731400430051337 2 IN IP4 127.0.0.1", "s=-", "t=0 0", "a=group:BUNDLE 0 1",
                     "a=msid-semantic: WMS \(account)", "m=audio 9 UDP/TLS/RTP/SAVPF 111"] + transport + [
            "a=mid:0", "a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:mid",
            "a=extmap:3 http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01",
            "a=\(direction)", "a=msid:\(account) mic", "a=rtcp-mux", "a=rtcp-rsize",
            "a=rtpmap:111 opus/48000/2", "a=rtcp-fb:111 transport-cc", "a=fmtp:111 minptime=10;useinbandfec=1",
            "a=ssrc:\(ssrcs.audio) cname:\(account)", "a=ssrc:\(ssrcs.audio) msid:\(account) mic",
            "m=video 9 UDP/TLS/RTP/SAVPF 96 97"] + transport + [
            "a=mid:1", "a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:mid",
            "a=extmap:3 http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01",
            "a=\(direction)", "a=msid:\(account) cam", "a=rtcp-mux", "a=rtcp-rsize",
            "a=rtpmap:96 VP8/90000", "a=rtcp-fb:96 nack", "a=rtcp-fb:96 nack pli", "a=rtcp-fb:96 ccm fir",
            "a=rtcp-fb:96 transport-cc", "a=rtpmap:97 rtx/90000", "a=fmtp:97 apt=96"]
        if ssrcs.video.count > 1 { lines.append("a=ssrc-group:SIM " + ssrcs.video.map(String.init).joined(separator: " ")) }
        for (media, rtx) in zip(ssrcs.video, ssrcs.rtx) {
            lines.append("a=ssrc-group:FID \(media) \(rtx)")
        }
        for ssrc in zip(ssrcs.video, ssrcs.rtx).flatMap({ [$0.0, $0.1] }) {
            lines += ["a=ssrc:\(ssrc) cname:\(account)", "a=ssrc:\(ssrc) msid:\(account) cam"]
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }
}

/// Writes RTP packets of one stream into a caller buffer and SRTP-protects them in place
/// (no allocation per packet, so a load generator measures the server, not itself).
struct RTPStreamWriter {
    let ssrc: UInt32
    let payloadType: UInt8
    /// RTP clock ticks per packet (960 = 20 ms of Opus; 3,000 = one 30 fps VP8 frame).
    let timestampStep: UInt32
    var sequence: UInt16
    var timestamp: UInt32

    init(ssrc: UInt32, payloadType: UInt8, timestampStep: UInt32) {
        self.ssrc = ssrc
        self.payloadType = payloadType
        self.timestampStep = timestampStep
        sequence = UInt16(truncatingIfNeeded: ssrc)
        timestamp = ssrc &* 7
    }

    /// A 12-byte header, then `payload(body)` writes the payload; returns the protected length.
    mutating func write(into buffer: UnsafeMutableRawBufferPointer, payloadLength: Int, session: SRTPSession,
                        payload: (UnsafeMutableRawBufferPointer) -> Void) throws -> Int {
        sequence &+= 1
        timestamp &+= timestampStep
        buffer[0] = 0x80
        buffer[1] = payloadType
        buffer.storeBytes(of: sequence.bigEndian, toByteOffset: 2, as: UInt16.self)
        buffer.storeBytes(of: timestamp.bigEndian, toByteOffset: 4, as: UInt32.self)
        buffer.storeBytes(of: ssrc.bigEndian, toByteOffset: 8, as: UInt32.self)
        payload(UnsafeMutableRawBufferPointer(rebasing: buffer[12..<(12 + payloadLength)]))
        return try session.protectRTP(buffer, length: 12 + payloadLength)
    }
}

/// CLOCK_MONOTONIC in ns: the send stamp senders embed in payloads (issue 3 latency).
@inline(__always) func monotonicNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}
