/// The SRTP protection profiles this server negotiates through DTLS `use_srtp`.
///
/// Raw values are the names registered with IANA ("DTLS-SRTP Protection Profiles"), as used in
/// RFC 5764 §4.1.2 and RFC 7714 §14.2. The DTLS module has a twin enum with identical raw values, so
/// `SRTPProfile(rawValue: material.profile.rawValue)` maps one to the other without a dependency.
public enum SRTPProfile: String, Sendable, CaseIterable, Equatable {
    /// AEAD_AES_128_GCM, RFC 7714: 16-byte key, 12-byte salt, 16-byte tag. Preferred: about 1.5
    /// times cheaper than AES-CM + HMAC-SHA1 on our OpenSSL types (1.0 vs 1.4 µs per 1200-byte
    /// packet on a loaded build host; with Debian's NSS types it was 0.8 vs 3.9 µs on a quiet one,
    /// docs/benchmarks.md "SRTP on OpenSSL types"), and one primitive instead of two.
    case aeadAES128GCM = "SRTP_AEAD_AES_128_GCM"
    /// AES_CM_128_HMAC_SHA1_80, RFC 5764 §4.1.2 / RFC 3711: 16-byte key, 14-byte salt, 10-byte tag.
    /// Kept for peers that do not offer GCM (it is mandatory to implement in RFC 8827 §6.5).
    case aes128CMHMACSHA180 = "SRTP_AES128_CM_HMAC_SHA1_80"

    /// IANA protection profile identifier (RFC 5764 §4.1.2, RFC 7714 §14.2).
    public var identifier: UInt16 {
        switch self {
        case .aeadAES128GCM: return 0x0007
        case .aes128CMHMACSHA180: return 0x0001
        }
    }

    /// Master key length in bytes.
    public var keyLength: Int { 16 }

    /// Master salt length in bytes (RFC 7714 §8.1 uses 96-bit salts; RFC 3711 §8.2 112-bit).
    public var saltLength: Int {
        switch self {
        case .aeadAES128GCM: return 12
        case .aes128CMHMACSHA180: return 14
        }
    }

    /// Bytes `protectRTP` appends: the authentication tag (RFC 7714 §7.2: 16; RFC 3711 §5.2: 10).
    public var rtpOverhead: Int {
        switch self {
        case .aeadAES128GCM: return 16
        case .aes128CMHMACSHA180: return 10
        }
    }

    /// Bytes `protectRTCP` appends: the 4-byte E-flag + SRTCP index (RFC 3711 §3.4) plus the tag.
    public var rtcpOverhead: Int { rtpOverhead + 4 }
}
