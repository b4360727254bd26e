/// The send side's memory of recent RTP packets (unprotected), so a NACK (RFC 4585 §6.2.1)
/// can be answered by resending the packet (RFC 4588 RTX or the original). Bounded by count
/// and by age; pure: `now` (µs) is passed in.
struct SendPacketCache {
    struct Entry {
        var ssrc: UInt32
        var sequenceNumber: UInt16
        var sentAt: Int64
        /// The unprotected RTP packet as first sent.
        var packet: [UInt8]
    }

    /// 1,024 packets: about 18 s of this peer's video (~55 packets/s; only video is cached),
    /// far more than the age bound keeps, so the count only binds for unusually large frames.
    static let defaultCapacity = 1_024
    /// 1 s: the SFU's video NackGenerator stops asking for a packet after 1 s
    /// (`NackGeneratorConfig.video.maxAge`) and libwebrtc's RtpPacketHistory keeps about as
    /// long; a repair older than that arrives after the receiver gave up on it.
    static let defaultMaxAgeMicroseconds: Int64 = 1_000_000

    let capacity: Int
    let maxAge: Int64
    /// Ring of the newest `capacity` packets, oldest at `head`.
    private var ring: [Entry] = []
    private var head = 0
    /// (ssrc, sequence) → index in `ring`.
    private var index: [UInt64: Int] = [:]

    init(capacity: Int = defaultCapacity, maxAgeMicroseconds: Int64 = defaultMaxAgeMicroseconds) {
        self.capacity = max(capacity, 1)
        self.maxAge = maxAgeMicroseconds
        ring.reserveCapacity(self.capacity)
    }

    var count: Int { index.count }

    private static func key(_ ssrc: UInt32, _ sequenceNumber: UInt16) -> UInt64 { UInt64(ssrc) << 16 | UInt64(sequenceNumber) }

    /// Remembers a packet that was just sent; the oldest is forgotten when full.
    mutating func store(ssrc: UInt32, sequenceNumber: UInt16, packet: [UInt8], now: Int64) {
        let entry = Entry(ssrc: ssrc, sequenceNumber: sequenceNumber, sentAt: now, packet: packet)
        if ring.count < capacity {
            index[Self.key(ssrc, sequenceNumber)] = ring.count
            ring.append(entry)
            return
        }
        let old = ring[head]
        let oldKey = Self.key(old.ssrc, old.sequenceNumber)
        if index[oldKey] == head { index[oldKey] = nil }
        ring[head] = entry
        index[Self.key(ssrc, sequenceNumber)] = head
        head = (head + 1) % capacity
    }

    /// The packet for a NACKed sequence number, nil when never sent, forgotten or older than
    /// `maxAge` at `now`.
    func packet(ssrc: UInt32, sequenceNumber: UInt16, now: Int64) -> [UInt8]? {
        guard let position = index[Self.key(ssrc, sequenceNumber)] else { return nil }
        let entry = ring[position]
        guard entry.ssrc == ssrc, entry.sequenceNumber == sequenceNumber, now - entry.sentAt <= maxAge else { return nil }
        return entry.packet
    }
}
