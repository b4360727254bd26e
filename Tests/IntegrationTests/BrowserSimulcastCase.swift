import Foundation
import NetEmu
import XCTest

/// Helpers for the simulcast tests: the served client's per-rid send stats and per-stream
/// receive stats (`switchboard.stats()`), the server's per-layer `/metrics`, and a NetEmu
/// relay in front of one page (the client's test-only `?sfuCandidatePort=` hook).
class BrowserSimulcastCase: BrowserCase {
    /// One simulcast encoding as the publishing page reports it (outbound-rtp).
    struct Outbound {
        let rid: String
        let bytesSent: Double
        /// Of `bytesSent`: RTX resends and padding (probes to reach the next layer's bitrate).
        let retransmittedBytesSent: Double
        let framesEncoded: Double
        let width: Int
        let height: Int
        let qualityLimitation: String
    }

    /// One received video stream (inbound-rtp) of the room connection.
    struct Inbound {
        let stream: String
        let bytesReceived: Double
        let framesDecoded: Double
        let width: Int
        let height: Int
        let freezeCount: Double
        let totalFreezesDuration: Double
    }

    private static func number(_ object: [String: Any], _ key: String) -> Double {
        (object[key] as? NSNumber)?.doubleValue ?? 0
    }

    /// The room connection's sent video encodings, by rid.
    func outbound(_ page: ChromiumPage) throws -> [String: Outbound] {
        let list = try stats(page).raw["outboundVideo"] as? [[String: Any]] ?? []
        var out: [String: Outbound] = [:]
        for item in list where item["pc"] as? String == "room" {
            let rid = item["rid"] as? String ?? ""
            out[rid] = Outbound(rid: rid, bytesSent: Self.number(item, "bytesSent"),
                                retransmittedBytesSent: Self.number(item, "retransmittedBytesSent"), framesEncoded: Self.number(item, "framesEncoded"),
                                width: Int(Self.number(item, "frameWidth")), height: Int(Self.number(item, "frameHeight")),
                                qualityLimitation: item["qualityLimitationReason"] as? String ?? "")
        }
        return out
    }

    /// The room connection's received video streams, by remote stream id (`account/device`).
    func inbound(_ page: ChromiumPage) throws -> [String: Inbound] {
        let list = try stats(page).raw["inboundVideo"] as? [[String: Any]] ?? []
        var out: [String: Inbound] = [:]
        for item in list where item["pc"] as? String == "room" {
            guard let stream = item["stream"] as? String else { continue }
            out[stream] = Inbound(stream: stream, bytesReceived: Self.number(item, "bytesReceived"),
                                  framesDecoded: Self.number(item, "framesDecoded"),
                                  width: Int(Self.number(item, "frameWidth")), height: Int(Self.number(item, "frameHeight")),
                                  freezeCount: Self.number(item, "freezeCount"),
                                  totalFreezesDuration: Self.number(item, "totalFreezesDuration"))
        }
        return out
    }

    /// One Prometheus sample.
    struct Sample {
        let name: String
        let labels: [String: String]
        let value: Double
    }

