import RTP

/// Counters of one generator.
public struct NackGeneratorStats: Equatable, Sendable {
    /// Distinct packets NACKed at least once.
    public var requested: UInt64 = 0
    /// Sequence numbers sent in NACKs, retries included.
    public var nackedSequenceNumbers: UInt64 = 0
    /// NACK packets produced (at most one per `tick`).
    public var nackPackets: UInt64 = 0
    /// Missing packets that arrived after being NACKed (by RTX or late original).
    public var recovered: UInt64 = 0
    /// Missing packets that arrived before any NACK: reordering absorbed by the wait.
    public var reorderedBeforeNACK: UInt64 = 0
    /// Given up after `maxRetries` NACKs and one more retry interval.
    public var lostAfterRetries: UInt64 = 0
    /// Given up because a repair could no longer arrive within `maxAge`.
    public var tooLate: UInt64 = 0
    /// Dropped because more than `maxMissing` packets were missing.
    public var overflowed: UInt64 = 0
    /// Tracking restarted on a sequence jump larger than `restartGap`.
    public var restarts: UInt64 = 0
    public init() {}
}

/// What an arrival meant to the generator.
public enum NackArrival: Equatable, Sendable {
    /// First packet of the stream (or of a restart: see `restarted`).
    case first
    case inOrder
    /// Newer than expected: `missing` packets before it are now awaited.
    case gap(missing: Int)
    /// A missing packet arrived before it was NACKed.
    case reordered
    /// A missing packet arrived after being NACKed.
    case recovered
    /// Already received, given up on, or older than tracking.
    case duplicateOrLate
    /// The sequence jumped by more than `restartGap`: tracking restarted (ask for a keyframe).
    case restarted
}

/// Detects packets missing on a publisher's uplink (one stream, one SSRC) and decides when
/// to NACK them (RFC 4585 §6.2.1): after a reorder wait, in one batch per tick, retried at
/// RTT spacing, given up when a repair could no longer arrive in time. Anchors: mediasoup
/// `NackGenerator`, libwebrtc `NackRequester` (modules/video_coding/nack_requester.cc).
///
/// Timing: a gap's packets are NACKed first when older than the reorder wait
/// `clamp(max(3 × jitter, latest observed reordering × 1.25), 10 ms, 150 ms)`; arrivals are
/// re-checked at every tick, so a reordered packet that shows up inside the wait is never
/// asked for. Retries come every max(RTT + wait, 20 ms). Pure: `now` (µs) is passed in.
public struct NackGenerator: Sendable {
    struct Missing {
        var extended: Int64
        var detectedAt: Int64
        var sentAt = Int64.min
        var firstSentAt = Int64.min
        var retries = 0
    }

    /// Recent reordering: how long after its gap was seen a missing packet arrived.
    struct ReorderSample {
        var lateness: Int64 = 0
        var at = Int64.min
    }

    /// Observed reordering older than this no longer widens the wait: 10 s, so one burst of
    /// route change does not slow NACKs for the rest of the call.
    static let reorderSampleLifetime: Int64 = 10_000_000
    static let reorderSampleCount = 32
    /// Room reserved up front for awaited packets: 64 (2.5 KB). Reserving `maxMissing` (1000,
    /// 40 KB) per stream made the uplink NACK lists the second-largest item of a member's
    /// memory (3 × 40 KB per publisher, docs/benchmarks.md "Memory per participant") while
    /// a typical loss burst leaves a few dozen packets awaited. A larger burst grows the list
    /// by doubling — at most 4 times per stream's lifetime (64 → 1024), never per packet.
    static let initialMissingCapacity = 64

    public let config: NackGeneratorConfig
    public private(set) var stats = NackGeneratorStats()
    private var unwrapper = SequenceNumberUnwrapper()
    private var highest: Int64?
    /// Sorted by extended sequence number.
    private var missing: ContiguousArray<Missing> = []
    private var samples: ContiguousArray<ReorderSample>
    private var nextSample = 0
    /// RTT given to the latest `tick`, used by arrivals that pass none.
    private var tickRTT: Int64?

