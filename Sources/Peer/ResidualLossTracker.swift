import RTP

/// Residual loss of one received stream: what is still missing once repair had its chance.
/// A sequence gap opens "missing" entries; an entry is *repaired* when its packet arrives
/// later (RTX, a resent original or plain reordering) and *lost* when still missing `window`
/// after the gap was seen. Each sequence number counts once. Pure: `now` (µs) is passed in.
///
/// This is the loss a receiver with a `window`-deep jitter buffer would play out, the figure
/// the issue's ≤ 0.5 % bound is about (RFC 3550's cumulative loss counts duplicates against
/// it and does not say when a packet came too late).
struct ResidualLossTracker {
    enum Arrival: Equatable {
        case first
        /// Newer than everything before; `gap` packets before it are now missing.
        case new(gap: Int)
        /// A missing packet that arrived within the window.
        case repaired
        /// Already received, or given up on (arrived after the window).
        case duplicateOrLate
        /// Jumped more than `restartGap` away: tracking restarted, the gap is not counted.
        case restarted
    }

    /// 1000: the SFU NackGenerator's `restartGap` (mediasoup `MaxNackPackets`): a larger jump
    /// is an outage or a new source, not loss to count packet by packet.
    static let restartGap: Int64 = 1000

    let window: Int64
    private(set) var residualLost: UInt64 = 0
    private(set) var repaired: UInt64 = 0
    private(set) var duplicates: UInt64 = 0
    private(set) var restarts: UInt64 = 0
    private var unwrapper = SequenceNumberUnwrapper()
    private var highest: Int64?
    /// Missing packets in increasing sequence order; `detectedAt` is non-decreasing with it
    /// (gaps are found in order), so expiry pops from the front.
    private var missing: [(extended: Int64, detectedAt: Int64)] = []
    private var missingHead = 0

    init(windowMicroseconds: Int64) { window = windowMicroseconds }

    var pending: Int { missing.count - missingHead }

    mutating func record(_ sequenceNumber: UInt16, now: Int64) -> Arrival {
        settle(now: now)
        guard let highest else {
            highest = unwrapper.unwrap(sequenceNumber)
            return .first
        }
        let extended = unwrapper.peek(sequenceNumber)
        if abs(extended - highest) > Self.restartGap {
            restarts += 1
            missing.removeAll(keepingCapacity: true)
            missingHead = 0
            unwrapper = SequenceNumberUnwrapper()
            self.highest = unwrapper.unwrap(sequenceNumber)
            return .restarted
        }
        if extended > highest {
            _ = unwrapper.unwrap(sequenceNumber)
            self.highest = extended
            var value = highest + 1
            while value < extended {
                missing.append((value, now))
                value += 1
            }
            return .new(gap: Int(extended - highest - 1))
        }
        // At or below the highest: a missing one coming in, or a duplicate.
        var low = missingHead, high = missing.count
        while low < high {
            let mid = (low + high) / 2
            if missing[mid].extended < extended { low = mid + 1 } else { high = mid }
        }
        guard low < missing.count, missing[low].extended == extended else {
            duplicates += 1
            return .duplicateOrLate
        }
        missing.remove(at: low)
        repaired += 1
        return .repaired
    }

    /// Declares lost whatever has been missing for longer than the window.
    mutating func settle(now: Int64) {
        while missingHead < missing.count, now - missing[missingHead].detectedAt > window {
            residualLost += 1
            missingHead += 1
        }
        // 256: compact the consumed prefix now and then instead of on every expiry.
        if missingHead > 256, missingHead * 2 > missing.count {
            missing.removeFirst(missingHead)
            missingHead = 0
        }
    }
}
