/// Admission, release and the drop policy of `Pacer` (docs/rtcp.md, "Pacing").
extension Pacer {
    /// Decides what happens to one packet for lane `id`, written (pre-SRTP) in `packet` with
    /// `transportSequence(of: id)` as its transport-wide number when `transportCCID` != 0.
    /// - `.sendNow`: send `packet` as is (the number is consumed; charged to the budget).
    /// - `.queued`: copied; it leaves through `release` (renumbered then).
    /// - `.dropped`: pool or lane full.
    /// - Parameters:
    ///   - frameSSRC, frameTimestamp: the outgoing SSRC and RTP timestamp (a video frame is
    ///     all packets sharing them; whole frames are dropped).
    ///   - transportCCID: the lane's transport-cc extension id (0: not negotiated), to find
    ///     where the number sits in a queued packet.
    public func admit(_ id: ParticipantID, _ packetClass: PacketClass, packet: UnsafeRawBufferPointer,
                      frameSSRC: UInt32, frameTimestamp: UInt32, transportCCID: UInt8, now: Int64) -> PacerAdmission {
        let index = lane(id)
        let size = packet.count
        if packetClass == .audio {
            drain(index, rate: lanes[index].rateBps, now: now)
            charge(index, bytes: size)
            return sendNow(index)
        }
        if packetClass == .video, lanes[index].dropping {
            if lanes[index].droppingSSRC == frameSSRC && lanes[index].droppingTimestamp == frameTimestamp {
                stats.droppedVideoPackets &+= 1
                lanes[index].counters.droppedVideoPackets &+= 1
                return .dropped
            }
            if lanes[index].droppingSSRC == frameSSRC { lanes[index].dropping = false }  // the next frame: forwarded again
        }
        let waiting = packetClass == .retransmission ? !lanes[index].retransmissions.isEmpty : lanes[index].packets > 0
        let rate = lanes[index].rateBps
        if !waiting {
            if rate == 0 { return sendNow(index) }
            drain(index, rate: rate, now: now)
            if lanes[index].debt < burstBytes(rate) {
                charge(index, bytes: size)
                return sendNow(index)
            }
        }
        if let cause = size + config.trailerRoom > config.slotSize ? PacerDropCause.oversized
            : freeHead < 0 ? .poolFull : lanes[index].packets >= config.maxPacketsPerLane ? .laneFull : nil {
            return drop(index, packetClass, cause: cause, frameSSRC: frameSSRC, frameTimestamp: frameTimestamp)
        }
        let slot = Int(freeHead)
        freeHead = slots[slot].next
        freeSlotCount -= 1
        if let base = packet.baseAddress { (storage + slot * config.slotSize).copyMemory(from: base, byteCount: size) }
        slots[slot] = Slot(next: -1, length: Int32(size),
                           transportOffset: Int32(Self.extensionValueOffset(packet, id: transportCCID, length: 2) ?? -1),
                           ssrc: frameSSRC, timestamp: frameTimestamp, enqueuedAt: now, packetClass: packetClass)
        if packetClass == .retransmission {
            append(slot, to: &lanes[index].retransmissions)
        } else {
            append(slot, to: &lanes[index].video)
        }
        lanes[index].packets += 1
        lanes[index].bytes += size
        if !lanes[index].active {
            lanes[index].active = true
            activeLanes.append(UInt32(index))
        }
        stats.queued &+= 1
        lanes[index].counters.queued &+= 1
        return .queued
    }

    /// Sends what each lane's budget allows at `now` (retransmissions first), calling `send`
    /// for each packet in egress order with its transport-wide number patched in. A lane
    /// whose queue would not drain within `maxQueueTime` at its rate is released at the rate
    /// that drains it in time (libwebrtc's queue-time limit). Allocates nothing.
    public func release(now: Int64, _ send: (PacedPacket) -> Void) {
        var position = activeLanes.count - 1
        while position >= 0 {
            let index = Int(activeLanes[position])
            releaseLane(index, now: now, send)
            if lanes[index].packets == 0 {
                lanes[index].active = false
                activeLanes[position] = activeLanes[activeLanes.count - 1]
                activeLanes.removeLast()
            }
            position -= 1
        }
    }

