import RTP

// The controllers of `BandwidthEstimator` (delay-based, growing queue, loss burst, loss
// sample) and the delivered-rate windows they read; the type's documentation is on it
// (BandwidthEstimator.swift).
extension BandwidthEstimator {
    // MARK: controllers

    /// `deliveredBps`: the smoothed acknowledged rate once it has a full window, before that
    /// the raw rate over `deliveryWindow`. `newFrom`: index of this feedback's first packet.
    mutating func updateDeliveredRate(newFrom first: Int) {
        if first < delivered.count {
            // This feedback's packets in arrival order (reordering on the path reorders them):
            // an insertion sort, nearly sorted already and in place.
            var index = first + 1
            while index < delivered.count {
                let packet = delivered[index]
                var position = index
                while position > first, delivered[position - 1].arrival > packet.arrival {
                    delivered[position] = delivered[position - 1]
                    position -= 1
                }
                delivered[position] = packet
                index += 1
            }
            index = first
            while index < delivered.count {
                acknowledged.add(arrival: delivered[index].arrival, size: delivered[index].size)
                index += 1
            }
        }
        // The larger of the smoothed and the raw window: the smoothed one ignores a receiver's
        // stall (the raw window reads low), the raw one follows a probe's burst at once (the
        // smoothed one lags, and a decrease right after a probe would cut below the media).
        defer { if let smoothed = acknowledged.bps { deliveredBps = max(smoothed, deliveredBps ?? 0) } }
        guard !delivered.isEmpty else { return }
        let latest = delivered[delivered.count - 1].arrival
        // Drop what left the window (in place: the oldest first, arrival order).
        var stale = 0
        while stale < delivered.count, latest - delivered[stale].arrival > config.deliveryWindow { stale += 1 }
        if stale > 0 { delivered.removeSubrange(0..<stale) }
        var recentStart = delivered.count
        while recentStart > 0, latest - delivered[recentStart - 1].arrival <= config.recentWindow { recentStart -= 1 }
        recentReceivedBps = Self.rate(of: delivered, from: recentStart)
        guard delivered.count >= 2 else { return }
        let first = delivered[0].arrival
        // Rate over the window, or over the span seen so far (at least 100 ms to avoid spikes).
        let span = max(latest - first, min(config.deliveryWindow, 100_000))
        var bytes = 0
        var index = 1
        while index < delivered.count { bytes += delivered[index].size; index += 1 }
        deliveredBps = Double(bytes * 8) * 1_000_000 / Double(span)
    }

    mutating func updateDelayBased(now: Int64) {
        guard var estimate = delayBasedBps else { return }
        let dt = Double(min(max(now - (lastDelayUpdate ?? now), 0), 1_000_000)) / 1_000_000
        lastDelayUpdate = now
        // Over-use without a standing queue (`Config.minStandingQueue`) is the receiver's
        // timing, not the path: hold instead of cutting.
        let usage = detector.usage == .overusing && queueDelay.standing < config.minStandingQueue ? .underusing : detector.usage
        switch usage {
        case .overusing:
            lastOveruse = now
            // One decrease per 200 ms (≈ an RTT plus feedback interval) so the queue can drain.
            if lastDelayDecrease.map({ now - $0 >= 200_000 }) ?? true {
                if let growth = queueOnset.delayGrowth(), growth < config.minOveruseGrowth {
                    // The newest packets' delay is not rising: the link carries what we send
                    // (or its queue drains). Hold — no increase, and no cut below what is
                    // being delivered (see `Config.minOveruseGrowth`).
                    overuseHolds += 1
                    break
                }
                // The recent rate only behind a standing queue (`Config.standingQueue`): a
                // loaded receiver's stalls also trip over-use, and its recent rate then reads
                // low (seen end to end: 95 kbit/s off a 200 kbit/s flow, video paused with no
                // congestion), while a stall never builds 150 ms of queue that stays.
                // Behind any queue (an over-use counts only with ≥ 30 ms standing) the queued
                // packets leave it back to back: their arrival rate (`QueueOnset.drainRate`)
                // is the capacity, where the 250 ms or smoothed rates also hold the gaps of an
                // application-limited flow (a layer-0 keyframe through a 300 kbit/s cap: the
                // smoothed rate read the ≈ 210k being sent and cut the estimate to 180k, below
                // layer 0 + audio — BrowserSimulcastCapTests run 7).
                let queued = queueDelay.standing >= config.standingQueue
                var rate = (queued ? recentReceivedBps : nil) ?? deliveredBps ?? estimate
                if let base = queueDelay.base, let drain = queueOnset.drainRate(base: base) { rate = max(rate, drain) }
                estimate = min(estimate, config.decreaseFactor * rate)
                linkCapacity = rate
                lastDelayDecrease = now
            }
        case .underusing:
            break
        case .normal:
            if let capacity = linkCapacity, estimate > 1.5 * capacity || estimate < 0.5 * capacity {
                linkCapacity = nil  // far from the old capacity: the link changed
            }
            // Increase only while below 1.5 × delivered + 10 kbit/s, and never past it; an
            // estimate already above (after a probe) is kept, not pulled down
            // (libwebrtc `AimdRateControl::ChangeBitrate`).
            // …or toward a rate a probe confirmed within `probeConfirmedHold`: with the video
            // paused only the audio is delivered (≈ 100k), and 1.5 × that would hold an
            // estimate cut below layer 0 + audio there for good (cap run 1: 190k → 220k in 10 s).
            var limit = deliveredBps.map { 1.5 * $0 + 10_000 } ?? .infinity
            if let confirmed = probeConfirmed, now - confirmed.at <= Self.probeConfirmedHold { limit = max(limit, confirmed.bps) }
            if estimate < limit {
                let increased: Double
                if linkCapacity != nil {
                    // Additive: one 1200-byte packet per response time (RTT 100 ms + 100 ms),
                    // GCC §5.5 / libwebrtc `AdditiveRateIncrease`.
                    increased = estimate + 1200 * 8 / 0.2 * dt
                } else {
                    increased = estimate * growth(config.increasePerSecond, dt)
                }
                estimate = min(increased, limit)
            }
        }
        delayBasedBps = min(max(estimate, Double(config.minBps)), Double(config.maxBps))
    }

