/// Errors from SRTP/SRTCP processing. Closed set; `code` is stable for logs and metrics.
public enum SRTPError: Error, Equatable, Sendable {
    /// The authentication tag did not verify (tampered packet, or wrong key).
    case authFailure
    /// The packet index was already seen or is older than the replay window (RFC 3711 §3.3.2).
    case replay
    /// The packet is malformed or too short to be RTP/RTCP (truncated header, bad CSRC count or
    /// extension length).
    case malformedPacket
    /// The caller's buffer cannot hold the packet plus the profile's trailer.
    case insufficientCapacity
    /// A master key or salt has the wrong length for the profile.
    case badKeyLength
    /// Any other libsrtp2 status (`srtp_err_status_t` value).
    case libraryFailure(Int32)

    /// Stable string code.
    public var code: String {
        switch self {
        case .authFailure: return "srtp_auth_failure"
        case .replay: return "srtp_replay"
        case .malformedPacket: return "srtp_malformed_packet"
        case .insufficientCapacity: return "srtp_insufficient_capacity"
        case .badKeyLength: return "srtp_bad_key_length"
        case .libraryFailure(let status): return "srtp_library_failure_\(status)"
        }
    }
}
