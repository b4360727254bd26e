import Media

extension SwitchboardServer {
    /// Prometheus lines for the SFU's simulcast layers: what arrives per layer of each
    /// published track, and which layer each subscriber is sent (current, target). Empty
    /// without a media plane. Labels: `publisher`/`subscriber` = `account/device`, `track` =
    /// the publisher's mid, `layer` 0 = lowest, `rid` as signaled (empty when none).
    func layerMetricsLines() -> [String] {
        guard let sfu else { return [] }
        let tracks = sfu.layerStats()
        var lines = [
            "# HELP switchboard_sfu_layer_packets_total RTP packets received per published layer.",
            "# TYPE switchboard_sfu_layer_packets_total counter",
        ]
        var bytes = [
            "# HELP switchboard_sfu_layer_bytes_total RTP bytes received per published layer.",
            "# TYPE switchboard_sfu_layer_bytes_total counter",
        ]
        var current = [
            "# HELP switchboard_sfu_subscriber_layer Layer forwarded to a subscriber (-1: none yet).",
            "# TYPE switchboard_sfu_subscriber_layer gauge",
        ]
        var target = [
            "# HELP switchboard_sfu_subscriber_target_layer Layer a subscriber should get.",
            "# TYPE switchboard_sfu_subscriber_target_layer gauge",
        ]
        for track in tracks {
            let base = "publisher=\"\(Self.labelValue(track.publisher.description))\",track=\"\(Self.labelValue(track.track))\",kind=\"\(track.kind)\""
            for layer in track.layers {
                let labels = base + ",layer=\"\(layer.layer)\",rid=\"\(Self.labelValue(layer.rid ?? ""))\""
                lines.append("switchboard_sfu_layer_packets_total{\(labels)} \(layer.packets)")
                bytes.append("switchboard_sfu_layer_bytes_total{\(labels)} \(layer.bytes)")
            }
            for subscriber in track.subscribers {
                let labels = base + ",subscriber=\"\(Self.labelValue(subscriber.member.description))\""
                current.append("switchboard_sfu_subscriber_layer{\(labels)} \(subscriber.currentLayer ?? -1)")
                target.append("switchboard_sfu_subscriber_target_layer{\(labels)} \(subscriber.targetLayer)")
            }
        }
        return lines + bytes + current + target
    }

    /// Prometheus label value escaping (exposition format 0.0.4): backslash, quote, newline.
    static func labelValue(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }
}
