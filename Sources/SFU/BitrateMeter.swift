/// Bit rate of one stream (e.g. one simulcast layer as received from the publisher) over a
/// sliding window, in fixed buckets so memory and cost are constant per packet.
///
/// Window 1 s in 100 ms buckets by default: short enough to follow a publisher that drops a
/// layer's rate under its own congestion within a second, long enough that a keyframe (a few
/// packets' burst) does not double the figure; the layer selector's 1.3 × headroom absorbs
/// the rest. Pure: `now` is passed in (monotonic µs).
public struct BitrateMeter: Equatable, Sendable {
    public let bucketLength: Int64
    private var buckets: [Int]
    /// Start time of `buckets[head]`, the newest bucket.
    private var headStart: Int64?
    private var head = 0
    private var firstSample: Int64?

    public init(window: Int64 = 1_000_000, buckets count: Int = 10) {
        let count = max(count, 1)
        bucketLength = max(window / Int64(count), 1)
        buckets = Array(repeating: 0, count: count)
    }

    public var window: Int64 { bucketLength * Int64(buckets.count) }

    /// Adds a packet of `bytes` seen at `now`. Packets older than the newest bucket are
    /// counted in it (reordering by a few ms does not matter at this resolution).
    public mutating func add(bytes: Int, now: Int64) {
        advance(to: now)
        buckets[head] += bytes
        if firstSample == nil { firstSample = now }
    }

    /// Bits per second over the window ending at `now`; over the time since the first packet
    /// while that is shorter than the window (at least one bucket). 0 when nothing was seen
    /// in the window.
    public func bitrate(now: Int64) -> UInt64 {
        guard let headStart, let firstSample else { return 0 }
        let age = max((now - headStart) / bucketLength, 0)  // buckets elapsed since head
        guard age < Int64(buckets.count) else { return 0 }
        let bytes = total(skipping: Int(age))
        // The summed buckets span from the oldest one's start to `now` (not a whole window:
        // read right at a bucket boundary they cover 0.9 s, and dividing by 1 s read 8 % low).
        let covered = now - headStart + Int64(buckets.count - Int(age) - 1) * bucketLength
        let span = max(min(covered, now - firstSample), bucketLength)
        return UInt64(Double(bytes * 8) * 1_000_000 / Double(span))
    }

    /// The rate without the window's busiest bucket (its bytes and its time left out): what
    /// the stream carries between bursts. A keyframe — several times a frame's size, sent in
    /// one burst after every keyframe request — lands in one 100 ms bucket and lifts the
    /// plain 1 s rate by its whole size: a 180p layer's 8 kB keyframe turns 150 kbit/s into
    /// ≈ 210 kbit/s for a second, enough to make a 300 kbit/s link look too small for it and
    /// pause the video (seen end to end in the cap test: repeated 0.6–2.5 s pauses under the
    /// cap, each request's keyframe pausing it again). For steady traffic it equals `bitrate`.
    /// The layer selection reads it for one decision only, pausing the video; upgrades keep
    /// the plain rate (a bursty upper layer reads low here, against their 1.3 × headroom).
    public func sustainedBitrate(now: Int64) -> UInt64 {
        guard let headStart, let firstSample else { return 0 }
        let age = max((now - headStart) / bucketLength, 0)
        guard age < Int64(buckets.count) else { return 0 }
        let live = buckets.count - Int(age)
        let covered = now - headStart + Int64(live - 1) * bucketLength
        let span = max(min(covered, now - firstSample), bucketLength)
        // Three buckets at least (a fresh stream's first 300 ms: the plain rate).
        guard live >= 3, span >= 3 * bucketLength else { return bitrate(now: now) }
        var bytes = 0
        var peak = 0
        var peakTime: Int64 = 0
        for offset in 0..<live {
            let value = buckets[(head - offset + buckets.count) % buckets.count]
            bytes += value
            // The newest bucket covers only `now - headStart` so far.
            let time = offset == 0 ? max(now - headStart, 1) : bucketLength
            if value > peak { (peak, peakTime) = (value, time) }
        }
        let rest = span - peakTime
        guard rest > 0 else { return bitrate(now: now) }
        return UInt64(Double((bytes - peak) * 8) * 1_000_000 / Double(rest))
    }

    /// Sum of buckets still inside the window when `skipped` newer empty buckets have passed.
    private func total(skipping skipped: Int) -> Int {
        var sum = 0
        for offset in 0..<(buckets.count - skipped) {
            sum += buckets[(head - offset + buckets.count) % buckets.count]
        }
        return sum
    }

    private mutating func advance(to now: Int64) {
        guard let start = headStart else {
            headStart = now - ((now % bucketLength) + bucketLength) % bucketLength
            return
        }
        guard now >= start + bucketLength else { return }
        let steps = (now - start) / bucketLength
        // A counted loop, not `for _ in 0..<n` over Int64: unspecialized (debug) iteration of
        // Range<Int64> goes through the stdlib's generic IndexingIterator, which allocates
        // (SFUServerAllocationTests counts allocations on the forwarding path).
        var remaining = Int(min(steps, Int64(buckets.count)))
        while remaining > 0 {
            head = (head + 1) % buckets.count
            buckets[head] = 0
            remaining -= 1
        }
        headStart = start + steps * bucketLength
    }
}
