import ICE

/// The workers of one `SFUWorkerPool`: the shared session directory and each worker's inbox
/// (index = worker index).
final class MediaLoopGroup {
    let directory = MediaSessionDirectory()
    let inboxes: [MediaLoopInbox]

    init(inboxes: [MediaLoopInbox]) {
        self.inboxes = inboxes
    }
}

/// Handoff between the workers of a pool (all on one UDP port with SO_REUSEPORT).
///
/// The kernel picks a worker's socket by the 4-tuple hash, so a member's datagrams may land
/// on any worker. The worker that owns the member's session claims its ICE ufrag and every
/// validated address in the group's directory; a loop that receives STUN for a ufrag
/// another worker claimed, or DTLS/RTP/RTCP from an address it does not know but another
/// worker claimed, copies the datagram into that worker's inbox. The owner processes it
/// through the same `route` as its own datagrams and answers from its own socket — same
/// local port, so the peer cannot tell. Inboxes are signalled once per receive batch.
extension MediaLoop {
    /// Joins `group` as worker `index` (before `start`).
    func attach(to group: MediaLoopGroup, index: Int) {
        self.group = group
        workerIndex = index
        signalPending = Array(repeating: false, count: group.inboxes.count)
    }

    /// This worker's inbox, if in a group.
    var inbox: MediaLoopInbox? {
        guard let group, workerIndex < group.inboxes.count else { return nil }
        return group.inboxes[workerIndex]
    }

    // MARK: Directory (loop thread; no-ops for a lone loop)

    /// Claims a new local ufrag for this worker; false when another worker holds it.
    func claimUfrag(_ ufrag: String) -> Bool {
        group?.directory.claim(ufrag: ufrag, worker: workerIndex) ?? true
    }

    func releaseUfrag(_ ufrag: String) {
        group?.directory.release(ufrag: ufrag, worker: workerIndex)
    }

    /// Removes `session` from the ICE agent and its ufrag and addresses from the directory.
    func removeSession(_ session: ICESessionID, localUfrag: String) {
        ice.remove(session)
        guard let group else { return }
        group.directory.release(ufrag: localUfrag, worker: workerIndex)
        for address in claimedAddresses.removeValue(forKey: session) ?? [] {
            group.directory.release(address: address, worker: workerIndex)
        }
    }

    /// An address the agent validated for `session` (first check, path change, or a
    /// consent check: re-claimed each time, so an address another worker took over for a
    /// while comes back).
    func claim(_ address: SocketAddress, for session: ICESessionID) {
        guard let group else { return }
        group.directory.claim(address: address, worker: workerIndex)
        if claimedAddresses[session]?.contains(address) != true { claimedAddresses[session, default: []].append(address) }
    }

    // MARK: Sending side

    /// STUN whose USERNAME's local ufrag another worker claimed: handed to it.
    func handOffSTUN(_ bytes: UnsafeRawBufferPointer, from source: SocketAddress) -> Bool {
        guard let group, let ufrag = Self.localUfrag(ofSTUN: bytes),
              let owner = group.directory.owner(ufrag: ufrag), owner != workerIndex else { return false }
        post(bytes, from: source, to: owner, in: group)
        return true
    }

    /// DTLS/RTP/RTCP from an address another worker claimed: handed to it.
    @inline(__always)
    func handOff(_ bytes: UnsafeRawBufferPointer, from source: SocketAddress, arrival: Int64? = nil) -> Bool {
        guard let group, let owner = group.directory.owner(of: source), owner != workerIndex else { return false }
        post(bytes, from: source, to: owner, in: group, arrival: arrival)
        return true
    }

    private func post(_ bytes: UnsafeRawBufferPointer, from source: SocketAddress, to owner: Int, in group: MediaLoopGroup,
                      arrival: Int64? = nil) {
        if group.inboxes[owner].post(bytes, from: source, arrival: arrival) {
            stats.handoffsOut &+= 1
            signalPending[owner] = true
        } else {
            stats.handoffDrops &+= 1
        }
    }

    /// Wakes the workers that got datagrams in this batch (once each).
    func signalHandoffs() {
        guard let group else { return }
        for index in signalPending.indices where signalPending[index] {
            signalPending[index] = false
            group.inboxes[index].signal()
        }
    }

    // MARK: Receiving side

    /// Processes what other workers handed over, as if received on this socket.
    func drainInbox(now: Int64) {
        guard let inbox else { return }
        let buffer = inbox.take()
        for index in 0..<buffer.count {
            let (bytes, source, arrival) = buffer.datagram(at: index)
            stats.handoffsIn &+= 1
            guard !bytes.isEmpty else { continue }
            route(UnsafeRawBufferPointer(bytes), from: source, now: now, handedOff: true, arrival: arrival)
        }
        flushSends()
        signalHandoffs()
    }

    // MARK: STUN USERNAME

    /// The local ufrag of a STUN message: the USERNAME attribute's (RFC 8489 §14.3) part
    /// before ":" (RFC 8445 §7.2.2: "ourUfrag:theirUfrag" from our side). Nil when the
    /// message is short, malformed or has no USERNAME. Bounds-checked; never traps.
    static func localUfrag(ofSTUN bytes: UnsafeRawBufferPointer) -> String? {
        guard bytes.count >= 20 else { return nil }
        let messageLength = Int(bytes[2]) << 8 | Int(bytes[3])
        let end = min(bytes.count, 20 + messageLength)
        var offset = 20
        while offset + 4 <= end {
            let type = Int(bytes[offset]) << 8 | Int(bytes[offset + 1])
            let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            let value = offset + 4
            guard value + length <= end else { return nil }
            if type == 0x0006 {  // USERNAME
                var colon = value
                while colon < value + length, bytes[colon] != UInt8(ascii: ":") { colon += 1 }
                guard colon > value else { return nil }
                return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[value..<colon]), as: UTF8.self)
            }
            offset = value + (length + 3) & ~3  // attributes are padded to 4 bytes (§14)
        }
        return nil
    }
}
