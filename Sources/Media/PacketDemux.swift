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
        guard let source, let first = bytes.first else {
            stats.unknownKindDrops &+= 1
            return
        }
        switch first {
        case 0...3:
            handleSTUN(bytes, from: source, now: now)
        case 20...63:
            guard let session = ice.session(for: source) else { stats.unknownPeerDrops &+= 1; return }
            currentSource = source
            onDTLS(self, session, bytes, now)
        case 128...191:
            guard let session = ice.session(for: source) else { stats.unknownPeerDrops &+= 1; return }
            currentArrivalMicros = receiveBatch.arrivalMicros(at: index)
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
            onICEEvent(self, event, now)
        }
    }
}
