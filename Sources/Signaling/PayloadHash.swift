/// A stable digest of a command's meaning, stored with its eventID so that a retry can be
/// told apart from an eventID reused for something else (call-design §1).
///
/// A 64-bit multiply-rotate hash over a canonical rendering, 8 bytes per step: this guards a
/// device against its own bugs, not against an adversary (a device can only collide with its
/// own eventIDs), so a cryptographic hash would buy nothing. Stored as `2` and 16 hex digits.
///
/// Builds before 2026-12-01 stored FNV-1a 64 per byte (``legacy(_:)``, 16 hex digits): a
/// 3 KB SDP cost ~4 instructions per byte on the shard threads, for every offer and answer.
/// Such records stay valid for their retention: ``matches(stored:_:)`` computes the old form
/// for them, only when a retry arrives.
enum PayloadHash {
    static func of(_ kind: CommandKind) -> String {
        var hash = Words()
        mix(kind, into: &hash)
        return hex(hash.value, version: UInt8(ascii: "2"))
    }

    /// Whether `stored`, the hash recorded with an eventID, is the hash of `command`: its v2
    /// form, or for a record written before v2 (exactly 16 hex digits), the FNV-1a form.
    static func matches(stored: String, _ command: ClientCommand) -> Bool {
        if stored == command.payloadHash { return true }
        return stored.utf8.count == 16 && stored == legacy(command.kind)
    }

    /// The hash builds before v2 stored: FNV-1a 64 per byte, 16 hex digits.
    static func legacy(_ kind: CommandKind) -> String {
        var hash = FNV1a()
        mix(kind, into: &hash)
        return hash.hex
    }

    /// The canonical rendering: the wire type, then every field of the command's meaning
    /// (the eventID is not part of it), `∅` for an absent one.
    private static func mix<H: FieldHasher>(_ kind: CommandKind, into hash: inout H) {
        hash.mix(kind.wireType)
        switch kind {
        case .invite(let callee, let callID, let sdp, let media):
            hash.mix(callee); hash.mix(callID ?? "∅"); hash.mix(sdp ?? "∅"); hash.mix(media?.rawValue ?? "∅")
        case .ringing(let id), .cancel(let id), .hangup(let id), .mediaConnected(let id), .mediaLost(let id), .get(let id):
            hash.mix(id)
        case .answer(let id, let rev, let sdp): hash.mix(id); hash.mix(String(rev)); hash.mix(sdp ?? "∅")
        case .decline(let id, let rev): hash.mix(id); hash.mix(String(rev))
        case .offer(let id, let gen, let sdp), .answerSDP(let id, let gen, let sdp): hash.mix(id); hash.mix(String(gen)); hash.mix(sdp)
        case .roomJoin(let room), .roomLeave(let room), .roomAccept(let room), .roomDecline(let room): hash.mix(room)
        case .roomRing(let room, let invitees): hash.mix(room); for invitee in invitees { hash.mix(invitee) }
        case .sfuOffer(let room, let sdp): hash.mix(room); hash.mix(sdp)
        case .sfuAnswer(let room, let gen, let sdp): hash.mix(room); hash.mix(String(gen)); hash.mix(sdp)
        case .sfuPreferences(let room, let p):
            hash.mix(room); hash.mix(p.publisher.account); hash.mix(p.publisher.device); hash.mix(p.mid)
            hash.mix(String(p.maxWidth)); hash.mix(String(p.maxHeight)); hash.mix(p.maxLayer.map { String($0) } ?? "∅")
        case .candidate(let id, let gen, let cand, let mid, let index, let ufrag):
            hash.mix(id); hash.mix(String(gen)); hash.mix(cand); hash.mix(mid ?? "∅"); hash.mix(index.map(String.init) ?? "∅")
            hash.mix(ufrag ?? "∅")
        }
    }

