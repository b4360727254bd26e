import Media
import SFU

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
        let stats = sfu.stats()
        // Counters (retransmissions, send drops …) per worker: SwitchboardServer+MediaMetrics.swift.
        let perSubscriber: [String] = [
            "# HELP switchboard_sfu_subscriber_bytes_total Bytes sent to a subscriber of one track.",
            "# TYPE switchboard_sfu_subscriber_bytes_total counter",
        ]
        let subscriberBytes: [String] = tracks.flatMap { track in track.subscribers.map {
            "switchboard_sfu_subscriber_bytes_total{publisher=\"\(Self.labelValue(track.publisher.description))\",track=\"\(Self.labelValue(track.track))\","
                + "kind=\"\(track.kind)\",subscriber=\"\(Self.labelValue($0.member.description))\"} \($0.bytesSent)"
        } }
        return lines + bytes + current + target + downlinkMetricsLines(stats.total.members) + perSubscriber + subscriberBytes
            + preferenceMetricsLines()
    }

    /// Each subscriber's downlink estimate and its parts (Router.downlinkStats): what the
    /// layer selection acts on. Gauges in bit/s, `member` = `account/device`.
    func downlinkMetricsLines(_ members: [SFUMemberStats]) -> [String] {
        let series: [(name: String, help: String, value: (DownlinkStats) -> Double?)] = [
            ("switchboard_sfu_downlink_estimate_bps", "Downlink estimate of a subscriber, bit/s.", { Double($0.estimateBps) }),
            ("switchboard_sfu_downlink_delay_based_bps", "Delay-based part of the estimate, bit/s.", { $0.delayBasedBps.map { Double($0) } }),
            ("switchboard_sfu_downlink_loss_based_bps", "Loss-based part of the estimate, bit/s.", { $0.lossBasedBps.map { Double($0) } }),
            ("switchboard_sfu_downlink_loss_ratio", "Latest loss ratio reported by the subscriber.", { $0.lossRatio }),
            ("switchboard_sfu_downlink_delivered_bps", "Rate the subscriber acknowledged (transport-cc), bit/s.", { $0.deliveredBps.map { Double($0) } }),
            ("switchboard_sfu_downlink_overuse", "Delay-gradient detector: 1 over-use, -1 under-use, 0 normal.",
             { $0.usage == .overusing ? 1 : $0.usage == .underusing ? -1 : 0 }),
            ("switchboard_sfu_downlink_sending_bps", "What the SFU sends the subscriber, bit/s.", { Double($0.sendingBps) }),
            ("switchboard_sfu_downlink_probes_total", "Bandwidth probes started towards the subscriber.", { Double($0.probesStarted) }),
            ("switchboard_sfu_downlink_last_probe_bps", "Result of the latest probe, bit/s.", { $0.lastProbeBps.map { Double($0) } }),
            ("switchboard_sfu_downlink_feedbacks_total", "Transport-cc feedbacks received from the subscriber.", { Double($0.transportFeedbacks) }),
            ("switchboard_sfu_downlink_queue_onsets_total", "Growing-queue cuts of the estimate (BandwidthEstimator+QueueOnset).", { Double($0.queueOnsets) }),
            ("switchboard_sfu_downlink_queue_onset_reverts_total", "Growing-queue cuts undone: no standing queue followed.", { Double($0.queueOnsetReverts) }),
            ("switchboard_sfu_downlink_queue_onset_bps", "Drain rate the latest growing-queue cut read, bit/s.", { $0.lastQueueOnsetBps.map { Double($0) } }),
        ]
        var out: [String] = []
        for item in series {
            out.append("# HELP \(item.name) \(item.help)")
            out.append("# TYPE \(item.name) gauge")
            for member in members {
                guard let downlink = member.downlink, let value = item.value(downlink) else { continue }
                out.append("\(item.name){member=\"\(Self.labelValue(member.member.description))\"} \(value)")
            }
        }
        return out
    }

    /// Prometheus lines for subscribers' own limits (`sfu.preferences`, protocol §9) per
    /// received video track: the layer cap (-1: none) and the rendered size (0: none given).
    /// Same labels as `switchboard_sfu_subscriber_layer` (kind is always video).
    func preferenceMetricsLines() -> [String] {
        guard let sfu else { return [] }
        var maxLayer = [
            "# HELP switchboard_sfu_subscriber_max_layer Largest layer a subscriber asked for (-1: no cap).",
            "# TYPE switchboard_sfu_subscriber_max_layer gauge",
        ]
        var maxWidth = [
            "# HELP switchboard_sfu_subscriber_max_width Width a subscriber renders a video track at, device pixels (0: not given).",
            "# TYPE switchboard_sfu_subscriber_max_width gauge",
        ]
        var maxHeight = [
            "# HELP switchboard_sfu_subscriber_max_height Height a subscriber renders a video track at, device pixels (0: not given).",
            "# TYPE switchboard_sfu_subscriber_max_height gauge",
        ]
        // Info-style series (value 1): why the subscriber's target layer last changed
        // (`LayerSelector.Reason`: bandwidthDecreased, layerInactive, falseAlarm, …).
        var reasons = [
            "# HELP switchboard_sfu_subscriber_layer_reason Why a subscriber's target layer last changed (label reason; value 1).",
            "# TYPE switchboard_sfu_subscriber_layer_reason gauge",
        ]
        for worker in sfu.stats().workers {
            // Router participant ids are per worker: map them to members within the worker.
            let memberOf = Dictionary(worker.members.compactMap { member in member.downlink.map { ($0.participant, member.member) } },
                                      uniquingKeysWith: { first, _ in first })
            for subscriber in worker.members {
                for video in subscriber.downlink?.video ?? [] {
                    guard let publisher = memberOf[video.publisher] else { continue }
                    let labels = "publisher=\"\(Self.labelValue(publisher.description))\",track=\"\(Self.labelValue(video.track.raw))\",kind=\"video\",subscriber=\"\(Self.labelValue(subscriber.member.description))\""
                    maxLayer.append("switchboard_sfu_subscriber_max_layer{\(labels)} \(video.maxLayer ?? -1)")
                    maxWidth.append("switchboard_sfu_subscriber_max_width{\(labels)} \(video.maxWidth ?? 0)")
                    maxHeight.append("switchboard_sfu_subscriber_max_height{\(labels)} \(video.maxHeight ?? 0)")
                    if let reason = video.lastReason {
                        reasons.append("switchboard_sfu_subscriber_layer_reason{\(labels),reason=\"\(Self.labelValue(reason))\"} 1")
                    }
                }
            }
        }
        return maxLayer + maxWidth + maxHeight + reasons
    }

    /// Prometheus label value escaping (exposition format 0.0.4): backslash, quote, newline.
    static func labelValue(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }
}
