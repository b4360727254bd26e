import COpenSSL

/// The shared OpenSSL `SSL_CTX` for DTLS-SRTP endpoints: certificate, key, cipher suites,
/// `use_srtp` profiles and peer verification. Create one per server (per certificate and profile
/// list) and pass it to every `DTLSEndpoint`: building an `SSL_CTX` per peer would cost CPU and
/// memory for identical configuration.
///
/// Thread-safe to share: it is configured once in `init` and never changed; OpenSSL reference
/// counts and locks `SSL_CTX` internally for concurrent `SSL_new`.
public final class DTLSContext: @unchecked Sendable {
    /// OpenSSL cipher list. RFC 8827 §6.5 mandates TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256; the RSA
    /// suites serve a configured RSA certificate; the CBC-SHA ones older stacks.
    static let cipherList = "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
        + "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
        + "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:"
        + "ECDHE-ECDSA-AES128-SHA:ECDHE-RSA-AES128-SHA"

    public let certificate: DTLSCertificate
    /// Offered/accepted `use_srtp` profiles in preference order. As a server OpenSSL picks the first
    /// of *its own* list that the client offered, so GCM wins when both sides offer both.
    public let srtpProfiles: [DTLSSRTPProfile]

    let pointer: OpaquePointer

    public init(
        certificate: DTLSCertificate,
        srtpProfiles: [DTLSSRTPProfile] = [.aeadAES128GCM, .aes128CMHMACSHA180]
    ) throws(DTLSError) {
        guard !srtpProfiles.isEmpty else { throw .setupFailed("no SRTP profiles configured") }
        guard let ctx = SSL_CTX_new(DTLS_method()) else { throw .setupFailed("SSL_CTX_new: \(drainOpenSSLErrors())") }
        var ok = sb_SSL_CTX_set_dtls12_only(ctx) == 1
        ok = ok && SSL_CTX_use_certificate(ctx, certificate.x509) == 1
        ok = ok && SSL_CTX_use_PrivateKey(ctx, certificate.privateKey) == 1
        ok = ok && SSL_CTX_set_cipher_list(ctx, Self.cipherList) == 1
        // Note: SSL_CTX_set_tlsext_use_srtp returns 0 on success.
        ok = ok && SSL_CTX_set_tlsext_use_srtp(ctx, srtpProfiles.map(\.openSSLName).joined(separator: ":")) == 0
        guard ok else {
            let reason = drainOpenSSLErrors()
            SSL_CTX_free(ctx)
            throw .setupFailed("SSL_CTX setup: \(reason)")
        }
        // Both sides must present a certificate (RFC 5763 §5); trust comes from the SDP fingerprint,
        // checked per endpoint in the callback.
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, dtlsVerifyCallback)
        // No session cache or tickets (WebRTC never resumes), no MTU probing (no socket behind the
        // BIO), and idle record buffers released after the handshake (memory per participant).
        sb_SSL_CTX_dtls_defaults(ctx)
        self.pointer = ctx
        self.certificate = certificate
        self.srtpProfiles = srtpProfiles
    }

    deinit {
        SSL_CTX_free(pointer)
    }
}

/// Accepts self-signed certificates; rejects a leaf whose digest is not the SDP fingerprint.
private func dtlsVerifyCallback(_ preverified: Int32, _ store: OpaquePointer?) -> Int32 {
    guard let store,
          let sslRaw = X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()),
          let endpointRaw = SSL_get_ex_data(OpaquePointer(sslRaw), 0),
          let certificate = X509_STORE_CTX_get_current_cert(store)
    else { return 0 }
    let endpoint = Unmanaged<DTLSEndpoint>.fromOpaque(endpointRaw).takeUnretainedValue()
    return endpoint.verify(certificate: certificate, depth: X509_STORE_CTX_get_error_depth(store)) ? 1 : 0
}
