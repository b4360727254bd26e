/// SRTP protection profiles offered in the DTLS `use_srtp` extension (RFC 5764 §4.1.1).
///
/// Raw values equal `SRTPProfile`'s in the SRTP module (IANA names), so callers map with
/// `SRTPProfile(rawValue: profile.rawValue)`; the two modules stay independent.
public enum DTLSSRTPProfile: String, Sendable, CaseIterable, Equatable {
    /// RFC 7714 AEAD_AES_128_GCM (IANA 0x0007). Preferred: cheapest with Debian's libsrtp2.
    case aeadAES128GCM = "SRTP_AEAD_AES_128_GCM"
    /// RFC 5764 AES_CM_128_HMAC_SHA1_80 (IANA 0x0001).
    case aes128CMHMACSHA180 = "SRTP_AES128_CM_HMAC_SHA1_80"

    /// IANA protection profile identifier.
    public var identifier: UInt16 {
        switch self {
        case .aeadAES128GCM: return 0x0007
        case .aes128CMHMACSHA180: return 0x0001
        }
    }

    /// OpenSSL's spelling in `SSL_CTX_set_tlsext_use_srtp` lists.
    var openSSLName: String {
        switch self {
        case .aeadAES128GCM: return "SRTP_AEAD_AES_128_GCM"
        case .aes128CMHMACSHA180: return "SRTP_AES128_CM_SHA1_80"
        }
    }

    /// Master key length in bytes (RFC 5764 §4.1.2, RFC 7714 §12).
    public var keyLength: Int { 16 }

    /// Master salt length in bytes (RFC 3711: 112 bits; RFC 7714 §12: 96 bits).
    public var saltLength: Int {
        switch self {
        case .aeadAES128GCM: return 12
        case .aes128CMHMACSHA180: return 14
        }
    }

    init?(identifier: UInt) {
        switch identifier {
        case 0x0007: self = .aeadAES128GCM
        case 0x0001: self = .aes128CMHMACSHA180
        default: return nil
        }
    }
}

/// SRTP master keys and salts for one DTLS-SRTP association, already split into this side's
/// (local, used to protect) and the peer's (remote, used to unprotect).
public struct SRTPKeyingMaterial: Sendable, Equatable {
    public let profile: DTLSSRTPProfile
    public let localKey: [UInt8]
    public let localSalt: [UInt8]
    public let remoteKey: [UInt8]
    public let remoteSalt: [UInt8]

    public init(profile: DTLSSRTPProfile, localKey: [UInt8], localSalt: [UInt8], remoteKey: [UInt8], remoteSalt: [UInt8]) {
        self.profile = profile
        self.localKey = localKey
        self.localSalt = localSalt
        self.remoteKey = remoteKey
        self.remoteSalt = remoteSalt
    }

    /// Splits the RFC 5764 §4.2 exporter output
    /// `client key | server key | client salt | server salt` for the given role.
    init?(exported: [UInt8], profile: DTLSSRTPProfile, isServer: Bool) {
        let k = profile.keyLength, s = profile.saltLength
        guard exported.count == 2 * (k + s) else { return nil }
        let clientKey = Array(exported[0..<k])
        let serverKey = Array(exported[k..<2 * k])
        let clientSalt = Array(exported[2 * k..<2 * k + s])
        let serverSalt = Array(exported[2 * k + s..<2 * (k + s)])
        if isServer {
            self.init(profile: profile, localKey: serverKey, localSalt: serverSalt, remoteKey: clientKey, remoteSalt: clientSalt)
        } else {
            self.init(profile: profile, localKey: clientKey, localSalt: clientSalt, remoteKey: serverKey, remoteSalt: serverSalt)
        }
    }
}

extension SRTPKeyingMaterial: CustomStringConvertible {
    /// Never prints key bytes: secrets stay out of logs.
    public var description: String { "SRTPKeyingMaterial(\(profile.rawValue), keys redacted)" }
}
