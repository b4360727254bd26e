/// Fast detection of a bottleneck queue **while it is still growing**, from the one-way delay
/// of the latest acknowledged packets (transport-cc, draft-holmer-rmcat-transport-wide-cc-extensions-01).
///
/// Why: a sender far above a link's capacity fills a small tail-drop queue in a fraction of a
/// second — 1.5 Mbit/s into a 300 kbit/s cap fills NetEmu's 30 kB queue in
/// 30 kB × 8 / (1.5 − 0.3) Mbit/s = 0.2 s — and the packets it drops break the video's
/// reference chain, so the picture waits for a keyframe that then queues behind 0.8 s of
/// backlog. The delay-gradient detector (`DelayTrendDetector`, a 20-group trendline) plus
/// the standing-queue test (≥ 150 ms held for 200 ms) only fire after the queue is full.
///
/// How: packets that waited in a FIFO leave it back to back, so over a run of consecutive
/// queued packets the receiver's arrival span is bytes / capacity, whatever the send pattern:
/// - *queued*: one-way delay ≥ `queuedDelay` above the path's base (`QueueDelay.base`); the
///   run is the trailing one in send order (the newest packets) within `window` of arrivals;
/// - *growing*: the delay of the run's last packet exceeds its first's by ≥ `minGrowth`
///   (growth = arrival span − send span);
/// - *well above the capacity*: arrival rate ≤ `maxRateRatio` × send rate over the run. With
///   slope s = growth / send span, delivery = send / (1 + s): here s ≈ 4 (1.5 M → 0.3 M).
/// The run's arrival rate (bytes after its first packet over its arrival span) is then the
/// bottleneck's rate, measured from ≥ `minPackets` packets: ≈ 65–100 ms of arrivals at
/// 300 kbit/s, so the cut comes on the first feedback after ≈ 150 ms of queue growth, while
/// the queue is three quarters full.
///
/// Provisional: `BandwidthEstimator` undoes the cut when no standing queue follows within
/// 500 ms (`queueOnsetConfirmation`).
///
/// Not fooled by a loaded receiver's stamping: a stalled network thread stamps the held packets
/// in one bunch (arrival span ≈ 0, below `minArrivalSpan`) or reads its backlog faster than it
/// was sent (the delays *fall* across the run: negative growth); the packet before the stall
/// is not queued, so the stall's gap never opens a run. Only a receiver that keeps reading
/// slower than we send looks like a bottleneck — and then it is one.
///
/// Pure: times are passed in (µs; send on our clock, arrival on the receiver's).
struct QueueOnset: Sendable {
    /// 20 ms above the base delay: a packet that waited this long was queued (more than a
    /// 1,200-byte packet's serialization at 500 kbit/s; less than two such packets at 300 kbit/s,
    /// so the run starts with the second packet behind the onset).
    static let queuedDelay: Int64 = 20_000
    /// 3 packets (2 arrival gaps, together ≥ `minArrivalSpan`): packets leaving a busy FIFO are
    /// spaced by their own serialization times, so even two gaps give the rate exactly, whatever
    /// the size mix; a 4th packet at 300 kbit/s costs another 32 ms, and with 50–100 ms
    /// feedback often a whole feedback interval (scripted: 151 ms → 205 ms after the cap,
    /// after the 30 kB queue began to overflow at 190 ms).
    static let minPackets = 3
    /// 2,400 bytes after the run's first packet (two full video packets): audio alone (≈ 150 B
    /// packets) never makes a run, so a receiver reading a few audio packets slowly while no
    /// video flows cannot cut the estimate to a few tens of kbit/s.
    static let minBytes = 2_400
    /// 40 ms of arrival span: the rate's denominator; shorter spans are a bunch of stamps.
    static let minArrivalSpan: Int64 = 40_000
    /// 50 ms of delay growth across the run: above a loaded receiver's stamping jitter (tens of
    /// ms, see `BandwidthEstimator.Config.minStandingQueue`) and above what a 12 kB keyframe sent
    /// at once adds on a 2 Mbit/s link; reached after ≈ 3 packets of 1.5 Mbit/s into 300 kbit/s.
    static let minGrowth: Int64 = 50_000
    /// The link carries at most half of what is sent (slope ≥ 1): a sender 10–50 % above the
    /// capacity builds its queue slowly enough for the delay-gradient detector to handle.
    static let maxRateRatio = 0.5
    /// 250 ms of arrivals kept and considered: a run longer than that is a standing queue,
    /// for the slow path (`QueueDelay`), and its growth over 250 ms stays under `minGrowth`
    /// unless the sender is ≥ 25 % above the capacity.
    static let window: Int64 = 250_000

