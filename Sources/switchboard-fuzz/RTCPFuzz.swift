import RTP

/// RTCP compound packets (RFC 3550 §6, RFC 4585 §6, RFC 5104 §4.3, REMB, transport-cc).
/// Invariants: anything parsed serializes (a parsed packet always fits its wire fields);
/// the serialized length is the sum of `encodedLength`; re-parsing gives the same packets
/// (NACK lists compared as sets since the writer repacks them; REMB bitrates may round
/// down once; opaque/APP/transport-cc bodies gain zero octets up to the 32-bit boundary),
/// and a second serialization is byte-identical to the first (except NACK lists spanning
/// more than half the sequence space, whose packing depends on their first number).
enum RTCPFuzz {
    static func run(_ bytes: [UInt8]) throws(FuzzFailure) {
        guard let packets = try? RTCPCompound.parse(bytes) else { return }
        FuzzCounters.hit("rtcp.parsed")
        let first: [UInt8]
        do { first = try RTCPCompound.serialize(packets) } catch {
            throw .invariant("parsed packets do not serialize: \(error)")
        }
        try expect(first.count == packets.reduce(0) { $0 + $1.encodedLength }, "serialized length != sum of encodedLength")
        try expect(first.count % 4 == 0, "serialized compound not 32-bit aligned")
        let reparsed: [RTCPPacket]
        do { reparsed = try RTCPCompound.parse(first) } catch {
            throw .invariant("serialized packets do not parse: \(error)")
        }
        try expect(reparsed.count == packets.count, "packet count \(packets.count) became \(reparsed.count)")
        for (before, after) in zip(packets, reparsed) {
            try expect(equivalent(before, after), "round trip changed \(before) into \(after)")
        }
        let second: [UInt8]
        do { second = try RTCPCompound.serialize(reparsed) } catch {
            throw .invariant("re-parsed packets do not serialize: \(error)")
        }
        // NACK packing orders numbers by wraparound distance from the first one, so a list
        // spanning more than half the sequence space can repack differently (same set).
        if !reparsed.contains(where: spansHalfWindow) {
            try expect(second == first, "serialization is not a fixpoint after one round trip")
        }
    }

    /// A NACK whose numbers are not all within 2^15 after its smallest (wraparound-aware) one.
    static func spansHalfWindow(_ packet: RTCPPacket) -> Bool {
        guard case .nack(let nack) = packet, let first = nack.sequenceNumbers.first else { return false }
        let distances = nack.sequenceNumbers.map { Int(Int16(bitPattern: $0 &- first)) }
        return (distances.max() ?? 0) - (distances.min() ?? 0) >= 0x8000
    }

    /// Equality up to what the writer legitimately normalizes.
    static func equivalent(_ a: RTCPPacket, _ b: RTCPPacket) -> Bool {
        switch (a, b) {
        case let (.nack(x), .nack(y)):
            return x.senderSSRC == y.senderSSRC && x.mediaSSRC == y.mediaSSRC && Set(x.sequenceNumbers) == Set(y.sequenceNumbers)
        case let (.remb(x), .remb(y)):
            return x.senderSSRC == y.senderSSRC && x.ssrcs == y.ssrcs && y.bitrate <= x.bitrate
        case let (.application(x), .application(y)):
            return x.subtype == y.subtype && x.ssrc == y.ssrc && x.name == y.name && paddedEqual(x.data, y.data)
        case let (.transportFeedback(x), .transportFeedback(y)):
            return x.senderSSRC == y.senderSSRC && x.mediaSSRC == y.mediaSSRC && paddedEqual(x.body, y.body)
        case let (.opaque(x), .opaque(y)):
            return x.packetType == y.packetType && x.countOrFormat == y.countOrFormat && paddedEqual(x.body, y.body)
        default:
            return a == b
        }
    }

    /// `after` is `before` followed by fewer than 4 zero octets.
    static func paddedEqual(_ before: [UInt8], _ after: [UInt8]) -> Bool {
        after.count >= before.count && after.count - before.count < 4 && after.starts(with: before)
            && after[before.count...].allSatisfy { $0 == 0 }
    }
}
