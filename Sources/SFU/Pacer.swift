/// What a packet is to the pacer (libwebrtc's `RtpPacketMediaType` priorities).
public enum PacketClass: UInt8, Sendable {
    /// Never waits: sent at once and charged to the lane's budget (libwebrtc gives audio the
    /// top priority; a listener notices 40 ms of added audio delay, a viewer does not).
    case audio
    /// A NACK answer: queued ahead of new video (it repairs a frame the receiver already
    /// waits for).
    case retransmission
    /// New video.
    case video
}

/// What `Pacer.admit` decided for a packet.
public enum PacerAdmission: Equatable, Sendable {
    /// Send it now: the lane's budget allows it and nothing of its class or a higher one
    /// waits. Its transport-wide number (`Pacer.transportSequence(of:)` before the call) is
    /// consumed.
    case sendNow
    /// Copied into a pool slot; it leaves through `release`.
    case queued
    /// Pool or lane full: dropped (video: with the rest of its frame, and a keyframe
    /// request in `takeKeyframeRequest`).
    case dropped
}

/// A queued packet leaving (`Pacer.release`). `bytes` is its slot: the packet is the first
/// `length` bytes, its transport-wide number already patched in; the rest is room to
/// protect it in place. Valid only during the callback.
public struct PacedPacket {
    public let lane: ParticipantID
    public let packetClass: PacketClass
    public let bytes: UnsafeMutableRawBufferPointer
    public let length: Int
    public let transportSequenceNumber: UInt16
    /// Time it waited, µs.
    public let queued: Int64
}

/// A video frame the pacer dropped on `lane`: ask the publisher for a keyframe of the
/// stream the subscriber receives as `ssrc` (its decoder's reference chain is broken).
public struct PacerKeyframeRequest: Equatable, Sendable {
    public let lane: ParticipantID
    public let ssrc: UInt32
}

/// Send-side pacer of one media worker, after libwebrtc's `PacingController`
/// (docs/rtcp.md, "Pacing"). Sans-I/O: every call takes `now` (µs, monotonic).
///
/// One *lane* per subscriber transport (indexed by `ParticipantID.raw`): a budget kept as
/// media *debt* in bytes that drains at the lane's pacing rate (`pacingFactor` × its
/// downlink estimate), two FIFOs (retransmissions before video) and the transport-wide
/// sequence counter, so numbers are assigned in egress order. A packet is sent at once when
/// its lane's debt is below the burst budget and nothing it must follow waits — the common
/// case, which copies nothing; otherwise it is copied into a slot of the pool every lane
/// shares (`PacerConfig.slotCount`, allocated once: no per-subscriber queue memory) and
/// leaves through `release`, which the media loop calls every `processInterval` while
/// anything is queued. Nothing allocates after `init` except lane growth for a
/// `ParticipantID` above any seen before (once per new participant, reserved for 256).
public final class Pacer {
    public let config: PacerConfig
    public internal(set) var stats = PacerStats()

    struct Fifo {
        var head: Int32 = -1
        var tail: Int32 = -1
        var isEmpty: Bool { head < 0 }
    }

    struct Lane {
        /// Pacing rate, bit/s; 0: unpaced (no estimate yet).
        var rateBps: UInt64 = 0
        /// Bytes sent ahead of the rate.
        var debt: Double = 0
        var updatedAt: Int64 = 0
        var retransmissions = Fifo()
        var video = Fifo()
        var packets = 0
        var bytes = 0
        var transportSequence: UInt16 = 0
        /// The video frame being dropped: its later packets are dropped too.
        var droppingSSRC: UInt32 = 0
        var droppingTimestamp: UInt32 = 0
        var dropping = false
        var active = false
        /// This lane's share of `stats` (docs/stats.md, "Pacer").
        var counters = PacerStats()
    }

    struct Slot {
        var next: Int32 = -1
        var length: Int32 = 0
        /// Offset of the 2-byte transport-wide number in the packet, -1: none.
        var transportOffset: Int32 = -1
        var ssrc: UInt32 = 0
        var timestamp: UInt32 = 0
        var enqueuedAt: Int64 = 0
        var packetClass: PacketClass = .video
    }

    let storage: UnsafeMutableRawPointer
    var slots: [Slot]
    var freeHead: Int32
    public internal(set) var freeSlotCount: Int
    /// Indexed by `ParticipantID.raw` (`PacerLaneStore`: no exclusivity or uniqueness check per access).
    let lanes = PacerLaneStore(capacity: 256)
    /// Lanes with queued packets (indices into `lanes`).
    var activeLanes: [UInt32] = []
    var keyframeRequests: [PacerKeyframeRequest] = []

    public init(config: PacerConfig = PacerConfig()) {
        var config = config
        config.slotCount = max(config.slotCount, 1)
        config.slotSize = max(config.slotSize, config.trailerRoom + 64)
        self.config = config
        storage = UnsafeMutableRawPointer.allocate(byteCount: config.slotCount * config.slotSize, alignment: 16)
        slots = Array(repeating: Slot(), count: config.slotCount)
        for index in 0..<(config.slotCount - 1) { slots[index].next = Int32(index + 1) }
        freeHead = 0
        freeSlotCount = config.slotCount
        activeLanes.reserveCapacity(256)
        keyframeRequests.reserveCapacity(64)
    }

