import ICE

extension MediaLoop {
    /// Routes datagram `index` of the current receive batch by its first byte (RFC 7983
    /// §7) and, except for STUN, by its source 5-tuple (learned from authenticated checks).
    ///
    /// | first byte | kind | goes to |
    /// |---|---|---|
    /// | 0–3 | STUN | ICE agent; reply queued, events to `onICEEvent` |
    /// | 20–63 | DTLS | `onDTLS` |
    /// | 128–191 | RTP/RTCP (RFC 5761 §4: 2nd byte 192–223 is RTCP) | `onRTP` / `onRTCP` |
    /// | other | ZRTP, TURN channel, garbage | counted, dropped |
    @inline(__always)
    func demultiplex(_ index: Int, now: Int64) {
        let (bytes, source, truncated) = receiveBatch.datagram(at: index)
        stats.datagramsIn &+= 1
        stats.bytesIn &+= UInt64(bytes.count)
        if truncated {
            stats.oversizedDrops &+= 1
            return
        }
        guard let source, !bytes.isEmpty else {
            stats.unknownKindDrops &+= 1
            return
        }
        route(bytes, from: source, now: now, handedOff: false, arrival: receiveBatch.arrivalMicros(at: index))
    }

    /// The demux proper, for a datagram from this loop's socket or (`handedOff`) from
    /// another worker's (`MediaLoop+Handoff.swift`): a datagram another worker owns is
    /// passed on once; a handed-off one is never passed on again. `arrival`: the kernel's
    /// receive time (µs, monotonic) when the socket gave one, carried along a handoff.
    @inline(__always)
    func route(_ bytes: UnsafeRawBufferPointer, from source: SocketAddress, now: Int64, handedOff: Bool, arrival: Int64? = nil) {
        switch bytes[0] {
        case 0...3:
            if !handedOff, group != nil, handOffSTUN(bytes, from: source) { return }
            handleSTUN(bytes, from: source, now: now)
        case 20...63:
            guard let session = ice.session(for: source) else {
                if !handedOff, group != nil, handOff(bytes, from: source) { return }
                stats.unknownPeerDrops &+= 1
                return
            }
            currentSource = source
            onDTLS(self, session, bytes, now)
        case 128...191:
            guard let session = ice.session(for: source) else {
                if !handedOff, group != nil, handOff(bytes, from: source, arrival: arrival) { return }
                stats.unknownPeerDrops &+= 1
                return
            }
            currentArrivalMicros = arrival
            if bytes.count >= 2, (192...223).contains(bytes[1]) {
                onRTCP(self, session, bytes, now)
            } else {
                onRTP(self, session, bytes, now)
            }
        default:
            stats.unknownKindDrops &+= 1
        }
    }

    /// STUN is control traffic: copied into an array for the ICE agent (the only
    /// allocation on the receive path).
    private func handleSTUN(_ bytes: UnsafeRawBufferPointer, from source: SocketAddress, now: Int64) {
        stats.stunIn &+= 1
        let action = ice.handleSTUN(Array(bytes), from: source, now: now)
        if let response = action.response, let address = action.responseAddress {
            response.withUnsafeBytes { _ = send($0, to: address) }
        }
        for event in action.events {
            if case .reject = event { stats.stunErrors &+= 1 }
            if case .checkValidated(let session, let address, _) = event, group != nil { claim(address, for: session) }
            onICEEvent(self, event, now)
        }
    }
}
