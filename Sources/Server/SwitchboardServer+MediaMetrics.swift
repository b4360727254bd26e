import Media
import SFU

extension SwitchboardServer {
    /// Prometheus lines for the media plane: every `SFUServerCounters` and `MediaLoopCounters`
    /// field per worker (`switchboard_sfu_<name>_total{worker="i"}`; the lists in
    /// `SFUWorkerPoolStats.swift` are complete by test), members and rooms per worker.
    /// Downlink estimates and layers: SwitchboardServer+LayerMetrics.swift. Empty without a
    /// media plane.
    func mediaMetricsLines() -> [String] {
        guard let sfu else { return [] }
        let stats = sfu.stats()
        var lines: [String] = []
        func family(_ name: String, _ type: String, _ help: String, _ samples: [(labels: String, value: CustomStringConvertible)]) {
            lines.append("# HELP \(name) \(help)")
            lines.append("# TYPE \(name) \(type)")
            for sample in samples { lines.append("\(name){\(sample.labels)} \(sample.value)") }
        }
        let workers = stats.workers.enumerated().map { (index: $0.offset, stats: $0.element) }
        for field in SFUServerCounters.fields {
            family("switchboard_sfu_\(Self.snakeCase(field.name))_total", "counter", "SFUServerCounters.\(field.name) per worker.",
                   workers.map { ("worker=\"\($0.index)\"", $0.stats.counters[keyPath: field.path]) })
        }
        for field in MediaLoopCounters.fields {
            family("switchboard_media_loop_\(Self.snakeCase(field.name))_total", "counter", "MediaLoopCounters.\(field.name) per worker.",
                   workers.map { ("worker=\"\($0.index)\"", $0.stats.loop[keyPath: field.path]) })
        }
        // Send-side pacer (docs/stats.md, "Pacer"): its counters per worker, its longest
        // queue wait, and each subscriber's lane now.
        for field in PacerStats.fields {
            family("switchboard_sfu_pacer_\(Self.snakeCase(field.name))_total", "counter", "PacerStats.\(field.name) per worker.",
                   workers.map { ("worker=\"\($0.index)\"", $0.stats.pacer[keyPath: field.path]) })
        }
        family("switchboard_sfu_pacer_max_queue_time_seconds", "gauge", "Longest time a released packet waited in the worker's pacer.",
               workers.map { ("worker=\"\($0.index)\"", Double($0.stats.pacer.maxQueueTime) / 1_000_000) })
        let lanes = stats.workers.flatMap(\.members).compactMap { member in member.pacing.map { (member.member, $0) } }
        family("switchboard_sfu_pacer_lane_rate_bps", "gauge", "A subscriber's pacing rate, bit/s (0: not paced).",
               lanes.map { ("member=\"\(Self.labelValue($0.0.description))\"", $0.1.rateBps) })
        family("switchboard_sfu_pacer_lane_queued_packets", "gauge", "Packets waiting in a subscriber's pacer lane.",
               lanes.map { ("member=\"\(Self.labelValue($0.0.description))\"", $0.1.queuedPackets) })
        family("switchboard_sfu_pacer_lane_queue_age_seconds", "gauge", "Age of the oldest packet waiting in a subscriber's lane.",
               lanes.map { ("member=\"\(Self.labelValue($0.0.description))\"", Double($0.1.queueAge) / 1_000_000) })
        family("switchboard_sfu_members", "gauge", "Members placed on each worker.",
               stats.placements.enumerated().map { ("worker=\"\($0.offset)\"", $0.element) })
        family("switchboard_sfu_rooms", "gauge", "Rooms live on each worker.", workers.map { ("worker=\"\($0.index)\"", $0.stats.rooms) })
        return lines
    }

    /// "srtpAuthFailures" → "srtp_auth_failures", "unknownSSRC" → "unknown_ssrc".
    static func snakeCase(_ name: String) -> String {
        var out = ""
        let characters = Array(name)
        for (index, character) in characters.enumerated() {
            if character.isUppercase {
                let previousLower = index > 0 && characters[index - 1].isLowercase
                let nextLower = index + 1 < characters.count && characters[index + 1].isLowercase
                let previousUpper = index > 0 && characters[index - 1].isUppercase
                if index > 0 && (previousLower || (previousUpper && nextLower)) { out.append("_") }
                out.append(Character(character.lowercased()))
            } else {
                out.append(character)
            }
        }
        return out
    }
}
