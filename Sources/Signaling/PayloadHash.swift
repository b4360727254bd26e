/// A stable digest of a command's meaning, stored with its eventID so that a retry can be
/// told apart from an eventID reused for something else (call-design §1).
///
/// FNV-1a 64 over a canonical rendering: this guards a device against its own bugs, not
/// against an adversary (a device can only collide with its own eventIDs), so a
/// cryptographic hash would buy nothing.
enum PayloadHash {
    static func of(_ kind: CommandKind) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ text: String) {
            for byte in text.utf8 {
                hash ^= UInt64(byte)
                hash = hash &* 0x0000_0100_0000_01B3
            }
            hash ^= 0x1F  // field separator, so ("ab","c") ≠ ("a","bc")
            hash = hash &* 0x0000_0100_0000_01B3
        }
        mix(kind.wireType)
        switch kind {
        case .invite(let callee, let callID, let sdp, let media):
            mix(callee); mix(callID ?? "∅"); mix(sdp ?? "∅"); mix(media?.rawValue ?? "∅")
        case .ringing(let id), .cancel(let id), .hangup(let id), .mediaConnected(let id), .mediaLost(let id), .get(let id): mix(id)
        case .answer(let id, let rev, let sdp): mix(id); mix(String(rev)); mix(sdp ?? "∅")
        case .decline(let id, let rev): mix(id); mix(String(rev))
        case .offer(let id, let gen, let sdp), .answerSDP(let id, let gen, let sdp): mix(id); mix(String(gen)); mix(sdp)
        case .roomJoin(let room), .roomLeave(let room), .roomAccept(let room), .roomDecline(let room): mix(room)
        case .roomRing(let room, let invitees): mix(room); invitees.forEach(mix)
        case .sfuOffer(let room, let sdp): mix(room); mix(sdp)
        case .sfuAnswer(let room, let gen, let sdp): mix(room); mix(String(gen)); mix(sdp)
        case .sfuPreferences(let room, let p):
            mix(room); mix(p.publisher.account); mix(p.publisher.device); mix(p.mid)
            mix(String(p.maxWidth)); mix(String(p.maxHeight)); mix(p.maxLayer.map { String($0) } ?? "∅")
        case .candidate(let id, let gen, let cand, let mid, let index, let ufrag):
            mix(id); mix(String(gen)); mix(cand); mix(mid ?? "∅"); mix(index.map(String.init) ?? "∅"); mix(ufrag ?? "∅")
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
