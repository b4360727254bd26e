import DTLS
import SDP

/// Settings of the SFU media plane (`SFUServer`): the one UDP port, what to announce in SDP,
/// the DTLS certificate, and the negotiation/timer tuning.
public struct MediaConfiguration {
    /// Address to bind ("0.0.0.0", "::", or one interface).
    public var host: String
    /// The one UDP port for all participants; 0 = ephemeral (tests).
    public var port: UInt16
    /// Public address for SDP candidates behind NAT / in containers (nil: the bound address).
    public var announcedHost: String?
    /// Public port when a port mapping changes it (nil: the bound port).
    public var announcedPort: UInt16?
    /// The server's DTLS certificate (one per server, RFC 8827 §6.5); nil: generated at start
    /// (ECDSA P-256, valid `DTLSCertificate.generatedValidityDays`).
    public var certificate: DTLSCertificate?
    /// Codecs the SFU forwards (answer = intersection with each offer).
    public var codecs: [SFUCodec]
    /// DTLS `use_srtp` profiles in preference order: GCM first (cheapest per packet with
    /// Debian's libsrtp2 + OpenSSL), AES-CM-HMAC-SHA1-80 for older stacks.
    public var srtpProfiles: [DTLSSRTPProfile]
    /// Changes to a member's receive set within this many ms of each other are folded into
    /// one server offer. 100 ms: protocol §9 ("within 100 ms of each other").
    public var renegotiationDebounceMilliseconds: Int64
    /// Period of the loop timer (RTCP reports via `Router.tick`, DTLS retransmissions,
    /// renegotiation debounce). 20 ms: one Opus frame; fine enough for the 500 ms PLI
    /// throttle and 1 s report interval, coarse enough to cost nothing.
    public var timerIntervalMilliseconds: Int64
    /// ICE consent timeout (RFC 7675 §5.1: 30 s); shorter only in tests.
    public var consentTimeoutMilliseconds: Int64
    /// Seed for outgoing SSRC allocation; nil: from the system CSPRNG.
    public var ssrcSeed: UInt64?
    /// Socket loop tuning (batch sizes, buffers); host/port/announced fields above win.
    public var loop: MediaLoopConfiguration

    public init(host: String = "0.0.0.0", port: UInt16 = 0, announcedHost: String? = nil, announcedPort: UInt16? = nil,
                certificate: DTLSCertificate? = nil, codecs: [SFUCodec] = SFUCodec.allCases,
                srtpProfiles: [DTLSSRTPProfile] = [.aeadAES128GCM, .aes128CMHMACSHA180],
                renegotiationDebounceMilliseconds: Int64 = 100, timerIntervalMilliseconds: Int64 = 20,
                consentTimeoutMilliseconds: Int64 = 30_000, ssrcSeed: UInt64? = nil,
                loop: MediaLoopConfiguration = MediaLoopConfiguration()) {
        self.host = host
        self.port = port
        self.announcedHost = announcedHost
        self.announcedPort = announcedPort
        self.certificate = certificate
        self.codecs = codecs
        self.srtpProfiles = srtpProfiles
        self.renegotiationDebounceMilliseconds = renegotiationDebounceMilliseconds
        self.timerIntervalMilliseconds = timerIntervalMilliseconds
        self.consentTimeoutMilliseconds = consentTimeoutMilliseconds
        self.ssrcSeed = ssrcSeed
        self.loop = loop
    }
}