    public init(config: NackGeneratorConfig) {
        self.config = config
        missing.reserveCapacity(min(config.maxMissing + 1, Self.initialMissingCapacity))
        samples = ContiguousArray(repeating: ReorderSample(), count: Self.reorderSampleCount)
    }

    /// Packets currently awaited.
    public var missingCount: Int { missing.count }

    /// Records an arrival.
    /// - Parameters:
    ///   - sequenceNumber: the media sequence number (for RTX: the OSN, `RTXPacket.originalSequenceNumber`).
    ///   - now: arrival time, µs.
    ///   - isRetransmission: arrived on the RTX SSRC. Such arrivals never count as reordering.
    ///   - rtt: current RTT estimate (µs), used to tell a late original from a repair when
    ///     retransmissions come as originals (no RTX); nil: the one given to the last `tick`.
    @discardableResult
    public mutating func received(_ sequenceNumber: UInt16, now: Int64, isRetransmission: Bool = false, rtt: Int64? = nil) -> NackArrival {
        guard let highest else {
            self.highest = unwrapper.unwrap(sequenceNumber)
            return .first
        }
        let extended = unwrapper.peek(sequenceNumber)
        if extended > highest {
            let jump = extended - highest
            guard jump <= config.restartGap else { return restart(sequenceNumber) }
            _ = unwrapper.unwrap(sequenceNumber)
            self.highest = extended
            guard jump > 1 else { return .inOrder }
            var value = highest + 1
            while value < extended {
                missing.append(Missing(extended: value, detectedAt: now))
                value += 1
            }
            if missing.count > config.maxMissing {
                let excess = missing.count - config.maxMissing
                stats.overflowed &+= UInt64(excess)
                missing.removeFirst(excess)
            }
            return .gap(missing: Int(jump - 1))
        }
        if extended == highest { return .duplicateOrLate }
        if highest - extended > config.restartGap { return restart(sequenceNumber) }
        guard let index = find(extended) else { return .duplicateOrLate }
        let entry = missing.remove(at: index)
        if entry.retries == 0 {
            if !isRetransmission { addSample(now - entry.detectedAt, now: now) }
            stats.reorderedBeforeNACK &+= 1
            return .reordered
        }
        // A late original that arrived sooner than any repair could have (half an RTT after
        // the first NACK) is reordering the wait was too short for: learn from it.
        if !isRetransmission, now - entry.firstSentAt < (rtt ?? tickRTT ?? config.defaultRTT) / 2 {
            addSample(now - entry.detectedAt, now: now)
        }
        stats.recovered &+= 1
        return .recovered
    }

    /// The current reorder wait, µs (see the type's documentation).
    /// - Parameter jitter: the stream's RFC 3550 interarrival jitter in µs (nil: unknown).
    public func reorderWait(now: Int64, jitter: Int64?) -> Int64 {
        var observed: Int64 = 0
        // Index loop, no `for in`: unspecialized in debug builds, `IndexingIterator.next()`
        // allocates per element (32 per stream per tick here; issue 3).
        var index = 0
        while index < samples.count {
            let sample = samples[index]
            index += 1
            if sample.at != Int64.min && now - sample.at <= Self.reorderSampleLifetime {
                observed = max(observed, sample.lateness)
            }
        }
        let divisor = max(config.observedReorderMarginDivisor, 1)
        let wanted = max(config.jitterMultiplier * max(jitter ?? 0, 0), observed + observed / divisor)
        return min(max(wanted, config.minReorderWait), config.maxReorderWait)
    }