    /// Acknowledged packets, send order.
    private var packets: [(send: Int64, arrival: Int64, size: Int)] = []

    /// One acknowledged packet (any order; kept in send order).
    mutating func add(send: Int64, arrival: Int64, size: Int) {
        let entry = (send, arrival, size)
        if !packets.isEmpty, packets[packets.count - 1].send > send {
            var index = packets.count
            while index > 0, packets[index - 1].send > send { index -= 1 }
            // Insert by shifting in place (`Array.insert` allocated in the debug build).
            packets.append(entry)
            var position = packets.count - 1
            while position > index { packets[position] = packets[position - 1]; position -= 1 }
            packets[index] = entry
        } else {
            packets.append(entry)
        }
    }

    private var latestArrival: Int64? {
        guard !packets.isEmpty else { return nil }
        var latest = Int64.min
        var index = 0
        while index < packets.count { latest = max(latest, packets[index].arrival); index += 1 }
        return latest
    }

    /// Drops packets that arrived more than `window` before the latest arrival (in place).
    mutating func trim() {
        guard let latest = latestArrival else { return }
        guard latest - packets[0].arrival > Self.window else { return }
        // Compact in place, keeping the send order.
        var kept = 0
        var index = 0
        while index < packets.count {
            if latest - packets[index].arrival <= Self.window {
                packets[kept] = packets[index]
                kept += 1
            }
            index += 1
        }
        packets.removeSubrange(kept..<packets.count)
    }

    /// The bottleneck's rate (bit/s) when the newest packets show a queue growing fast, else nil.
    /// - Parameter base: the path's base one-way delay (µs).
    func growingQueueRate(base: Int64) -> Double? {
        guard let run = queuedRun(base: base) else { return nil }
        let first = packets[run.start], last = packets[packets.count - 1]
        let growth = (last.arrival - last.send) - (first.arrival - first.send)
        guard growth >= Self.minGrowth else { return nil }
        let sendSpan = last.send - first.send
        if sendSpan > 0 {
            let sendRate = Double((run.bytes - last.size) * 8) * 1_000_000 / Double(sendSpan)
            guard run.rate <= Self.maxRateRatio * sendRate else { return nil }
        }
        return run.rate
    }

    /// The rate the newest queued packets (≥ `queuedDelay` above `base`, ≥ `minPackets`,
    /// ≥ `minBytes`, over ≥ `minArrivalSpan`) arrived at, bit/s, whether the queue grows or
    /// drains: packets leaving a busy FIFO do so back to back, so this is the bottleneck's
    /// capacity. Nil without such a run.
    func drainRate(base: Int64) -> Double? { queuedRun(base: base)?.rate }

    /// The trailing run of queued packets (send order): its first index, its bytes and the
    /// arrival rate of all but its first packet.
    private func queuedRun(base: Int64) -> (start: Int, bytes: Int, rate: Double)? {
        guard let latest = latestArrival else { return nil }
        var start = packets.count
        var bytes = 0
        var arrivalEnd = Int64.min
        while start > 0 {
            let packet = packets[start - 1]
            guard packet.arrival - packet.send - base >= Self.queuedDelay, latest - packet.arrival <= Self.window else { break }
            start -= 1
            bytes += packet.size
            arrivalEnd = max(arrivalEnd, packet.arrival)
        }
        guard packets.count - start >= Self.minPackets else { return nil }
        let first = packets[start]
        let arrivalSpan = arrivalEnd - first.arrival
        guard arrivalSpan >= Self.minArrivalSpan, bytes - first.size >= Self.minBytes else { return nil }
        return (start, bytes, Double((bytes - first.size) * 8) * 1_000_000 / Double(arrivalSpan))
    }

    /// 6 packets (two per third) for `delayGrowth`.
    static let minTrendPackets = 6

    /// How the one-way delay moved across the kept packets (send order, the last `window` of
    /// arrivals), µs: the smallest delay of the newest third minus the smallest of the oldest
    /// third. The minimum of each third is what the path's queue imposed — a receiver's
    /// stall or a bunch of late stamps only adds to some packets. Positive: a queue is
    /// growing (we send more than the link carries); ≤ 0: the link carries what we send, or
    /// a queue drains. Nil under `minTrendPackets`.
    func delayGrowth() -> Int64? {
        let count = packets.count
        guard count >= Self.minTrendPackets else { return nil }
        let third = count / 3
        var oldest = Int64.max, newest = Int64.max
        var index = 0
        while index < third {
            oldest = min(oldest, packets[index].arrival - packets[index].send)
            newest = min(newest, packets[count - 1 - index].arrival - packets[count - 1 - index].send)
            index += 1
        }
        return newest - oldest
    }
}
