/// Probe clusters of one subscriber transport, for `BandwidthEstimator` (libwebrtc
/// `ProbeBitrateEstimator`, modules/congestion_controller/goog_cc/probe_bitrate_estimator.cc).
///
/// A cluster is judged **once, whole**: when its sender closed it (`closed`: the router's
/// 300 ms probe ended) or no packet of it was sent for `quietAfterSend`, and every packet
/// sent in it has been reported (received or lost), or `reportTimeout` after its last send.
/// Packets of a cluster already judged are ignored (`judgedThrough`): a sender stalled in
/// the middle of a probe (a loaded host's timer) does not get its second half judged as a
/// cluster of its own. It counts only when at least
/// `minReceivedRatio` of its packets and bytes arrived and at least `minPackets` did
/// (libwebrtc `kMinReceivedProbesRatio`, `kMinReceivedBytesRatio`, `kMinProbePacketsSent`).
///
/// Why whole: the router's clusters last 300 ms (padding every 20 ms tick) while feedback
/// comes every 50–100 ms, and judging a cluster on the first feedback holding 5 of its
/// packets read a fragment — one or two ticks' bursts — whose rate is anything from a
/// fraction to several times the path's (seen end to end: probes read 35–600 kbit/s on an
/// idle path, and the ramp to the top layer did not finish within 40 s in 4 of 13 runs).
///
/// Fixed storage (`slots`), so recording and judging a cluster never allocates.
struct ProbeClusters: Sendable {
    /// One cluster's send and receive accounting.
    struct Cluster: Sendable {
        var id = -1
        var sentPackets = 0
        var sentBytes = 0
        var firstSend: Int64 = 0
        var lastSend: Int64 = 0
        var lastSentSize = 0
        var received = 0
        var lost = 0
        var receivedBytes = 0
        var firstArrival: Int64 = .max
        var lastArrival: Int64 = .min
        var firstArrivalSize = 0
        var closed = false
        var active: Bool { id >= 0 }
    }

    /// A judged cluster: its rate (nil when invalid) and its counts, for stats and tests.
    struct Result: Equatable, Sendable {
        var cluster: Int
        var bps: Double?
        var sentPackets: Int
        var receivedPackets: Int
        /// The probe filled the link: it arrived at < 90 % of its send rate, so `bps` is 95 %
        /// of the rate the link delivered it at — the capacity itself, read while the probe's
        /// own queue built (the delay detector's over-use then is the probe's doing).
        var saturated = false
    }

    /// 4 clusters in flight: the router runs one at a time (300 ms, results within ~0.5 s);
    /// a scripted sender may overlap a few.
    static let slots = 4
    /// 5 packets: libwebrtc's `kMinProbePacketsSent`.
    static let minPackets = 5
    /// 80 %: libwebrtc's `kMinReceivedProbesRatio` and `kMinReceivedBytesRatio` — a probe that
    /// lost more than a fifth of itself measured a link it overflowed, not its rate.
    static let minReceivedRatio = 0.8
    /// 2: libwebrtc's `kMaxValidRatio` between the send and the receive rate.
    static let maxValidRatio = 2.0
    /// 500 ms without a packet of a cluster nobody closed: it has stopped (the router closes
    /// its clusters, `closed(cluster:)`; this is for senders that do not — a stall of a loaded
    /// host's 20 ms timer inside a probe reached 300–400 ms end to end).
    static let quietAfterSend: Int64 = 500_000
    /// 1 s after the last send the cluster is judged with what was reported (feedback lost).
    static let reportTimeout: Int64 = 1_000_000

    private var clusters = [Cluster](repeating: Cluster(), count: slots)
    /// The highest cluster id judged: later packets of it or of older clusters are ignored
    /// (ids only grow; one far below is a wrap of the 16-bit tag and starts afresh).
    private var judgedThrough = -1

    /// True for a cluster judged already.
    private mutating func isJudged(_ id: Int) -> Bool {
        if id < judgedThrough - 1_000 { judgedThrough = -1 }  // the tag wrapped
        return id <= judgedThrough
    }

    /// The sender finished `cluster`: it can be judged once its packets are reported.
    mutating func closed(cluster id: Int) {
        let index = find(id)
        if index >= 0 { clusters[index].closed = true }
    }

