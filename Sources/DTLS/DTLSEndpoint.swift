import COpenSSL

/// One DTLS 1.2 association carrying DTLS-SRTP keys (RFC 6347, RFC 5764, RFC 5763), sans I/O:
/// datagrams and `now` in, `DTLSOutput`s out. OpenSSL runs over a memory read BIO and a
/// collecting write BIO, so each flight leaves as one datagram (or MTU-sized parts).
///
/// Time: `now` is milliseconds on the caller's monotonic clock and `nextTimeout` is expressed on
/// it. OpenSSL 3.0's DTLS retransmission timer, however, measures elapsed time itself with
/// `gettimeofday` and offers no way to inject a clock, so `handleTimeout(now:)` retransmits only
/// once that much real time has passed. On a real socket loop both clocks advance together.
///
/// Not thread-safe: one owner (the media worker of the peer) at a time.
public final class DTLSEndpoint {
    public enum Role: Sendable, Equatable {
        /// Sends ClientHello (`a=setup:active`).
        case client
        /// Waits for ClientHello (`a=setup:passive`, what an ICE-lite SFU answers).
        case server
    }

    public enum State: Sendable, Equatable {
        case new, handshaking, connected, closed, failed
    }

    /// Settings for the convenience initialiser that builds a private `DTLSContext`.
    public struct Configuration: Sendable {
        /// Offered/accepted `use_srtp` profiles in preference order (see `DTLSContext`).
        public var srtpProfiles: [DTLSSRTPProfile]
        /// See `DTLSEndpoint.mtu`.
        public var mtu: Int
        /// See `DTLSEndpoint.initialRetransmitTimeoutMilliseconds`.
        public var initialRetransmitTimeoutMilliseconds: Int

        public init(
            srtpProfiles: [DTLSSRTPProfile] = [.aeadAES128GCM, .aes128CMHMACSHA180],
            mtu: Int = DTLSEndpoint.defaultMTU,
            initialRetransmitTimeoutMilliseconds: Int = DTLSEndpoint.defaultInitialRetransmitTimeoutMilliseconds
        ) {
            self.srtpProfiles = srtpProfiles
            self.mtu = mtu
            self.initialRetransmitTimeoutMilliseconds = initialRetransmitTimeoutMilliseconds
        }
    }

    /// 1200 bytes: the usual WebRTC datagram budget (Pion's default DTLS MTU, the brief's limit):
    /// fits the IPv6 minimum MTU of 1280 minus IP/UDP headers with room for TURN channel framing.
    public static let defaultMTU = 1200
    /// 1000 ms: RFC 6347 §4.2.4.1 initial retransmission timer.
    public static let defaultInitialRetransmitTimeoutMilliseconds = 1000
    /// Longest retransmission interval (RFC 6347 §4.2.4.1: "at least 60 seconds").
    static let maximumRetransmitTimeoutMicroseconds: UInt32 = 60_000_000

    public let role: Role
    public let context: DTLSContext
    public let expectedRemoteFingerprint: DTLSFingerprint?
    /// This side's certificate (from the context).
    public var certificate: DTLSCertificate { context.certificate }
    /// Largest datagram this endpoint sends.
    public let mtu: Int
    /// First retransmission timeout; doubled per retry up to 60 s (RFC 6347 §4.2.4.1).
    public let initialRetransmitTimeoutMilliseconds: Int

    public private(set) var state: State = .new
    /// SHA-256 fingerprint of the certificate the peer presented (once seen).
    public private(set) var remoteFingerprint: DTLSFingerprint?
    /// Keys of the completed handshake.
    public private(set) var keyingMaterial: SRTPKeyingMaterial?
    /// Datagrams discarded as not-DTLS (see `DTLSOutput.dropped`).
    public private(set) var droppedDatagrams: UInt64 = 0

    /// Set by the verify callback when the peer certificate's digest differs from the SDP's.
    var fingerprintMismatch = false

    private let ssl: OpaquePointer
    private let readBIO: OpaquePointer
    private let collector: DatagramCollector
    private var lastNow: Int64 = 0

