import RTP

/// What one subscription sent under one outgoing sequence number: enough to find the
/// original in its publisher stream's `RetransmissionCache` and to rewrite it exactly as the
/// forward path did (`Forward`: SSRC = the subscription's, sequence number = the key,
/// timestamp = original + `timestampOffset`, `payloadType`, extension rewrite version).
/// 24 bytes.
public struct SentPacket: Equatable, Sendable {
    /// Outgoing (subscriber-side) sequence number: the key this slot answers for.
    public var outgoing: UInt16
    /// The publisher's sequence number of the original (the store key).
    public var source: UInt16
    /// Output timestamp − original timestamp (wrapping).
    public var timestampOffset: UInt32
    /// Low 32 bits of the send time, µs; equals the original's `storedAt` (stored and
    /// forwarded in one `handleRTP`), which tells it from another packet with that number.
    public var sentAt: UInt32
    /// Low 32 bits of the last resend time, µs (valid when `resends` > 0).
    public var resentAt: UInt32
    /// Layer (publisher stream index) of the original.
    public var layer: UInt8
    /// Subscriber-side payload type written.
    public var payloadType: UInt8
    public var resends: UInt8
    /// `ForwardingSlot.extensionsVersion` when sent (`Subscription.extensionHistory`).
    public var extensionsVersion: UInt8
    /// The VP8 PictureID / TL0PICIDX rewrite it was sent with (`VP8PictureRewriter`).
    public var rewritesVP8 = false
    public var vp8TL0Delta: UInt8 = 0
    public var vp8PictureIDDelta: UInt16 = 0
}

/// The per-subscription side of downlink repair: a power-of-two ring of `SentPacket` indexed
/// by outgoing sequence number (65536 is a multiple of the capacity, so the index stays
/// right across the wrap). Written by the forward path (`ForwardingSlot.forward`) through a
/// raw pointer, so the hot loop pays no reference counting; the memory is owned by a
/// `SentPacketStorage` held by the `Subscription`, which lives exactly as long as the slot.
/// Never allocates after creation.
struct SentPacketLog {
    /// Video: 256. 0.9 s of a top simulcast layer at ~280 packets/s (2.5 Mbit/s), 1.5 s at
    /// the 1.5 Mbit/s: as long as the publisher store's byte bound keeps such a layer
    /// (192 KB: 0.6–1 s), so a longer log would name packets the store no longer has. 512
    /// cost 5 KB more per video subscription (45 KB per member in a room of 10).
    static let videoCapacity = 256
    /// Audio: 64. 1.28 s of Opus at 50 packets/s, above the 1 s age bound.
    static let audioCapacity = 64

    private(set) var entries: UnsafeMutablePointer<SentPacket>?
    private(set) var mask: Int = 0
    /// Newest outgoing number recorded (valid when `hasSent`).
    private(set) var newest: UInt16 = 0
    private(set) var hasSent = false

    init() {}

    init(storage: SentPacketStorage) {
        entries = storage.entries
        mask = storage.capacity - 1
    }

    var capacity: Int { entries == nil ? 0 : mask + 1 }

    /// Records a forwarded packet (the forward path).
    @inline(__always)
    mutating func record(_ packet: SentPacket) {
        guard let entries else { return }
        entries[Int(packet.outgoing) & mask] = packet
        if !hasSent || isNewer(packet.outgoing, than: newest) {
            newest = packet.outgoing
            hasSent = true
        }
    }

    /// The packet sent as `outgoing`, nil when never sent or overwritten by a later one
    /// (count bound), or when the number is ahead of anything sent.
    func entry(_ outgoing: UInt16) -> SentPacket? {
        guard let entries, hasSent else { return nil }
        let behind = Int(newest &- outgoing)  // 0 … 65535, wrapping
        guard behind <= mask else { return nil }
        let entry = entries[Int(outgoing) & mask]
        return entry.outgoing == outgoing ? entry : nil
    }

    /// Records a resend (the throttle state lives with the packet, per subscription).
    func markResent(_ outgoing: UInt16, now: Int64) {
        guard let entries, entry(outgoing) != nil else { return }
        let index = Int(outgoing) & mask
        entries[index].resends &+= 1
        entries[index].resentAt = UInt32(truncatingIfNeeded: now)
    }

    @inline(__always)
    private func isNewer(_ a: UInt16, than b: UInt16) -> Bool {
        let distance = a &- b
        return distance != 0 && distance < 0x8000
    }
}

/// Owner of a `SentPacketLog`'s ring (freed with the subscription).
final class SentPacketStorage {
    let entries: UnsafeMutablePointer<SentPacket>
    let capacity: Int

    /// - Parameter capacity: rounded up to a power of two.
    init(capacity: Int) {
        var size = 1
        while size < capacity { size <<= 1 }
        self.capacity = size
        entries = .allocate(capacity: size)
        // An impossible pairing (outgoing 0 in slot 1 …) cannot answer: slot i starts with
        // outgoing i + 1, which maps to another slot.
        for index in 0..<size {
            entries.advanced(by: index).initialize(to: SentPacket(
                outgoing: UInt16(truncatingIfNeeded: index + 1), source: 0, timestampOffset: 0, sentAt: 0, resentAt: 0,
                layer: 0, payloadType: 0, resends: 0, extensionsVersion: 0))
        }
    }

    deinit {
        entries.deinitialize(count: capacity)
        entries.deallocate()
    }

    /// Bytes held by one subscription's log.
    var memoryFootprint: Int { capacity * MemoryLayout<SentPacket>.stride }

    static func forKind(_ kind: MediaKind) -> SentPacketStorage {
        SentPacketStorage(capacity: kind == .video ? SentPacketLog.videoCapacity : SentPacketLog.audioCapacity)
    }
}
