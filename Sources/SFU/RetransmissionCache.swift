import RTP

/// Sizing of one retransmission store (one publisher stream). Every value has its reason
/// next to it.
public struct RetransmissionCacheConfig: Equatable, Sendable {
    /// Packets indexed (ring slots).
    public var capacity: Int
    /// Bytes of packet storage (packets are stored back to back, not in MTU-sized slots).
    public var byteCapacity: Int
    /// Oldest packet still answered, µs. A NACK for an older packet is not answered: the
    /// repair would arrive after the receiver's jitter buffer gave the frame up.
    public var maxAge: Int64

    public init(capacity: Int, byteCapacity: Int? = nil, maxAge: Int64) {
        self.capacity = max(capacity, 1)
        self.byteCapacity = max(byteCapacity ?? self.capacity * RetransmissionCache.slotSize, RetransmissionCache.slotSize)
        self.maxAge = max(maxAge, 0)
    }

    /// Video: 600 packets, 192 KB, 1 s. 600 is libwebrtc's `kMinSendSidePacketHistorySize`
    /// (the sender-side history Chrome keeps per video stream). 192 KB: 1 s of the issue's
    /// 1.5 Mbit/s top simulcast layer, 0.6 s of Chrome's 720p cap (2.5 Mbit/s) — still three
    /// round trips of 200 ms, i.e. a NACK and two retries (the byte bound then evicts before
    /// the age bound); twice that cost 190 KB more per publisher and broke the 500 KB per
    /// participant target (docs/benchmarks.md, "Memory per participant"). 1 s: a NACK needs
    /// RTT (up to ~500 ms on bad links) to reach us plus one retry at RTT spacing; older
    /// repairs miss the receiver's playout anyway.
    public static let video = RetransmissionCacheConfig(capacity: 600, byteCapacity: 192 * 1024, maxAge: 1_000_000)
    /// Audio: 100 packets, 16 KB, 1 s. Opus sends 50 packets/s (20 ms frames), so 100
    /// packets cover 2 s; 16 KB is 1 s at 128 kbit/s (stereo music; speech is 32–64 kbit/s,
    /// 2–4 s): the age bound (same reasoning as video) is the one that binds.
    public static let audio = RetransmissionCacheConfig(capacity: 100, byteCapacity: 16 * 1024, maxAge: 1_000_000)

    /// The preset for a media kind.
    public static func forKind(_ kind: MediaKind) -> RetransmissionCacheConfig {
        kind == .video ? video : audio
    }

    /// The preset for one layer of a track: each simulcast layer below the top gets a
    /// quarter of the bytes and of the packets of the one above it (Chrome halves the
    /// resolution per layer and caps 720p/360p/180p at 2.5/0.7/0.2 Mbit/s: about ÷4 per
    /// step), never below 16 KB (a low-layer keyframe) or 64 packets (2 s at the low
    /// layer's ~30 packets/s).
    public static func forLayer(_ layer: Int, highestLayer: Int, kind: MediaKind) -> RetransmissionCacheConfig {
        var config = forKind(kind)
        let steps = min(max(highestLayer - layer, 0), 4)
        config.byteCapacity = max(config.byteCapacity >> (2 * steps), 16 * 1024)
        config.capacity = max(config.capacity >> (2 * steps), min(config.capacity, 64))
        return config
    }
}

/// The original packets of one publisher stream (one SSRC / simulcast layer), as received
/// (SRTP removed; a publisher's RTX repair stored in its unwrapped form), kept so
/// subscribers' NACKs can be answered (RFC 4585 §6.2.1, RFC 4588): each subscription keeps
/// only a `SentPacketLog` mapping its outgoing numbers back here, and the answer is rewritten
/// for that subscriber by the forward path's own writer (`Forward.write`). Stored once per
/// arrival, not once per subscriber. Anchors: LiveKit's per-track buffer + sequencer,
/// libwebrtc's `RtpPacketHistory`.
///
/// Storage is one preallocated byte ring (packets back to back) plus a preallocated index of
/// `capacity` slots; insert and lookup never allocate. Packets are keyed by sequence number,
/// extended to 64 bits (`SequenceNumberUnwrapper`) so lookups stay correct across the
/// 65535 → 0 wrap; slot = extended number mod capacity, and a slot only answers for the exact
/// extended number it holds, while its bytes have not been overwritten. Bounded by count (the
/// index), by bytes (the ring) and by age (`maxAge`, checked on lookup).
///
/// Not thread-safe: owned by the router's worker thread like the rest of its state.
public final class RetransmissionCache {
    /// Largest packet stored (a full Ethernet MTU payload). Larger packets are refused
    /// (counted in `refused`); WebRTC senders keep packets ≤ ~1200 B, so none should be.
    public static let slotSize = 1500
    /// A packet further behind the newest than this restarts the cache (the sequence jumped,
    /// e.g. a re-published track): RFC 3550 §A.1 MAX_DROPOUT.
    public static let restartDistance: Int64 = 3000

    struct Slot {
        /// Extended sequence number held, `Int64.min` = empty.
        var extended = Int64.min
        /// Where its bytes start in the ring's logical (ever growing) byte numbering.
        var position: Int64 = 0
        var storedAt: Int64 = 0
        var length: Int32 = 0
    }