    /// Creates an endpoint on a private context (tests, synthetic peers). A server with many peers
    /// should share one `DTLSContext` through the designated initialiser.
    public convenience init(
        role: Role,
        certificate: DTLSCertificate,
        expectedRemoteFingerprint: DTLSFingerprint?,
        configuration: Configuration = Configuration()
    ) throws(DTLSError) {
        let context = try DTLSContext(certificate: certificate, srtpProfiles: configuration.srtpProfiles)
        try self.init(role: role, context: context, expectedRemoteFingerprint: expectedRemoteFingerprint,
                      mtu: configuration.mtu,
                      initialRetransmitTimeoutMilliseconds: configuration.initialRetransmitTimeoutMilliseconds)
    }

    /// - Parameters:
    ///   - expectedRemoteFingerprint: the peer's `a=fingerprint` from its SDP. `nil` accepts any
    ///     certificate: only for tests and tools, never for a real peer (RFC 8827 §6.5).
    public init(
        role: Role,
        context: DTLSContext,
        expectedRemoteFingerprint: DTLSFingerprint?,
        mtu: Int = DTLSEndpoint.defaultMTU,
        initialRetransmitTimeoutMilliseconds: Int = DTLSEndpoint.defaultInitialRetransmitTimeoutMilliseconds
    ) throws(DTLSError) {
        self.role = role
        self.context = context
        self.expectedRemoteFingerprint = expectedRemoteFingerprint
        self.mtu = mtu
        self.initialRetransmitTimeoutMilliseconds = initialRetransmitTimeoutMilliseconds
        self.collector = DatagramCollector(mtu: mtu)
        guard let ssl = SSL_new(context.pointer) else {
            throw .setupFailed("SSL_new: \(drainOpenSSLErrors())")
        }
        guard let rbio = BIO_new(BIO_s_mem()), let wbio = DatagramWriteBIO.make(collector: collector) else {
            SSL_free(ssl)
            throw .setupFailed("BIO_new")
        }
        // An empty read BIO means "no datagram yet" (retry), not end of stream.
        _ = sb_BIO_set_mem_eof_return(rbio, -1)
        _ = BIO_up_ref(rbio)  // keep our own reference for writes; SSL owns the other
        SSL_set_bio(ssl, rbio, wbio)
        guard sb_SSL_set_mtu(ssl, mtu) > 0 else {  // returns the MTU, 0 when below OpenSSL's minimum
            SSL_free(ssl)
            BIO_free(rbio)
            throw .setupFailed("MTU \(mtu) rejected by OpenSSL")
        }
        self.ssl = ssl
        self.readBIO = rbio
        _ = SSL_set_ex_data(ssl, 0, Unmanaged.passUnretained(self).toOpaque())
        DTLS_set_timer_cb(ssl, dtlsTimerCallback)
        switch role {
        case .client: SSL_set_connect_state(ssl)
        case .server: SSL_set_accept_state(ssl)
        }
    }

    deinit {
        SSL_free(ssl)  // frees the write BIO and SSL's reference to the read BIO
        BIO_free(readBIO)
    }

    // MARK: - Driving.

    /// Starts the handshake. A client returns its ClientHello; a server returns nothing and waits.
    public func start(now: Int64) -> [DTLSOutput] {
        lastNow = now
        guard state == .new else { return [] }
        state = .handshaking
        guard role == .client else { return [] }
        return step()
    }

    /// Feeds one received datagram (first byte 20...63 per RFC 7983).
    public func handle(datagram: UnsafeRawBufferPointer, now: Int64) -> [DTLSOutput] {
        lastNow = now
        switch state {
        case .closed, .failed: return []
        case .new:
            // A server may see ClientHello before its owner called start(); a client must start.
            guard role == .server else { return [.dropped(.invalidState)] }
            state = .handshaking
        case .handshaking, .connected: break
        }
        guard DTLSRecordFraming.isWellFormed(datagram), datagram.count <= Int(Int32.max) else {
            droppedDatagrams &+= 1
            return [.dropped(.malformedRecord)]
        }
        let written = BIO_write(readBIO, datagram.baseAddress, Int32(datagram.count))
        guard written == Int32(datagram.count) else {
            return fail(.setupFailed("BIO_write"))
        }
        return step()
    }

