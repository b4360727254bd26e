import COpenSSL

/// The server's (or a synthetic peer's) DTLS certificate and private key.
///
/// WebRTC authenticates DTLS certificates by fingerprint, not by chain (RFC 8827 §6.5, RFC 5763 §5),
/// so a self-signed ECDSA P-256 certificate is what browsers themselves use. One instance can be
/// shared by every endpoint and thread: it is immutable after init and OpenSSL only reads it
/// (`SSL_CTX_use_certificate` takes its own reference).
public final class DTLSCertificate: @unchecked Sendable {
    /// Validity of generated certificates. 30 days: peers only compare fingerprints, and a server
    /// restarted at least monthly (or configured with a PEM pair) never presents an expired one.
    public static let generatedValidityDays = 30

    let x509: OpaquePointer
    let privateKey: OpaquePointer

    /// SHA-256 fingerprint of the DER certificate, upper-case colon hex (`AB:CD:...`, RFC 8122 §5).
    public let fingerprint: String
    /// The same, typed (`sdpValue` gives `sha-256 AB:CD:...` for `a=fingerprint`).
    public let sha256Fingerprint: DTLSFingerprint

    private init(x509: OpaquePointer, privateKey: OpaquePointer) throws(DTLSError) {
        self.x509 = x509
        self.privateKey = privateKey
        guard let digest = DTLSFingerprint.digest(of: x509, algorithm: .sha256) else {
            X509_free(x509)
            EVP_PKEY_free(privateKey)
            throw .certificateInvalid("fingerprint digest failed")
        }
        sha256Fingerprint = DTLSFingerprint(algorithm: .sha256, bytes: digest)
        fingerprint = sha256Fingerprint.hex
    }

    deinit {
        X509_free(x509)
        EVP_PKEY_free(privateKey)
    }

    /// Generates an ECDSA P-256 key and a self-signed X.509 v3 certificate with a random 63-bit
    /// serial, valid from one day ago (tolerates peer clock skew) for `generatedValidityDays`.
    /// OpenSSL reads the wall clock for the validity dates.
    public static func generate(commonName: String) throws(DTLSError) -> DTLSCertificate {
        guard let key = sb_EVP_EC_gen_P256() else { throw .certificateInvalid("P-256 keygen: \(drainOpenSSLErrors())") }
        guard let cert = X509_new() else {
            EVP_PKEY_free(key)
            throw .certificateInvalid("X509_new failed")
        }
        var ok = X509_set_version(cert, 2) == 1  // 2 = X.509 v3
        var serial = [UInt8](repeating: 0, count: 8)
        ok = ok && RAND_bytes(&serial, Int32(serial.count)) == 1
        serial[0] &= 0x7F  // positive INTEGER (RFC 5280 §4.1.2.2)
        if ok, let bn = BN_bin2bn(serial, Int32(serial.count), nil) {
            ok = BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert)) != nil
            BN_free(bn)
        } else {
            ok = false
        }
        ok = ok && X509_gmtime_adj(X509_getm_notBefore(cert), -86_400) != nil
        ok = ok && X509_gmtime_adj(X509_getm_notAfter(cert), Int(generatedValidityDays) * 86_400) != nil
        ok = ok && X509_set_pubkey(cert, key) == 1
        if ok, let name = X509_get_subject_name(cert) {
            let cn = Array(commonName.utf8.prefix(64))  // RFC 5280 ub-common-name = 64
            ok = X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, cn, Int32(cn.count), -1, 0) == 1
            ok = ok && X509_set_issuer_name(cert, name) == 1
        } else {
            ok = false
        }
        ok = ok && X509_sign(cert, key, EVP_sha256()) > 0
        guard ok else {
            let reason = drainOpenSSLErrors()
            X509_free(cert)
            EVP_PKEY_free(key)
            throw .certificateInvalid("generation: \(reason)")
        }
        return try DTLSCertificate(x509: cert, privateKey: key)
    }

    /// Loads a configured certificate and its private key from PEM text; the key must match.
    public convenience init(pemCertificate: String, pemKey: String) throws(DTLSError) {
        let certBytes = Array(pemCertificate.utf8)
        let keyBytes = Array(pemKey.utf8)
        guard let certBIO = BIO_new_mem_buf(certBytes, Int32(certBytes.count)) else { throw .setupFailed("BIO_new_mem_buf") }
        defer { BIO_free(certBIO) }
        guard let keyBIO = BIO_new_mem_buf(keyBytes, Int32(keyBytes.count)) else { throw .setupFailed("BIO_new_mem_buf") }
        defer { BIO_free(keyBIO) }
        guard let cert = PEM_read_bio_X509(certBIO, nil, nil, nil) else {
            throw .certificateInvalid("PEM certificate: \(drainOpenSSLErrors())")
        }
        guard let key = PEM_read_bio_PrivateKey(keyBIO, nil, nil, nil) else {
            X509_free(cert)
            throw .certificateInvalid("PEM key: \(drainOpenSSLErrors())")
        }
        guard X509_check_private_key(cert, key) == 1 else {
            _ = drainOpenSSLErrors()
            X509_free(cert)
            EVP_PKEY_free(key)
            throw .certificateInvalid("private key does not match certificate")
        }
        try self.init(x509: cert, privateKey: key)
    }

    /// The certificate as PEM (to persist a generated certificate in configuration).
    public var pemCertificate: String {
        guard let bio = BIO_new(BIO_s_mem()) else { return "" }
        defer { BIO_free(bio) }
        guard PEM_write_bio_X509(bio, x509) == 1 else { return "" }
        return String(decoding: readAll(bio), as: UTF8.self)
    }

    /// The private key as unencrypted PKCS#8 PEM. A secret: store it with restrictive permissions,
    /// never log it.
    public var pemPrivateKey: String {
        guard let bio = BIO_new(BIO_s_mem()) else { return "" }
        defer { BIO_free(bio) }
        guard PEM_write_bio_PrivateKey(bio, privateKey, nil, nil, 0, nil, nil) == 1 else { return "" }
        return String(decoding: readAll(bio), as: UTF8.self)
    }
}