    /// 8 bytes per step, `h = (rotl(h, 23) ^ word) &* k`, then the tail bytes as one word and
    /// the field's length, so ("ab","c") ≠ ("a","bc"). Each step is a bijection of `h` for a
    /// given word (rotation, xor, multiplication by an odd constant), so two fields of the
    /// same length that differ in a single word always hash apart; the rotation carries the
    /// multiplication's high bits down, where a plain xor-multiply (FNV's shape, word-wise)
    /// lets two top-bit flips in consecutive words cancel.
    struct Words: FieldHasher {
        private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325
        /// 2^64 / φ, odd: the multiplier of Fibonacci hashing.
        private static let k: UInt64 = 0x9E37_79B9_7F4A_7C15

        @inline(__always)
        private static func step(_ h: UInt64, _ word: UInt64) -> UInt64 {
            ((h << 23 | h >> 41) ^ word) &* k
        }

        mutating func mix(_ text: String) {
            var text = text
            var hash = value
            text.withUTF8 { utf8 in
                let count = utf8.count
                var i = 0
                if let base = utf8.baseAddress {
                    // Bounds: i + 8 <= count, so the 8 bytes at base + i are inside `utf8`.
                    while count - i >= 8 {
                        hash = Self.step(hash, UInt64(littleEndian: UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)))
                        i += 8
                    }
                }
                // The last 1–7 bytes as the low bytes of a word (little-endian order, zeros
                // above): from a word ending at the field's end, shifted down, when the field
                // has 8 bytes or more; byte by byte for shorter fields.
                var tail: UInt64 = 0
                let rest = count - i
                if rest > 0, count >= 8, let base = utf8.baseAddress {
                    // Bounds: count >= 8, so the 8 bytes at base + count - 8 are inside `utf8`.
                    let last = UInt64(littleEndian: UnsafeRawPointer(base + count - 8).loadUnaligned(as: UInt64.self))
                    tail = last >> UInt64(8 * (8 - rest))
                } else {
                    var shift: UInt64 = 0
                    while i < count {
                        tail |= UInt64(utf8[i]) << shift
                        shift += 8
                        i += 1
                    }
                }
                hash = Self.step(hash, tail)
                hash = Self.step(hash, UInt64(count))
            }
            value = hash
        }
    }

    /// FNV-1a 64 with a separator after each field, so ("ab","c") ≠ ("a","bc").
    struct FNV1a: FieldHasher {
        private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325
        private static let prime: UInt64 = 0x0000_0100_0000_01B3

        mutating func mix(_ text: String) {
            // Over the string's contiguous UTF-8 storage (a native string: no copy), not
            // through `String.UTF8View`'s per-byte index: a 3 KB SDP is hashed per command.
            var text = text
            var hash = value
            text.withUTF8 { utf8 in
                for byte in utf8 {
                    hash ^= UInt64(byte)
                    hash = hash &* Self.prime
                }
            }
            hash ^= 0x1F  // field separator
            value = hash &* Self.prime
        }

        var hex: String { PayloadHash.hex(value) }
    }

    /// 16 lowercase hex digits, zero-padded (`String(value, radix: 16)` left-padded), after
    /// the `version` byte if there is one.
    static func hex(_ value: UInt64, version: UInt8? = nil) -> String {
        let digits: StaticString = "0123456789abcdef"
        let start = version == nil ? 0 : 1
        return String(unsafeUninitializedCapacity: start + 16) { out in
            // Exactly start + 16 writes, at 0..<start + 16; each digit index is a nibble (< 16),
            // inside `digits`.
            if let version { out[0] = version }
            for k in 0 ..< 16 {
                let nibble = Int((value >> UInt64(60 - 4 * k)) & 0xF)
                out[start + k] = digits.utf8Start[nibble]
            }
            return start + 16
        }
    }
}

/// A hash fed one field at a time (``PayloadHash``).
protocol FieldHasher {
    mutating func mix(_ text: String)
}