    /// Convenience for `handle(datagram:now:)` with an array.
    public func handle(datagram: [UInt8], now: Int64) -> [DTLSOutput] {
        datagram.withUnsafeBytes { handle(datagram: $0, now: now) }
    }

    /// Retransmits the current flight if its timer expired (RFC 6347 §4.2.4); call when `now`
    /// reaches `nextTimeout`.
    public func handleTimeout(now: Int64) -> [DTLSOutput] {
        lastNow = now
        guard state == .handshaking else { return [] }
        ERR_clear_error()
        let result = sb_DTLSv1_handle_timeout(ssl)
        if result < 0 {
            _ = drainOpenSSLErrors()
            var outputs = sends()
            outputs.append(contentsOf: fail(.handshakeTimeout))
            return outputs
        }
        return sends()
    }

    /// When the retransmission timer fires, on the caller's clock (ms), or nil when none runs.
    public var nextTimeout: Int64? {
        guard state == .handshaking else { return nil }
        var remaining = timeval()
        guard sb_DTLSv1_get_timeout(ssl, &remaining) == 1 else { return nil }
        let ms = Int64(remaining.tv_sec) * 1000 + (Int64(remaining.tv_usec) + 999) / 1000
        return lastNow + ms
    }

    /// Sends close_notify (RFC 5246 §7.2.1) and ends the association.
    public func close(now: Int64) -> [DTLSOutput] {
        lastNow = now
        guard state == .connected || state == .handshaking else { return [] }
        ERR_clear_error()
        if state == .connected { allocateRecordBuffers() }
        _ = SSL_shutdown(ssl)
        _ = drainOpenSSLErrors()
        state = .closed
        let outputs = sends()
        releaseRecordBuffers()
        return outputs
    }

    // MARK: - Internals.

    private func step() -> [DTLSOutput] {
        if state == .connected { allocateRecordBuffers() }
        let outputs = advance()
        if state == .connected || state == .closed { releaseRecordBuffers() }
        return outputs
    }

    /// Frees OpenSSL's record-layer read and write buffers (one 16 KB record plus overhead
    /// each way, RFC 6347 §4.1) once nothing is pending: ≈ 32 KB per connected endpoint,
    /// measured (SFUMemoryBenchmarkTests.testComponentFootprints: 76 → 43.5 KB). The context's
    /// SSL_MODE_RELEASE_BUFFERS did not free them for DTLS, so every connected member kept
    /// both for the whole call although after the handshake only an alert or a retransmitted
    /// Finished ever comes (`allocateRecordBuffers` before those). `SSL_free_buffers` keeps
    /// them when data is pending.
    private func releaseRecordBuffers() {
        _ = SSL_free_buffers(ssl)
    }

    /// Gives OpenSSL its record buffers back before it reads or writes after the handshake:
    /// OpenSSL 3.0's DTLS write path does not allocate a missing write buffer itself (a
    /// close_notify after `SSL_free_buffers` crashed without this).
    private func allocateRecordBuffers() {
        _ = SSL_alloc_buffers(ssl)
    }

    private func advance() -> [DTLSOutput] {
        if state == .handshaking {
            ERR_clear_error()
            let result = SSL_do_handshake(ssl)
            if result == 1 {
                var outputs = sends()
                outputs.append(contentsOf: finishHandshake())
                if state == .connected { outputs.append(contentsOf: readApplication()) }
                return outputs
            }
            let error = SSL_get_error(ssl, result)
            if error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE {
                return sends()
            }
            let reason = drainOpenSSLErrors()
            var outputs = sends()  // the alert we send, if any
            outputs.append(contentsOf: fail(fingerprintMismatch ? .fingerprintMismatch : .handshakeFailed(reason)))
            return outputs
        }
        if state == .connected { return readApplication() }
        return []
    }