    /// The server's `/metrics`, fetched by `page` (same origin), parsed (label values here
    /// carry no escaped quotes: account/device names and mids).
    func metrics(_ page: ChromiumPage) throws -> [Sample] {
        let text = try XCTUnwrap(try page.evaluate("fetch('/metrics').then(r => r.text())") as? String)
        var samples: [Sample] = []
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            let series = line[..<space]
            guard let open = series.firstIndex(of: "{") else {
                samples.append(Sample(name: String(series), labels: [:], value: value))
                continue
            }
            var labels: [String: String] = [:]
            for pair in series[series.index(after: open)...].dropLast().components(separatedBy: "\",") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2 else { continue }
                labels[String(parts[0])] = parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            }
            samples.append(Sample(name: String(series[..<open]), labels: labels, value: value))
        }
        return samples
    }

    /// Packets and bytes (RTP, media SSRCs only) received by the SFU per layer of
    /// `publisher`'s video track: rid → (layer, packets, bytes).
    func sfuVideoLayers(_ samples: [Sample], publisher: String) -> [String: (layer: Int, packets: Double, bytes: Double)] {
        var out: [String: (layer: Int, packets: Double, bytes: Double)] = [:]
        for s in samples where s.name == "switchboard_sfu_layer_packets_total"
            && s.labels["publisher"] == publisher && s.labels["kind"] == "video" {
            let rid = s.labels["rid"] ?? ""
            let bytes = samples.first { $0.name == "switchboard_sfu_layer_bytes_total" && $0.labels == s.labels }?.value ?? 0
            out[rid] = (Int(s.labels["layer"] ?? "") ?? -1, s.value, bytes)
        }
        return out
    }

    /// (current, target) layer the SFU forwards of `publisher`'s video to `subscriber`.
    func sfuSubscriberLayer(_ samples: [Sample], publisher: String, subscriber: String) -> (current: Int, target: Int)? {
        func value(_ name: String) -> Int? {
            samples.first { $0.name == name && $0.labels["publisher"] == publisher && $0.labels["subscriber"] == subscriber
                && $0.labels["kind"] == "video" }.map { Int($0.value) }
        }
        guard let current = value("switchboard_sfu_subscriber_layer"), let target = value("switchboard_sfu_subscriber_target_layer")
        else { return nil }
        return (current, target)
    }

    /// One line of `member`'s downlink state from `/metrics` (estimate and its parts, send
    /// rate, probes) and the layer it gets of `publisher`'s video: for test traces.
    func downlinkTrace(_ samples: [Sample], member: String, publisher: String) -> String {
        func value(_ name: String) -> String {
            guard let v = samples.first(where: { $0.name == "switchboard_sfu_downlink_" + name && $0.labels["member"] == member })?.value
            else { return "-" }
            return name.hasSuffix("ratio") ? String(format: "%.2f", v) : name.hasSuffix("bps") ? "\(Int(v / 1000))k" : "\(Int(v))"
        }
        let layer = sfuSubscriberLayer(samples, publisher: publisher, subscriber: member)
        return "layer \(layer.map { "\($0.current)→\($0.target)" } ?? "-") est \(value("estimate_bps")) delay \(value("delay_based_bps")) "
            + "loss \(value("loss_based_bps")) (\(value("loss_ratio"))) delivered \(value("delivered_bps")) overuse \(value("overuse")) sending \(value("sending_bps")) probes \(value("probes_total")) "
            + "last probe \(value("last_probe_bps")) feedbacks \(value("feedbacks_total")) onsets \(value("queue_onsets_total")) (undone \(value("queue_onset_reverts_total"))) at \(value("queue_onset_bps")) "
            + "send drops \(Int(samples.filter { $0.name == "switchboard_media_loop_send_drops_total" || $0.name == "switchboard_media_loop_no_path_drops_total" }.reduce(0) { $0 + $1.value })) "
            + "rtx \(Int(samples.filter { $0.name == "switchboard_sfu_retransmitted_total" }.reduce(0) { $0 + $1.value })) bytes to it: "
            + samples.filter { $0.name == "switchboard_sfu_subscriber_bytes_total" && $0.labels["subscriber"] == member }
                .map { "\($0.labels["publisher"] ?? "")/\($0.labels["kind"] ?? "") \(Int($0.value))" }.sorted().joined(separator: " ")
    }

    /// The server's media (UDP) port, from its "media listening" log line.
    func mediaPort(_ server: ServerProcess) throws -> UInt16 {
        for line in server.logLines where line.contains("\"msg\":\"media listening\"") {
            if let data = line.data(using: .utf8),
               let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
               let fields = object["fields"] as? [String: Any], let port = fields["port"] as? Int {
                return UInt16(port)
            }
        }
        throw XCTSkip("the server runs without a media plane (no \"media listening\" log line)")
    }

    /// A started NetEmu relay in front of the server's media port; give its port to one page
    /// as `?sfuCandidatePort=`.
    func relay(to server: ServerProcess) throws -> ImpairmentRelay {
        let relay = try ImpairmentRelay(targetPort: try mediaPort(server))
        try relay.start()
        return relay
    }

    /// Joins `room` on every page and waits until each is negotiated and lists all others.
    func joinAll(_ pages: [ChromiumPage], room: String, keys: [String]) throws {
        for (index, page) in pages.enumerated() {
            let outcome = try page.evaluate("window.switchboard.joinRoom(\(ChromiumPage.literal(room))).then(() => 'ok', e => e.message)",
                                            timeout: 20) as? String
            XCTAssertEqual(outcome, "ok", keys[index])
        }
        for (index, page) in pages.enumerated() {
            let others = keys.enumerated().filter { $0.offset != index }.map { ChromiumPage.literal($0.element) }.joined(separator: ",")
            try page.waitUntil("window.switchboard.roomState === 'negotiated' && [\(others)].every(k => window.switchboard.remoteStreams.includes(k))",
                               timeout: 30)
        }
    }
}