    /// When `release` should run next (µs), nil while nothing is queued.
    public func nextWakeup(now: Int64) -> Int64? {
        activeLanes.isEmpty ? nil : now + config.processInterval
    }

    func releaseLane(_ index: Int, now: Int64, _ send: (PacedPacket) -> Void) {
        var rate = lanes[index].rateBps
        if rate > 0, let oldest = oldestEnqueue(index) {
            // Queue-time limit: drain the queue within what is left of `maxQueueTime`.
            let left = max(config.maxQueueTime - (now - oldest), config.processInterval)
            let needed = UInt64(Double(lanes[index].bytes) * 8_000_000 / Double(left))
            if needed > rate {
                rate = needed
                stats.queueTimeRaises &+= 1
                lanes[index].counters.queueTimeRaises &+= 1
            }
        }
        drain(index, rate: rate, now: now)
        while lanes[index].packets > 0 && (rate == 0 || lanes[index].debt < burstBytes(rate)) {
            let slot: Int
            if !lanes[index].retransmissions.isEmpty {
                slot = Int(pop(&lanes[index].retransmissions))
            } else {
                slot = Int(pop(&lanes[index].video))
            }
            let info = slots[slot]
            let length = Int(info.length)
            lanes[index].packets -= 1
            lanes[index].bytes -= length
            let bytes = UnsafeMutableRawBufferPointer(start: storage + slot * config.slotSize, count: config.slotSize)
            let number = lanes[index].transportSequence
            lanes[index].transportSequence &+= 1
            if info.transportOffset >= 0 {
                bytes[Int(info.transportOffset)] = UInt8(truncatingIfNeeded: number >> 8)
                bytes[Int(info.transportOffset) + 1] = UInt8(truncatingIfNeeded: number)
            }
            if rate > 0 {
                lanes[index].debt = min(lanes[index].debt + Double(length),
                                        max(Double(rate) * Double(config.maxDebtInterval) / 8_000_000, Double(length)))
            }
            let waited = now - info.enqueuedAt
            if waited > stats.maxQueueTime { stats.maxQueueTime = waited }
            if waited > lanes[index].counters.maxQueueTime { lanes[index].counters.maxQueueTime = waited }
            stats.released &+= 1
            lanes[index].counters.released &+= 1
            send(PacedPacket(lane: ParticipantID(UInt32(index)), packetClass: info.packetClass, bytes: bytes, length: length,
                             transportSequenceNumber: number, queued: waited))
            free(slot)
        }
    }

    // MARK: Drop policy

    /// Pool or lane full. A retransmission is dropped alone (the receiver asks again or gives
    /// up). Video is dropped by whole frames: this packet, the frame's packets still queued
    /// and its later ones (`Lane.dropping`), and a keyframe is requested — a frame with holes
    /// is as undecodable as a missing one, and every frame after it references it, so random
    /// tail drops would freeze the picture until the next keyframe anyway; dropping the whole
    /// frame frees the most room for the least damage and says at once what repairs it.
    func drop(_ index: Int, _ packetClass: PacketClass, cause: PacerDropCause, frameSSRC: UInt32, frameTimestamp: UInt32) -> PacerAdmission {
        guard packetClass == .video else {
            stats.droppedRetransmissions &+= 1
            lanes[index].counters.droppedRetransmissions &+= 1
            return .dropped
        }
        stats.droppedVideoPackets &+= 1
        lanes[index].counters.droppedVideoPackets &+= 1
        stats.droppedFrames &+= 1
        lanes[index].counters.droppedFrames &+= 1
        switch cause {
        case .poolFull:
            stats.droppedFramesPoolFull &+= 1
            lanes[index].counters.droppedFramesPoolFull &+= 1
        case .laneFull:
            stats.droppedFramesLaneFull &+= 1
            lanes[index].counters.droppedFramesLaneFull &+= 1
        case .oversized:
            stats.droppedFramesOversized &+= 1
            lanes[index].counters.droppedFramesOversized &+= 1
        }
        lanes[index].dropping = true
        lanes[index].droppingSSRC = frameSSRC
        lanes[index].droppingTimestamp = frameTimestamp
        // Unlink the frame's queued packets.
        var previous: Int32 = -1
        var current = lanes[index].video.head
        while current >= 0 {
            let next = slots[Int(current)].next
            if slots[Int(current)].ssrc == frameSSRC && slots[Int(current)].timestamp == frameTimestamp {
                if previous < 0 { lanes[index].video.head = next } else { slots[Int(previous)].next = next }
                if lanes[index].video.tail == current { lanes[index].video.tail = previous }
                lanes[index].packets -= 1
                lanes[index].bytes -= Int(slots[Int(current)].length)
                stats.droppedVideoPackets &+= 1
                lanes[index].counters.droppedVideoPackets &+= 1
                free(Int(current))
            } else {
                previous = current
            }
            current = next
        }
        let request = PacerKeyframeRequest(lane: ParticipantID(UInt32(index)), ssrc: frameSSRC)
        if keyframeRequests.count < keyframeRequests.capacity, !keyframeRequests.contains(request) {
            keyframeRequests.append(request)
            stats.keyframeRequests &+= 1
            lanes[index].counters.keyframeRequests &+= 1
        }
        return .dropped
    }