    /// After the handshake: consumes records (alerts, retransmitted Finished that OpenSSL answers by
    /// resending its last flight, stray application data that WebRTC media never uses).
    private func readApplication() -> [DTLSOutput] {
        var outputs: [DTLSOutput] = []
        var scratch = [UInt8](repeating: 0, count: 2048)
        while true {
            ERR_clear_error()
            let n = SSL_read(ssl, &scratch, Int32(scratch.count))
            if n > 0 { continue }  // DTLS application data is not used by WebRTC media: discard.
            let error = SSL_get_error(ssl, n)
            outputs.append(contentsOf: sends())
            switch error {
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
                return outputs
            case SSL_ERROR_ZERO_RETURN:
                state = .closed
                outputs.append(.closed)
                return outputs
            default:
                outputs.append(contentsOf: fail(.handshakeFailed(drainOpenSSLErrors())))
                return outputs
            }
        }
    }

    private func finishHandshake() -> [DTLSOutput] {
        guard let peer = SSL_get1_peer_certificate(ssl) else { return fail(.noPeerCertificate) }
        defer { X509_free(peer) }
        // Belt and braces: the verify callback already compared; compare again on the final cert.
        if let expected = expectedRemoteFingerprint {
            guard DTLSFingerprint.digest(of: peer, algorithm: expected.algorithm) == expected.bytes else {
                return fail(.fingerprintMismatch)
            }
        }
        if let digest = DTLSFingerprint.digest(of: peer, algorithm: .sha256) {
            remoteFingerprint = DTLSFingerprint(algorithm: .sha256, bytes: digest)
        }
        guard let selected = SSL_get_selected_srtp_profile(ssl),
              let profile = DTLSSRTPProfile(identifier: UInt(selected.pointee.id))
        else { return fail(.noSRTPProfile) }
        let label = "EXTRACTOR-dtls_srtp"  // RFC 5764 §4.2
        var exported = [UInt8](repeating: 0, count: 2 * (profile.keyLength + profile.saltLength))
        let status = SSL_export_keying_material(ssl, &exported, exported.count, label, label.utf8.count, nil, 0, 0)
        defer { for i in exported.indices { exported[i] = 0 } }
        guard status == 1, let material = SRTPKeyingMaterial(exported: exported, profile: profile, isServer: role == .server) else {
            _ = drainOpenSSLErrors()
            return fail(.keyExportFailed)
        }
        keyingMaterial = material
        state = .connected
        return [.connected(material)]
    }

    private func fail(_ error: DTLSError) -> [DTLSOutput] {
        state = .failed
        return [.failed(error)]
    }

    private func sends() -> [DTLSOutput] {
        collector.take().map { .send($0) }
    }

    /// Verify callback body: called for each certificate of the peer's chain.
    func verify(certificate: OpaquePointer, depth: Int32) -> Bool {
        guard depth == 0 else { return true }  // only the leaf's fingerprint authenticates
        guard let expected = expectedRemoteFingerprint else { return true }
        if DTLSFingerprint.digest(of: certificate, algorithm: expected.algorithm) == expected.bytes {
            return true
        }
        fingerprintMismatch = true
        return false
    }

    /// Timer callback body: next retransmission interval in µs (RFC 6347 §4.2.4.1 doubling).
    func nextTimerDuration(previousMicroseconds: UInt32) -> UInt32 {
        if previousMicroseconds == 0 {
            let initial = max(1, initialRetransmitTimeoutMilliseconds) * 1000
            return UInt32(clamping: min(initial, Int(Self.maximumRetransmitTimeoutMicroseconds)))
        }
        return min(previousMicroseconds &* 2, Self.maximumRetransmitTimeoutMicroseconds)
    }
}

private func dtlsTimerCallback(_ ssl: OpaquePointer?, _ previous: UInt32) -> UInt32 {
    guard let ssl, let raw = SSL_get_ex_data(ssl, 0) else { return 1_000_000 }
    return Unmanaged<DTLSEndpoint>.fromOpaque(raw).takeUnretainedValue().nextTimerDuration(previousMicroseconds: previous)
}
