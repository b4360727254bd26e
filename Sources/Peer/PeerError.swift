/// Errors of the synthetic peer. Closed and `Equatable` so tests can assert the exact case;
/// `code` is a stable string for reports and logs.
public enum PeerError: Error, Equatable, Sendable {
    /// libopus refused to create or run a codec (`OPUS_*` error number).
    case opus(Int32)
    /// libnice could not create the agent, stream or local address, or refused remote data.
    case ice(String)
    /// The remote SDP cannot be used: unparsable, or missing ICE credentials, fingerprint or
    /// candidates where they are required.
    case invalidRemoteDescription(String)
    /// Called in the wrong phase (e.g. an answer before an offer).
    case invalidState(String)
    /// DTLS or SRTP setup failed.
    case crypto(String)
    /// A bad parameter from the caller (frequency, frame size…).
    case invalidParameter(String)

    public var code: String {
        switch self {
        case .opus: return "opus"
        case .ice: return "ice"
        case .invalidRemoteDescription: return "invalidRemoteDescription"
        case .invalidState: return "invalidState"
        case .crypto: return "crypto"
        case .invalidParameter: return "invalidParameter"
        }
    }
}
