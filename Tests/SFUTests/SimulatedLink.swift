import RTP
@testable import SFU
import SplitMix

/// A one-way bottleneck for scripted congestion traces: a FIFO drained at `capacityBps`
/// (queueing delay grows when the sender exceeds it), drop-tail at `maxQueueDelay`, fixed
/// propagation delay and optional random loss. Times in µs.
struct SimulatedLink {
    var capacityBps: Double
    var propagation: Int64 = 20_000
    /// 400 ms of buffer: a typical home router queue (bufferbloat) at these rates.
    var maxQueueDelay: Int64 = 400_000
    var randomLoss = 0.0
    var rng = SplitMix64(state: 7)
    /// The receiver reads nothing for `length` µs out of every `every` µs (a browser's network
    /// thread starved on a loaded host) and then stamps the held packets all at once.
    var receiverStall: (every: Int64, length: Int64)?
    /// With `receiverStall`: the held packets are stamped as read at this rate after the
    /// stall (a starved browser catching up on its socket backlog) instead of all at once.
    var catchUpBps: Double?
    /// Between `from` and `to` the receiver reads only at `bps` (a browser starved on a loaded
    /// host) and stamps what it still holds at `to` all at once: no queue on the path.
    var slowReader: (from: Int64, to: Int64, bps: Double)?
    private var lastSlowStamp: Int64 = 0
    /// Packets dropped at the tail of the full queue.
    private(set) var drops = 0
    private var queueFreeAt: Int64 = 0
    private var heldStall: Int64 = -1
    private var heldBytes = 0
    private var lastRelease: Int64 = 0

    init(capacityBps: Double, randomLoss: Double = 0) {
        self.capacityBps = capacityBps
        self.randomLoss = randomLoss
    }

    /// Arrival time at the receiver, or nil when dropped.
    mutating func send(size: Int, now: Int64) -> Int64? {
        if randomLoss > 0, Double(rng.next() % 1_000_000) / 1_000_000 < randomLoss { return nil }
        let start = max(now, queueFreeAt)
        guard start - now <= maxQueueDelay else { drops += 1; return nil }
        queueFreeAt = start + Int64(Double(size * 8) * 1_000_000 / capacityBps)
        let arrival = queueFreeAt + propagation
        if let stall = receiverStall, arrival % stall.every < stall.length {
            let end = arrival - arrival % stall.every + stall.length
            guard let rate = catchUpBps else { return end }
            if heldStall != end { heldStall = end; heldBytes = 0 }
            heldBytes += size
            lastRelease = end + Int64(Double(heldBytes * 8) * 1_000_000 / rate)
            return lastRelease
        }
        if let slow = slowReader, arrival >= slow.from, arrival < slow.to {
            let stamp = min(max(arrival, lastSlowStamp + Int64(Double(size * 8) * 1_000_000 / slow.bps)), slow.to)
            lastSlowStamp = stamp
            return stamp
        }
        // The socket buffer is FIFO: nothing overtakes the backlog being read.
        if catchUpBps != nil { return max(arrival, lastRelease) }
        return arrival
    }
}

/// Sender (paced at the estimate) → link → receiver (`TransportFeedbackGenerator`, feedback
/// through the wire codec) → `BandwidthEstimator`. Feedback's return path is not delayed.
struct CongestionTrace {
    var link: SimulatedLink
    var estimator = BandwidthEstimator()
    var generator = TransportFeedbackGenerator()
    var now: Int64 = 0
    private var nextSend: Int64 = 0
    private var seq: UInt16 = 0
    private var inFlight: [(arrival: Int64, seq: UInt16)] = []
    /// (time, estimate) every 100 ms.
    private(set) var samples: [(time: Int64, bps: UInt64)] = []
    /// 1200-byte packets: a full video packet.
    let packetSize = 1200
    /// When set, a probe cluster of 10 packets at 2 × the estimate every this many µs.
    var probeEvery: Int64?
    private var nextProbe: Int64 = 0
    private var probeID = 0
    /// A one-off probe at this rate on the next step (`probe(rateBps:)`).
    private var pendingProbe: Double?
    /// When set, `bytes` more (1200-byte packets, all at once: a keyframe) every `every` µs.
    var burstEvery: (every: Int64, bytes: Int)?
    private var nextBurst: Int64 = 0

    /// Sends a 10-packet probe cluster at `rateBps` on the next millisecond.
    mutating func probe(rateBps: UInt64) { pendingProbe = Double(rateBps) }

    init(link: SimulatedLink, estimator: BandwidthEstimator = BandwidthEstimator()) {
        self.link = link
        self.estimator = estimator
    }

    /// Runs until `end` in 1 ms steps, sending at the current estimate (a sender that fills
    /// its estimate, as the SFU does with layers plus padding).
    mutating func run(until end: Int64, sendRate: ((UInt64) -> Double)? = nil) throws {
        while now < end {
            now += 1_000
            let rate = sendRate?(estimator.estimateBps) ?? Double(estimator.estimateBps)
            while nextSend <= now {
                estimator.packetSent(transportSequenceNumber: seq, size: packetSize, now: nextSend)
                if let arrival = link.send(size: packetSize, now: nextSend) { inFlight.append((arrival, seq)) }
                seq &+= 1
                nextSend += Int64(Double(packetSize * 8) * 1_000_000 / max(rate, 1))
            }
            if let burst = burstEvery, now >= nextBurst {
                nextBurst = now + burst.every
                for _ in 0..<max(burst.bytes / packetSize, 1) {
                    estimator.packetSent(transportSequenceNumber: seq, size: packetSize, now: now)
                    if let arrival = link.send(size: packetSize, now: now) { inFlight.append((arrival, seq)) }
                    seq &+= 1
                }
            }
            var probeRate: Double?
            if let every = probeEvery, now >= nextProbe {
                nextProbe = now + every
                probeRate = 2 * Double(estimator.estimateBps)
            }
            if let pending = pendingProbe {
                probeRate = pending
                pendingProbe = nil
            }
            if let probeRate {
                probeID += 1
                let gap = Int64(Double(packetSize * 8) * 1_000_000 / probeRate)
                for index in 0..<10 {
                    let at = now + Int64(index) * gap
                    estimator.packetSent(transportSequenceNumber: seq, size: packetSize, now: at, probeCluster: probeID)
                    if let arrival = link.send(size: packetSize, now: at) { inFlight.append((arrival, seq)) }
                    seq &+= 1
                }
                nextSend = max(nextSend, now + 10 * gap)
            }
            inFlight.sort { $0.arrival < $1.arrival }
            while let first = inFlight.first, first.arrival <= now {
                generator.record(sequenceNumber: first.seq, arrival: first.arrival)
                inFlight.removeFirst()
            }
            if generator.isDue(now: now) {
                for packet in generator.feedback(now: now) {
                    let bytes = try RTCPCompound.serialize([.transportFeedback(RTCPTransportFeedback(senderSSRC: 1, mediaSSRC: 2, feedback: packet))])
                    if case .transportFeedback(let tcc)? = try RTCPCompound.parse(bytes).first {
                        estimator.transportFeedback(try tcc.decoded(), now: now)
                    }
                }
                samples.append((now, estimator.estimateBps))
            }
        }
    }

    func samples(from start: Int64, to end: Int64) -> [UInt64] {
        samples.filter { $0.time >= start && $0.time <= end }.map(\.bps)
    }
}
