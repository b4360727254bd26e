/// What a `DTLSEndpoint` step asks its owner to do or tells it happened.
public enum DTLSOutput: Equatable, Sendable {
    /// Send this datagram to the peer (one datagram per call: a whole flight or an MTU-sized part).
    case send([UInt8])
    /// The handshake completed and the peer's fingerprint matched; build the SRTP session from this.
    case connected(SRTPKeyingMaterial)
    /// The peer sent close_notify (RFC 5246 §7.2.1); the association is over, media must stop.
    case closed
    /// The association failed for good.
    case failed(DTLSError)
    /// This datagram was discarded without touching the association (garbage, not DTLS).
    case dropped(DTLSError)
}