    /// Collects the sequence numbers to NACK now into `out` (appended, oldest first) and
    /// drops packets given up on. Call once per tick (every ~20 ms) per stream and send the
    /// result as one NACK: batching below jitter noise costs no repair time and keeps
    /// feedback to one packet per tick.
    /// - Parameters:
    ///   - rtt: the publisher leg's RTT, µs (nil: `defaultRTT`).
    ///   - jitter: interarrival jitter, µs.
    public mutating func tick(now: Int64, rtt: Int64?, jitter: Int64?, into out: inout [UInt16]) {
        tickRTT = rtt
        let wait = reorderWait(now: now, jitter: jitter)
        let roundTrip = max(rtt ?? config.defaultRTT, 0)
        // A repair comes back over the same jittery path as the originals, so it can be late
        // by as much as the reorder window: retry after RTT + wait, not RTT alone.
        let retryInterval = max(roundTrip + wait, config.minRetryInterval)
        var added = 0
        var kept = 0
        for index in missing.indices {
            var entry = missing[index]
            let age = now - entry.detectedAt
            if entry.retries >= config.maxRetries {
                if entry.retries == 0 || now - entry.sentAt >= retryInterval {
                    stats.lostAfterRetries &+= 1
                    continue
                }
            } else if age + roundTrip > config.maxAge {
                stats.tooLate &+= 1
                continue
            } else if added < config.maxPerNACK,
                      entry.retries == 0 ? age >= wait : now - entry.sentAt >= retryInterval {
                if entry.retries == 0 {
                    entry.firstSentAt = now
                    stats.requested &+= 1
                }
                entry.retries += 1
                entry.sentAt = now
                out.append(UInt16(truncatingIfNeeded: entry.extended))
                added += 1
            }
            missing[kept] = entry
            kept += 1
        }
        missing.removeLast(missing.count - kept)
        if added > 0 {
            stats.nackPackets &+= 1
            stats.nackedSequenceNumbers &+= UInt64(added)
        }
    }

    /// `tick` packaged as one RTCP generic NACK, nil when nothing is due.
    /// - Parameters:
    ///   - senderSSRC: our SSRC on the publisher leg (`controlSSRC`).
    ///   - mediaSSRC: the publisher stream's SSRC.
    public mutating func makeNACK(senderSSRC: UInt32, mediaSSRC: UInt32, now: Int64, rtt: Int64?, jitter: Int64?) -> RTCPGenericNACK? {
        var sequenceNumbers: [UInt16] = []
        tick(now: now, rtt: rtt, jitter: jitter, into: &sequenceNumbers)
        return sequenceNumbers.isEmpty ? nil : RTCPGenericNACK(senderSSRC: senderSSRC, mediaSSRC: mediaSSRC, sequenceNumbers: sequenceNumbers)
    }

    /// RFC 3550 jitter (RTP timestamp units, `ReceptionStats.jitter`) in µs.
    public static func jitterMicroseconds(_ units: UInt32, clockRate: UInt32) -> Int64? {
        guard clockRate > 0 else { return nil }
        return Int64(units) * 1_000_000 / Int64(clockRate)
    }

    private mutating func restart(_ sequenceNumber: UInt16) -> NackArrival {
        stats.restarts &+= 1
        missing.removeAll(keepingCapacity: true)
        unwrapper = SequenceNumberUnwrapper()
        highest = unwrapper.unwrap(sequenceNumber)
        return .restarted
    }

    private mutating func addSample(_ lateness: Int64, now: Int64) {
        samples[nextSample] = ReorderSample(lateness: max(lateness, 0), at: now)
        nextSample = (nextSample + 1) % Self.reorderSampleCount
    }

    /// Index of `extended` in the sorted missing list.
    private func find(_ extended: Int64) -> Int? {
        var low = 0
        var high = missing.count
        while low < high {
            let mid = (low + high) / 2
            if missing[mid].extended < extended { low = mid + 1 } else { high = mid }
        }
        return low < missing.count && missing[low].extended == extended ? low : nil
    }
}
