import Foundation
import NetEmu
import XCTest

/// In-page logs of one received video, for diagnosing freezes that getStats reports but
/// 200 ms polls of framesDecoded do not show: the page samples the inbound-rtp stats every
/// 50 ms and records every frame the `<video>` element presents (requestVideoFrameCallback,
/// https://wicg.github.io/video-rvfc/), both on the page's clock (performance.now, ms).
extension BrowserSimulcastCapTests {
    /// Starts both logs on `page` for the remote stream `stream` (`account/device`).
    func startFrameLog(_ page: ChromiumPage, stream: String) throws {
        let escaped = stream.replacingOccurrences(of: "'", with: "\\'")
        print("frame log started:", try page.evaluate("""
            (() => {
              const sb = window.switchboard, pc = sb._roomPC;
              const log = window.__frameLog = [], shown = window.__framesShown = [];
              const video = document.querySelector('.tile[data-id="room:\(escaped)"] video');
              if (video && video.requestVideoFrameCallback) {
                const cb = (now, meta) => { shown.push([Math.round(now), meta.presentedFrames, meta.height]);
                                            video.requestVideoFrameCallback(cb); };
                video.requestVideoFrameCallback(cb);
              }
              window.__frameLogTimer = setInterval(async () => {
                const r = await pc.getStats(); const t = Math.round(performance.now());
                r.forEach(s => { if (s.type === 'inbound-rtp' && s.kind === 'video' && sb.streamOfMid[s.mid] === '\(escaped)')
                  log.push([t, s.packetsReceived || 0, s.framesReceived || 0, s.framesDecoded || 0, s.framesDropped || 0,
                            s.keyFramesDecoded || 0, s.freezeCount || 0, +(s.totalFreezesDuration || 0).toFixed(3),
                            s.pauseCount || 0, +(s.totalPausesDuration || 0).toFixed(3),
                            s.jitterBufferDelay || 0, s.jitterBufferTargetDelay || 0, s.jitterBufferEmittedCount || 0,
                            s.frameHeight || 0, s.nackCount || 0, s.pliCount || 0, s.packetsLost || 0,
                            video ? video.getVideoPlaybackQuality().totalVideoFrames : -1,
                            video ? video.getVideoPlaybackQuality().droppedVideoFrames : -1,
                            video ? Math.round(video.currentTime * 1000) : -1]); });
              }, 50);
              return video ? 'video ' + video.readyState + ' ' + video.paused : 'no video';
            })()
            """) ?? "nil")
    }

    /// The page's clock now (ms), to line the logs up with an event of the test.
    func pageClock(_ page: ChromiumPage) -> Double {
        ((try? page.evaluate("performance.now()")) as? NSNumber)?.doubleValue ?? 0
    }

    /// Stops both logs and renders them relative to `origin` (page ms): every presentation
    /// gap over 250 ms, and the stats samples from 1 s before to 1 s after each gap and each
    /// new getStats freeze.
    func frameLogReport(_ page: ChromiumPage, origin: Double) -> String {
        guard let value = try? page.evaluate("clearInterval(window.__frameLogTimer); JSON.stringify([window.__frameLog, window.__framesShown])") as? String,
              let data = value.data(using: .utf8),
              let both = try? JSONSerialization.jsonObject(with: data) as? [[[Double]]], both.count == 2 else {
            return "frame log: unavailable"
        }
        let (samples, shown) = (both[0], both[1])
        func at(_ t: Double) -> String { String(format: "%+7.2f s", (t - origin) / 1000) }
        var lines = ["frame log (page clock, s since the cap): \(shown.count) frames presented, \(samples.count) stats samples"]
        var windows: [(Double, Double)] = []
        for (previous, next) in zip(shown, shown.dropFirst()) where next[0] - previous[0] > 250 {
            lines.append("presentation gap \(at(previous[0])) → \(at(next[0])): \(Int(next[0] - previous[0])) ms, "
                + "presented \(Int(previous[1]))→\(Int(next[1])), height \(Int(previous[2]))→\(Int(next[2]))")
            windows.append((previous[0] - 1000, next[0] + 1000))
        }
        for (previous, next) in zip(samples, samples.dropFirst()) where next[6] > previous[6] {
            lines.append("getStats freeze +\(Int(next[6] - previous[6])) (+\(String(format: "%.3f", next[7] - previous[7])) s) seen at \(at(next[0]))")
            windows.append((next[0] - 1000 - (next[7] - previous[7]) * 1000, next[0] + 1000))
        }
        lines.append("t | packets framesReceived framesDecoded framesDropped keyframes | freezes freezeSec pauses pauseSec "
            + "| jitter buffer delay / target ms of the frames emitted since the previous sample (count) | height nack pli lost "
            + "| <video> frames shown, dropped, currentTime ms")
        var printed = Set<Int>()
        for (index, s) in samples.enumerated() where s.count >= 20 && windows.contains(where: { s[0] >= $0.0 && s[0] <= $0.1 }) {
            printed.insert(index)
            if index > 0, !printed.contains(index - 1) { lines.append("…") }
            let p = index > 0 ? samples[index - 1] : s
            let emitted = s[12] - p[12]
            let jitter = emitted > 0 ? String(format: "%.0f / %.0f (%.0f)", (s[10] - p[10]) / emitted * 1000, (s[11] - p[11]) / emitted * 1000, emitted) : "- (0)"
            lines.append("\(at(s[0])) | \(Int(s[1])) \(Int(s[2])) \(Int(s[3])) \(Int(s[4])) \(Int(s[5])) | \(Int(s[6])) \(s[7]) \(Int(s[8])) \(s[9]) "
                + "| \(jitter) | \(Int(s[13])) \(Int(s[14])) \(Int(s[15])) \(Int(s[16])) | \(Int(s[17])) \(Int(s[18])) \(Int(s[19]))")
        }
        return lines.joined(separator: "\n")
    }

    /// Every RTP packet the relay passed to bob from `from` (ns since the relay's creation)
    /// for `seconds`, one line each: ms since `from`, payload type, SSRC, sequence number,
    /// timestamp, marker, size — to see holes, retransmissions and padding around an event.
    func relayPackets(_ relay: ImpairmentRelay, from: UInt64, seconds: Double) -> String {
        let end = from + UInt64(seconds * 1e9)
        var lines = ["relay, bob's downlink RTP packets (ms, pt, ssrc, seq, ts, marker, bytes, action):"]
        for entry in relay.log where entry.direction == .downlink && entry.arrivalNs >= from && entry.arrivalNs < end {
            guard let rtp = entry.rtp, rtp.payloadType != 111 else { continue }   // 111: Opus, not the story
            lines.append(String(format: "%7.1f %3d %08x %5d %10u %@ %4d %@", Double(Int64(entry.arrivalNs) - Int64(from)) / 1e6,
                                rtp.payloadType, rtp.ssrc, rtp.sequence, rtp.timestamp, rtp.marker ? "M" : "-", entry.size,
                                String(describing: entry.action)))
        }
        return lines.joined(separator: "\n")
    }

    /// Why `subscriber`'s target layer of `publisher`'s video last changed
    /// (`switchboard_sfu_subscriber_layer_reason`), "-" when not reported.
    func layerReason(_ samples: [Sample], publisher: String, subscriber: String) -> String {
        samples.first { $0.name == "switchboard_sfu_subscriber_layer_reason" && $0.labels["publisher"] == publisher
            && $0.labels["subscriber"] == subscriber }?.labels["reason"] ?? "-"
    }
}