    /// Bytes after the first packet over the span of their arrivals (the first packet's
    /// bytes arrived before the span began), for `packets[start...]`; nil for fewer than 4
    /// packets or under 50 ms, too few to tell a rate from one frame's burst.
    static func rate(of packets: [(arrival: Int64, size: Int)], from start: Int) -> Double? {
        guard start >= 0, packets.count - start >= 4 else { return nil }
        let first = packets[start].arrival
        var last = first
        var bytes = 0
        var index = start + 1
        while index < packets.count {
            last = max(last, packets[index].arrival)
            bytes += packets[index].size
            index += 1
        }
        guard last - first >= 50_000 else { return nil }
        return Double(bytes * 8) * 1_000_000 / Double(last - first)
    }

    /// The growing-queue response (`QueueOnset`): a queue growing at ≥ 1 s per second of
    /// sending cuts the delay-based estimate at once to `decreaseFactor` × the rate the queue
    /// drains at, before it overflows. Never raises the estimate; idempotent while the queue
    /// keeps growing at the same capacity.
    mutating func reactToQueueOnset(now: Int64) {
        queueOnset.trim()
        if let cut = provisionalCut {
            if queueDelay.standing >= config.minStandingQueue {
                provisionalCut = nil
            } else if now - cut.at >= Self.queueOnsetConfirmation {
                provisionalCut = nil
                delayBasedBps = max(delayBasedBps ?? cut.estimate, cut.estimate)
                linkCapacity = cut.capacity
                queueOnsetReverts += 1
            }
        }
        guard lastQueueOnsetCut.map({ now - $0 >= Self.queueOnsetInterval }) ?? true,
              let base = queueDelay.base, let rate = queueOnset.growingQueueRate(base: base),
              let current = delayBasedBps else { return }
        let cut = max(config.decreaseFactor * rate, Double(config.minBps))
        guard cut < current else { return }
        provisionalCut = (now, current, linkCapacity)
        lastQueueOnsetCut = now
        lastQueueOnsetBps = rate
        delayBasedBps = cut
        linkCapacity = rate
        lastOveruse = now
        lastDelayDecrease = now
        queueOnsets += 1
    }

    /// The loss-burst response: sustained heavy loss in the last `fastLossWindow` (see
    /// `LossBurst.isSustained`) sets the loss-based estimate to the recent received rate at
    /// once. Idempotent while the link stays saturated (the received rate is the capacity),
    /// so it cannot ratchet the estimate down feedback after feedback; never raises it.
    mutating func reactToLossBurst(now: Int64) {
        guard lossBurst.isSustained(above: config.highLoss, minPackets: config.lossSamplePackets),
              let received = recentReceivedBps else { return }
        let current = lossBasedBps ?? Double(estimateBps)
        guard received < current else { return }
        lossBasedBps = max(received, Double(config.minBps))
        lossRatio = lossBurst.ratio
        lastLossDecrease = now
        lastLossUpdate = now
        lossBursts += 1
    }

    mutating func lossSample(ratio: Double, now: Int64) {
        lossRatio = ratio
        var estimate = lossBasedBps ?? Double(estimateBps)
        let dt = Double(min(max(now - (lastLossUpdate ?? now), 0), 1_000_000)) / 1_000_000
        lastLossUpdate = now
        if ratio > config.highLoss {
            // Loss while the delay detector saw over-use in the last second is a queue
            // overflowing; the delay controller already backs off for it, and counting it twice
            // would drive the estimate far below the capacity it just measured.
            let explainedByDelay = lastOveruse.map { now - $0 <= 1_000_000 } ?? false
            if !explainedByDelay, lastLossDecrease.map({ now - $0 >= config.lossDecreaseInterval }) ?? true {
                estimate *= 1 - ratio / 2
                lastLossDecrease = now
            }
        } else if ratio < config.lowLoss {
            let ceiling = delayBasedBps ?? rembBps.map { Double($0) } ?? Double(config.maxBps)
            estimate = max(estimate, min(estimate * growth(config.increasePerSecond, dt) + 1000 * dt, ceiling))
        }
        lossBasedBps = min(max(estimate, Double(config.minBps)), Double(config.maxBps))
    }
}
