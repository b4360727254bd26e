/// Errors of the DTLS-SRTP layer. Closed set; `code` is stable for logs, metrics and the wire.
public enum DTLSError: Error, Equatable, Sendable {
    /// OpenSSL aborted the handshake (alert sent or received); the string is OpenSSL's reason,
    /// for logs only.
    case handshakeFailed(String)
    /// The peer's certificate does not hash to the `a=fingerprint` from its SDP (RFC 8122 §5,
    /// RFC 5763 §5).
    case fingerprintMismatch
    /// The peer presented no certificate (RFC 5763 §5 requires one from both sides).
    case noPeerCertificate
    /// The handshake finished without a `use_srtp` profile both sides support (RFC 5764 §4.1.2).
    case noSRTPProfile
    /// The keying-material exporter failed (RFC 5705, RFC 5764 §4.2).
    case keyExportFailed
    /// Retransmissions were exhausted without an answer (RFC 6347 §4.2.4).
    case handshakeTimeout
    /// The datagram is not a sequence of well-formed DTLS records (RFC 6347 §4.1); it was dropped
    /// without touching the association (RFC 6347 §4.1.2.7: invalid records are discarded).
    case malformedRecord
    /// An `a=fingerprint` value could not be parsed or uses an unsupported hash.
    case invalidFingerprint
    /// A certificate or key could not be generated, parsed or used.
    case certificateInvalid(String)
    /// OpenSSL object setup failed (out of memory, bad configuration).
    case setupFailed(String)
    /// The operation needs a state the endpoint is not in (e.g. `start` twice).
    case invalidState

    /// Stable string code.
    public var code: String {
        switch self {
        case .handshakeFailed: return "dtls_handshake_failed"
        case .fingerprintMismatch: return "dtls_fingerprint_mismatch"
        case .noPeerCertificate: return "dtls_no_peer_certificate"
        case .noSRTPProfile: return "dtls_no_srtp_profile"
        case .keyExportFailed: return "dtls_key_export_failed"
        case .handshakeTimeout: return "dtls_handshake_timeout"
        case .malformedRecord: return "dtls_malformed_record"
        case .invalidFingerprint: return "dtls_invalid_fingerprint"
        case .certificateInvalid: return "dtls_certificate_invalid"
        case .setupFailed: return "dtls_setup_failed"
        case .invalidState: return "dtls_invalid_state"
        }
    }
}