    deinit {
        storage.deallocate()
        lanes.deallocate()
    }

    /// Bytes of pool memory (allocated once in `init`).
    public var poolBytes: Int { config.slotCount * config.slotSize }

    // MARK: Lanes

    func lane(_ id: ParticipantID) -> Int {
        let raw = Int(id.raw)
        while lanes.count <= raw { lanes.append(Lane()) }
        return raw
    }

    /// Sets `id`'s pacing rate from its downlink estimate (bit/s): `pacingFactor` × it, at
    /// least `minRateBps`. nil: unpaced (no estimate to trust yet; queued packets drain at the
    /// next `release`).
    public func setEstimate(_ id: ParticipantID, bps: UInt64?, now: Int64) {
        let index = lane(id)
        drain(index, rate: lanes[index].rateBps, now: now)
        guard let bps else { lanes[index].rateBps = 0; return }
        lanes[index].rateBps = max(UInt64(Double(bps) * config.pacingFactor), config.minRateBps)
    }

    /// The lane's pacing rate, bit/s (0: unpaced).
    public func rate(of id: ParticipantID) -> UInt64 {
        Int(id.raw) < lanes.count ? lanes[Int(id.raw)].rateBps : 0
    }

    /// The transport-wide number the lane's next packet gets: write it into a packet before
    /// `admit` (kept when the answer is `.sendNow`; a queued packet is renumbered at egress).
    public func transportSequence(of id: ParticipantID) -> UInt16 {
        lanes[lane(id)].transportSequence
    }

    /// Consumes the lane's next transport-wide number for a packet sent outside the pacer
    /// (probe padding, which `Router` paces at the probe's own rate).
    public func takeTransportSequence(_ id: ParticipantID) -> UInt16 {
        let index = lane(id)
        let value = lanes[index].transportSequence
        lanes[index].transportSequence &+= 1
        lanes[index].counters.probePackets &+= 1
        stats.probePackets &+= 1
        return value
    }

    /// Packets and bytes queued on the lane.
    public func queued(_ id: ParticipantID) -> (packets: Int, bytes: Int) {
        Int(id.raw) < lanes.count ? (lanes[Int(id.raw)].packets, lanes[Int(id.raw)].bytes) : (0, 0)
    }

    /// The lane's counters and its queue at `now` (µs); nil for a lane never used.
    public func laneStats(_ id: ParticipantID, now: Int64) -> PacerLaneStats? {
        let raw = Int(id.raw)
        guard raw < lanes.count else { return nil }
        let age = oldestEnqueue(raw).map { max(0, now - $0) } ?? 0
        return PacerLaneStats(counters: lanes[raw].counters, rateBps: lanes[raw].rateBps, queuedPackets: lanes[raw].packets,
                              queuedBytes: lanes[raw].bytes, queueAge: age)
    }

    /// Forgets the lane (its participant left): queued packets are discarded, the
    /// transport-wide counter restarts for the next participant with this id.
    public func removeLane(_ id: ParticipantID) {
        let raw = Int(id.raw)
        guard raw < lanes.count else { return }
        freeAll(&lanes[raw].retransmissions)
        freeAll(&lanes[raw].video)
        lanes[raw] = Lane()
        if let position = activeLanes.firstIndex(of: UInt32(raw)) { activeLanes.remove(at: position) }
    }

    /// A dropped frame's keyframe request waits for `takeKeyframeRequest`.
    public var hasKeyframeRequests: Bool { !keyframeRequests.isEmpty }

    /// The next keyframe request caused by a dropped frame (nil: none pending).
    public func takeKeyframeRequest() -> PacerKeyframeRequest? {
        keyframeRequests.popLast()
    }

    // MARK: Budget

    /// Burst budget of a lane at `rate`: what it may run ahead, at least one full packet.
    func burstBytes(_ rate: UInt64) -> Double {
        max(Double(rate) * Double(config.burstInterval) / 8_000_000, 1_200)
    }

    /// Lets the lane's debt drain at `rate` up to `now`.
    func drain(_ index: Int, rate: UInt64, now: Int64) {
        let elapsed = now - lanes[index].updatedAt
        lanes[index].updatedAt = max(now, lanes[index].updatedAt)
        guard elapsed > 0, lanes[index].debt > 0 else { return }
        lanes[index].debt = max(0, lanes[index].debt - Double(min(elapsed, 10_000_000)) * Double(rate) / 8_000_000)
    }

    func charge(_ index: Int, bytes: Int) {
        guard lanes[index].rateBps > 0 else { return }
        let cap = Double(lanes[index].rateBps) * Double(config.maxDebtInterval) / 8_000_000
        lanes[index].debt = min(lanes[index].debt + Double(bytes), max(cap, Double(bytes)))
    }
}
