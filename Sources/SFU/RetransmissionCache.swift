import RTP

/// Sizing of one retransmission cache. Every value has its reason next to it.
public struct RetransmissionCacheConfig: Equatable, Sendable {
    /// Packets kept (ring slots).
    public var capacity: Int
    /// Oldest packet still answered, µs. A NACK for an older packet is not answered: the
    /// repair would arrive after the receiver's jitter buffer gave the frame up.
    public var maxAge: Int64

    public init(capacity: Int, maxAge: Int64) {
        self.capacity = max(capacity, 1)
        self.maxAge = max(maxAge, 0)
    }

    /// Video: 600 packets / 1 s. 600 is libwebrtc's `kMinSendSidePacketHistorySize` (the
    /// sender-side history Chrome keeps per video stream); at the top simulcast layer
    /// (~2.5 Mbit/s, ~1100 B packets ≈ 280 packets/s, keyframe bursts above that) it holds
    /// about 1–2 s. 1 s: a NACK needs RTT (up to ~500 ms on bad links) to reach us plus one
    /// retry at RTT spacing; older repairs miss the receiver's playout anyway (mediasoup keeps
    /// 1 s for audio, 2 s for video; we stay at 1 s to bound memory per subscriber).
    public static let video = RetransmissionCacheConfig(capacity: 600, maxAge: 1_000_000)
    /// Audio: 100 packets / 1 s. Opus sends 50 packets/s (20 ms frames), so 100 slots cover
    /// 2 s — the age bound (same RTT-plus-retry reasoning as video) is the one that binds.
    public static let audio = RetransmissionCacheConfig(capacity: 100, maxAge: 1_000_000)

    /// The preset for a media kind.
    public static func forKind(_ kind: MediaKind) -> RetransmissionCacheConfig {
        kind == .video ? video : audio
    }
}

/// The already-rewritten outgoing packets of one subscriber stream (pre-SRTP), kept so NACKs
/// from that subscriber can be answered (RFC 4585 §6.2.1, RFC 4588). Anchors: mediasoup's
/// `RtpRetransmissionBuffer`, libwebrtc's `RtpPacketHistory`.
///
/// Storage is one preallocated ring of fixed 1500-byte slots plus per-slot metadata; insert
/// and lookup never allocate. Packets are keyed by sequence number, extended to 64 bits
/// (`SequenceNumberUnwrapper`) so lookups stay correct across the 65535 → 0 wrap; slot =
/// extended number mod capacity, and a slot only answers for the exact extended number it
/// holds. Bounded by count (the ring) and by age (`maxAge`, checked on lookup).
///
/// Memory per cache: `capacity × (1500 + 32)` bytes — video 600 slots ≈ 919 KB, audio 100
/// slots ≈ 153 KB (`memoryFootprint`).
///
/// Not thread-safe: owned by the router's worker thread like the rest of its state.
public final class RetransmissionCache {
    /// Largest packet stored (a full Ethernet MTU payload). Larger packets are refused
    /// (counted in `refused`); WebRTC senders keep packets ≤ ~1200 B, so none should be.
    public static let slotSize = 1500
    /// A packet further behind the newest than this restarts the cache (the outgoing
    /// sequence jumped, e.g. a re-published track): RFC 3550 §A.1 MAX_DROPOUT.
    public static let restartDistance: Int64 = 3000

    struct Slot {
        /// Extended sequence number held, `Int64.min` = empty.
        var extended = Int64.min
        var storedAt: Int64 = 0
        var length: Int32 = 0
        var resends: UInt16 = 0
        /// Last time this packet was resent (throttle), `Int64.min` = never.
        var resentAt = Int64.min
    }

    public let config: RetransmissionCacheConfig
    private let bytes: UnsafeMutableRawPointer
    private let slots: UnsafeMutablePointer<Slot>
    private var unwrapper = SequenceNumberUnwrapper()
    /// Newest extended sequence number stored.
    private var newest: Int64?
    /// Packets refused: too large, too short, or too old for the ring.
    public private(set) var refused: UInt64 = 0
    /// Times the ring was cleared because the sequence jumped.
    public private(set) var restarts: UInt64 = 0

    public init(config: RetransmissionCacheConfig) {
        self.config = config
        bytes = UnsafeMutableRawPointer.allocate(byteCount: config.capacity * Self.slotSize, alignment: 16)
        slots = UnsafeMutablePointer<Slot>.allocate(capacity: config.capacity)
        slots.initialize(repeating: Slot(), count: config.capacity)
    }

    deinit {
        slots.deinitialize(count: config.capacity)
        slots.deallocate()
        bytes.deallocate()
    }

    /// Bytes held by this cache (ring + metadata).
    public var memoryFootprint: Int { config.capacity * (Self.slotSize + MemoryLayout<Slot>.stride) }

    /// Stores an outgoing packet (rewritten, before SRTP) under its sequence number (bytes
    /// 2–3). Returns false when refused: shorter than an RTP header, longer than `slotSize`,
    /// or older than the ring holds.
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
        let index = Int(((extended % capacity) + capacity) % capacity)
        (bytes + index * Self.slotSize).copyMemory(from: base, byteCount: packet.count)
        slots[index] = Slot(extended: extended, storedAt: now, length: Int32(packet.count))
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
        /// Never stored, or overwritten by a newer packet (count bound).
        case missing
    }

    /// Slot index holding `sequenceNumber`, nil when it holds another packet.
    private func index(of sequenceNumber: UInt16) -> Int? {
        guard let newest else { return nil }
        let capacity = Int64(config.capacity)
        let extended = unwrapper.peek(sequenceNumber)
        guard extended <= newest, newest - extended < capacity else { return nil }
        let index = Int(((extended % capacity) + capacity) % capacity)
        return slots[index].extended == extended ? index : nil
    }

    public func presence(of sequenceNumber: UInt16, now: Int64) -> Presence {
        guard let index = index(of: sequenceNumber) else { return .missing }
        return now - slots[index].storedAt > config.maxAge ? .expired : .stored
    }

    /// Calls `body` with the stored bytes of `sequenceNumber` when present and not expired.
    /// The buffer is valid only inside `body` (the next insert may overwrite it).
    public func withPacket<R>(_ sequenceNumber: UInt16, now: Int64, _ body: (UnsafeRawBufferPointer) throws(RTPError) -> R) throws(RTPError) -> R? {
        guard let index = index(of: sequenceNumber), now - slots[index].storedAt <= config.maxAge else { return nil }
        return try body(UnsafeRawBufferPointer(start: bytes + index * Self.slotSize, count: Int(slots[index].length)))
    }

    /// Resend bookkeeping of a stored packet: (resends so far, last resend time).
    func resendState(of sequenceNumber: UInt16) -> (resends: UInt16, resentAt: Int64?)? {
        guard let index = index(of: sequenceNumber) else { return nil }
        let slot = slots[index]
        return (slot.resends, slot.resentAt == Int64.min ? nil : slot.resentAt)
    }

    /// Records a resend of a stored packet (throttle state lives with the packet).
    func markResent(_ sequenceNumber: UInt16, now: Int64) {
        guard let index = index(of: sequenceNumber) else { return }
        slots[index].resends &+= 1
        slots[index].resentAt = now
    }
}