    /// Records a packet sent in `cluster`.
    mutating func sent(cluster id: Int, size: Int, now: Int64) {
        guard !isJudged(id) else { return }
        var index = find(id)
        if index < 0 {
            // A free slot, else the oldest cluster (its result is long overdue).
            index = 0
            var slot = 0
            while slot < Self.slots {
                if !clusters[slot].active { index = slot; break }
                if clusters[slot].lastSend < clusters[index].lastSend { index = slot }
                slot += 1
            }
            clusters[index] = Cluster()
            clusters[index].id = id
            clusters[index].firstSend = now
        }
        clusters[index].sentPackets += 1
        clusters[index].sentBytes += size
        if now >= clusters[index].lastSend {
            clusters[index].lastSend = now
            clusters[index].lastSentSize = size
        }
        clusters[index].firstSend = min(clusters[index].firstSend, now)
    }

    /// A packet of `cluster` reported received at `arrival` (receiver clock).
    mutating func received(cluster id: Int, size: Int, arrival: Int64, wasReportedLost: Bool) {
        let index = find(id)
        guard index >= 0 else { return }
        if wasReportedLost { clusters[index].lost -= 1 }
        clusters[index].received += 1
        clusters[index].receivedBytes += size
        if arrival < clusters[index].firstArrival {
            clusters[index].firstArrival = arrival
            clusters[index].firstArrivalSize = size
        }
        clusters[index].lastArrival = max(clusters[index].lastArrival, arrival)
    }

    /// A packet of `cluster` reported lost.
    mutating func lost(cluster id: Int) {
        let index = find(id)
        if index >= 0 { clusters[index].lost += 1 }
    }

    /// Judges the next cluster that is complete at `now` and frees its slot; nil when none is.
    /// Call until nil.
    mutating func takeFinished(now: Int64) -> Result? {
        var slot = 0
        while slot < Self.slots {
            let cluster = clusters[slot]
            slot += 1
            guard cluster.active, cluster.closed || now - cluster.lastSend >= Self.quietAfterSend else { continue }
            let reported = cluster.received + cluster.lost >= cluster.sentPackets
            guard reported || now - cluster.lastSend >= Self.reportTimeout else { continue }
            clusters[slot - 1] = Cluster()
            judgedThrough = max(judgedThrough, cluster.id)
            let bps = Self.rate(cluster)
            return Result(cluster: cluster.id, bps: bps, sentPackets: cluster.sentPackets, receivedPackets: cluster.received,
                          saturated: bps != nil && Self.isSaturated(cluster))
        }
        return nil
    }

    /// libwebrtc `ProbeBitrateEstimator::HandleProbeAndEstimateBitrate`: send rate without the
    /// last packet, receive rate (received bytes over the receive interval) without the
    /// first; invalid when they differ more than 2×; the smaller of both, and 95 % of the
    /// receive rate when it is below 90 % of the send rate (the probe saturated the link).
    static func rate(_ cluster: Cluster) -> Double? {
        guard cluster.received >= minPackets,
              Double(cluster.received) >= minReceivedRatio * Double(cluster.sentPackets),
              Double(cluster.receivedBytes) >= minReceivedRatio * Double(cluster.sentBytes) else { return nil }
        let sendSpan = cluster.lastSend - cluster.firstSend
        let receiveSpan = cluster.lastArrival - cluster.firstArrival
        guard sendSpan > 0, receiveSpan > 0 else { return nil }
        let sendRate = Double((cluster.sentBytes - cluster.lastSentSize) * 8) * 1_000_000 / Double(sendSpan)
        let receiveRate = Double((cluster.receivedBytes - cluster.firstArrivalSize) * 8) * 1_000_000 / Double(receiveSpan)
        guard sendRate / receiveRate <= maxValidRatio, receiveRate / sendRate <= maxValidRatio else { return nil }
        return receiveRate < 0.9 * sendRate ? 0.95 * receiveRate : min(sendRate, receiveRate)
    }

    /// The cluster arrived at < 90 % of its send rate (`rate` then keeps 95 % of the receive rate).
    static func isSaturated(_ cluster: Cluster) -> Bool {
        let sendSpan = cluster.lastSend - cluster.firstSend
        let receiveSpan = cluster.lastArrival - cluster.firstArrival
        guard sendSpan > 0, receiveSpan > 0 else { return false }
        let sendRate = Double((cluster.sentBytes - cluster.lastSentSize) * 8) * 1_000_000 / Double(sendSpan)
        let receiveRate = Double((cluster.receivedBytes - cluster.firstArrivalSize) * 8) * 1_000_000 / Double(receiveSpan)
        return receiveRate < 0.9 * sendRate
    }

    private func find(_ id: Int) -> Int {
        var slot = 0
        while slot < Self.slots {
            if clusters[slot].id == id { return slot }
            slot += 1
        }
        return -1
    }
}
