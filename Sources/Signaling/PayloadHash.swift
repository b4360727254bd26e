/// A stable digest of a command's meaning, stored with its eventID so that a retry can be
/// told apart from an eventID reused for something else (call-design §1).
///
/// FNV-1a 64 over a canonical rendering: this guards a device against its own bugs, not
/// against an adversary (a device can only collide with its own eventIDs), so a
/// cryptographic hash would buy nothing.
enum PayloadHash {
    static func of(_ kind: CommandKind) -> String {
        var hash = FNV1a()
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
        return hash.hex
    }

    /// FNV-1a 64 with a separator after each field, so ("ab","c") ≠ ("a","bc").
    struct FNV1a {
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

        /// 16 lowercase hex digits, zero-padded (`String(value, radix: 16)` left-padded).
        var hex: String {
            let digits: StaticString = "0123456789abcdef"
            return String(unsafeUninitializedCapacity: 16) { out in
                // Exactly 16 writes, at 0..<16; each digit index is a nibble (< 16), inside `digits`.
                for k in 0 ..< 16 {
                    let nibble = Int((value >> UInt64(60 - 4 * k)) & 0xF)
                    out[k] = digits.utf8Start[nibble]
                }
                return 16
            }
        }
    }
}