    public let config: RetransmissionCacheConfig
    private let bytes: UnsafeMutableRawPointer
    private let slots: UnsafeMutablePointer<Slot>
    private var unwrapper = SequenceNumberUnwrapper()
    /// Newest extended sequence number stored.
    private var newest: Int64?
    /// Logical end of the bytes written so far; bytes before `head - byteCapacity` are gone.
    private var head: Int64 = 0
    /// Packets refused: too large, too short, or too old for the ring.
    public private(set) var refused: UInt64 = 0
    /// Times the ring was cleared because the sequence jumped.
    public private(set) var restarts: UInt64 = 0

    public init(config: RetransmissionCacheConfig) {
        self.config = config
        bytes = UnsafeMutableRawPointer.allocate(byteCount: config.byteCapacity, alignment: 16)
        slots = UnsafeMutablePointer<Slot>.allocate(capacity: config.capacity)
        slots.initialize(repeating: Slot(), count: config.capacity)
    }

    deinit {
        slots.deinitialize(count: config.capacity)
        slots.deallocate()
        bytes.deallocate()
    }

    /// Bytes held by this store (byte ring + index).
    public var memoryFootprint: Int { config.byteCapacity + config.capacity * MemoryLayout<Slot>.stride }

    /// Stores a packet under its sequence number (bytes 2–3). Returns false when refused:
    /// shorter than an RTP header, longer than `slotSize`, or older than the ring holds.
    @discardableResult
    public func insert(_ packet: UnsafeRawBufferPointer, now: Int64) -> Bool {
        guard packet.count >= 12 else {
            refused &+= 1
            return false
        }
        return insert(packet, sequenceNumber: UInt16(packet[2]) << 8 | UInt16(packet[3]), now: now)
    }

    /// Stores `packet` under `sequenceNumber`.
    @discardableResult
    public func insert(_ packet: UnsafeRawBufferPointer, sequenceNumber: UInt16, now: Int64) -> Bool {
        guard packet.count >= 12, packet.count <= Self.slotSize, let base = packet.baseAddress else {
            refused &+= 1
            return false
        }
        let capacity = Int64(config.capacity)
        var extended = unwrapper.peek(sequenceNumber)
        if let newest {
            if extended > newest {
                if extended - newest > Self.restartDistance { extended = restart(sequenceNumber) } else {
                    _ = unwrapper.unwrap(sequenceNumber)
                    self.newest = extended
                }
            } else if newest - extended > Self.restartDistance {
                extended = restart(sequenceNumber)
            } else if newest - extended >= capacity {
                refused &+= 1
                return false
            }
        } else {
            extended = unwrapper.unwrap(sequenceNumber)
            newest = extended
        }
        // Back to back in the byte ring; a packet that would straddle the end starts over at 0.
        let ringSize = Int64(config.byteCapacity)
        var offset = Int(head % ringSize)
        if offset + packet.count > config.byteCapacity {
            head += ringSize - Int64(offset)
            offset = 0
        }
        (bytes + offset).copyMemory(from: base, byteCount: packet.count)
        let index = Int(((extended % capacity) + capacity) % capacity)
        slots[index] = Slot(extended: extended, position: head, storedAt: now, length: Int32(packet.count))
        head += Int64(packet.count)
        return true
    }

    private func restart(_ sequenceNumber: UInt16) -> Int64 {
        restarts &+= 1
        for index in 0..<config.capacity { slots[index].extended = Int64.min }
        unwrapper = SequenceNumberUnwrapper()
        let extended = unwrapper.unwrap(sequenceNumber)
        newest = extended
        return extended
    }

    /// Whether a packet is answerable now.
    public enum Presence: Equatable, Sendable {
        case stored
        /// Still in the ring but older than `maxAge`.
        case expired
        /// Never stored, or overwritten by newer packets (count or byte bound).
        case missing
    }

    /// Slot index holding `sequenceNumber` with its bytes intact, nil otherwise.
    private func index(of sequenceNumber: UInt16) -> Int? {
        guard let newest else { return nil }
        let capacity = Int64(config.capacity)
        let extended = unwrapper.peek(sequenceNumber)
        guard extended <= newest, newest - extended < capacity else { return nil }
        let index = Int(((extended % capacity) + capacity) % capacity)
        let slot = slots[index]
        guard slot.extended == extended, slot.position >= head - Int64(config.byteCapacity) else { return nil }
        return index
    }

    public func presence(of sequenceNumber: UInt16, now: Int64) -> Presence {
        guard let index = index(of: sequenceNumber) else { return .missing }
        return now - slots[index].storedAt > config.maxAge ? .expired : .stored
    }

    /// When `sequenceNumber` was stored (the `now` of its insert), nil when not held.
    public func storedAt(_ sequenceNumber: UInt16) -> Int64? {
        index(of: sequenceNumber).map { slots[$0].storedAt }
    }

    /// Calls `body` with the stored bytes of `sequenceNumber` when present and not expired.
    /// The buffer is valid only inside `body` (the next insert may overwrite it).
    public func withPacket<R>(_ sequenceNumber: UInt16, now: Int64, _ body: (UnsafeRawBufferPointer) throws(RTPError) -> R) throws(RTPError) -> R? {
        guard let index = index(of: sequenceNumber), now - slots[index].storedAt <= config.maxAge else { return nil }
        let slot = slots[index]
        let offset = Int(slot.position % Int64(config.byteCapacity))
        return try body(UnsafeRawBufferPointer(start: bytes + offset, count: Int(slot.length)))
    }
}