    // MARK: Slots

    func sendNow(_ index: Int) -> PacerAdmission {
        lanes[index].transportSequence &+= 1
        stats.sentAtOnce &+= 1
        lanes[index].counters.sentAtOnce &+= 1
        return .sendNow
    }

    func oldestEnqueue(_ index: Int) -> Int64? {
        let a = lanes[index].retransmissions.head
        let b = lanes[index].video.head
        switch (a >= 0, b >= 0) {
        case (true, true): return min(slots[Int(a)].enqueuedAt, slots[Int(b)].enqueuedAt)
        case (true, false): return slots[Int(a)].enqueuedAt
        case (false, true): return slots[Int(b)].enqueuedAt
        case (false, false): return nil
        }
    }

    func append(_ slot: Int, to fifo: inout Fifo) {
        if fifo.tail >= 0 { slots[Int(fifo.tail)].next = Int32(slot) } else { fifo.head = Int32(slot) }
        fifo.tail = Int32(slot)
    }

    func pop(_ fifo: inout Fifo) -> Int32 {
        let slot = fifo.head
        fifo.head = slots[Int(slot)].next
        if fifo.head < 0 { fifo.tail = -1 }
        return slot
    }

    func free(_ slot: Int) {
        slots[slot].next = freeHead
        freeHead = Int32(slot)
        freeSlotCount += 1
    }

    func freeAll(_ fifo: inout Fifo) {
        while !fifo.isEmpty { free(Int(pop(&fifo))) }
    }

    /// Offset of the value of RFC 8285 header extension `id` (one- or two-byte form) in an
    /// RTP packet, when present with `length` bytes; nil otherwise.
    public static func extensionValueOffset(_ packet: UnsafeRawBufferPointer, id: UInt8, length: Int) -> Int? {
        guard id != 0, packet.count >= 12, packet[0] & 0x10 != 0 else { return nil }
        let start = 12 + 4 * Int(packet[0] & 0x0F)
        guard packet.count >= start + 4 else { return nil }
        let profile = UInt16(packet[start]) << 8 | UInt16(packet[start + 1])
        let end = start + 4 + 4 * (Int(packet[start + 2]) << 8 | Int(packet[start + 3]))
        guard end <= packet.count else { return nil }
        var position = start + 4
        if profile == 0xBEDE {
            while position < end {
                let first = packet[position]
                if first == 0 { position += 1; continue }
                let elementID = first >> 4
                if elementID == 15 { return nil }
                let size = Int(first & 0x0F) + 1
                if elementID == id { return size == length && position + 1 + size <= end ? position + 1 : nil }
                position += 1 + size
            }
        } else if profile & 0xFFF0 == 0x1000 {
            while position + 1 < end {
                let elementID = packet[position]
                if elementID == 0 { position += 1; continue }
                let size = Int(packet[position + 1])
                if elementID == id { return size == length && position + 2 + size <= end ? position + 2 : nil }
                position += 2 + size
            }
        }
        return nil
    }
}
