import CSRTP

/// One SRTP/SRTCP crypto context pair for a DTLS-SRTP association (RFC 3711, RFC 5764, RFC 7714).
///
/// Outbound packets are protected with the local master key under an `ssrc_any_outbound` policy and
/// inbound packets are unprotected with the remote master key under `ssrc_any_inbound`, so every
/// SSRC the peer (or the SFU) uses is accepted without per-SSRC setup; libsrtp2 creates one stream
/// per SSRC on first use (that is its only allocation, not per packet).
///
/// Processing is in place: the caller passes a buffer holding `length` bytes of packet and at least
/// `profile.rtpOverhead` (RTP) or `profile.rtcpOverhead` (RTCP) spare bytes for the trailer.
///
/// Not thread-safe: libsrtp2 contexts are mutable state. One owner (one media worker) at a time.
public final class SRTPSession {
    /// Replay window for inbound SRTP, in packets (RFC 3711 §3.3.2 default is 64). 1024: the value
    /// libwebrtc uses (pc/srtp_session.cc) because a video keyframe is a burst of 100+ packets and
    /// with pacing, NACK retransmissions and multi-path reordering a 64-packet window rejects
    /// legitimate late packets. libsrtp2 accepts 64...32767.
    public static let replayWindowPackets: UInt = 1024

    /// The negotiated profile.
    public let profile: SRTPProfile

    /// Inbound packets rejected because their authentication tag failed (RFC 3711 §3.3 step 7).
    public private(set) var authFailures: UInt64 = 0
    /// Inbound packets rejected by the replay list (duplicate or older than the window).
    public private(set) var replays: UInt64 = 0
    /// Inbound packets rejected as malformed (too short, bad header lengths).
    public private(set) var malformed: UInt64 = 0

    private let outbound: srtp_t
    private let inbound: srtp_t

    /// Creates the context pair.
    ///
    /// - Parameters:
    ///   - localKey, localSalt: this side's write master key and salt (from the DTLS exporter).
    ///   - remoteKey, remoteSalt: the peer's write master key and salt.
    public init(
        profile: SRTPProfile,
        localKey: [UInt8], localSalt: [UInt8],
        remoteKey: [UInt8], remoteSalt: [UInt8]
    ) throws(SRTPError) {
        try SRTPLibrary.ensureInitialized()
        guard localKey.count == profile.keyLength, remoteKey.count == profile.keyLength,
              localSalt.count == profile.saltLength, remoteSalt.count == profile.saltLength
        else { throw .badKeyLength }
        self.profile = profile
        let out = try Self.create(profile: profile, key: localKey + localSalt, direction: ssrc_any_outbound)
        do {
            inbound = try Self.create(profile: profile, key: remoteKey + remoteSalt, direction: ssrc_any_inbound)
        } catch {
            srtp_dealloc(out)
            throw error
        }
        outbound = out
    }

    deinit {
        srtp_dealloc(outbound)
        srtp_dealloc(inbound)
    }

    private static func create(profile: SRTPProfile, key: [UInt8], direction: srtp_ssrc_type_t) throws(SRTPError) -> srtp_t {
        var keyCopy = key
        defer { for i in keyCopy.indices { keyCopy[i] = 0 } }  // master key leaves no copy behind
        var policy = srtp_policy_t()
        switch profile {
        case .aeadAES128GCM:
            srtp_crypto_policy_set_aes_gcm_128_16_auth(&policy.rtp)
            srtp_crypto_policy_set_aes_gcm_128_16_auth(&policy.rtcp)
        case .aes128CMHMACSHA180:
            srtp_crypto_policy_set_rtp_default(&policy.rtp)
            srtp_crypto_policy_set_rtcp_default(&policy.rtcp)
        }
        policy.ssrc.type = direction
        policy.ssrc.value = 0
        policy.window_size = UInt(replayWindowPackets)
        // RTX (RFC 4588) and FEC can legitimately resend a sequence number on the same SSRC when the
        // SFU forwards a retransmission it received; libwebrtc sets this too.
        policy.allow_repeat_tx = 1
        policy.next = nil
        var session: srtp_t? = nil
        let status = keyCopy.withUnsafeMutableBufferPointer { buffer -> srtp_err_status_t in
            policy.key = buffer.baseAddress
            return srtp_create(&session, &policy)
        }
        guard status == srtp_err_status_ok, let session else {
            throw .libraryFailure(Int32(truncatingIfNeeded: status.rawValue))
        }
        return session
    }

    // MARK: - In-place processing on raw buffers (hot path: no allocation).

    /// Encrypts and authenticates the RTP packet in `buffer[0..<length]` in place.
    /// - Returns: the SRTP packet length (`length + profile.rtpOverhead`).
    public func protectRTP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        try Self.validateRTP(buffer, length: length)
        guard buffer.count - length >= profile.rtpOverhead else { throw .insufficientCapacity }
        return try run(buffer, length: length) { srtp_protect(outbound, $0, $1) }
    }

    /// Verifies and decrypts the SRTP packet in `buffer[0..<length]` in place.
    /// - Returns: the plain RTP packet length.
    public func unprotectRTP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        do throws(SRTPError) {
            try Self.validateRTP(buffer, length: length)
            guard length >= 12 + profile.rtpOverhead else { throw .malformedPacket }
            return try run(buffer, length: length) { srtp_unprotect(inbound, $0, $1) }
        } catch {
            count(error)
            throw error
        }
    }

    /// Encrypts and authenticates the (compound) RTCP packet in `buffer[0..<length]` in place.
    /// - Returns: the SRTCP packet length (`length + profile.rtcpOverhead`).
    public func protectRTCP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        try Self.validateRTCP(buffer, length: length)
        guard buffer.count - length >= profile.rtcpOverhead else { throw .insufficientCapacity }
        return try run(buffer, length: length) { srtp_protect_rtcp(outbound, $0, $1) }
    }

    /// Verifies and decrypts the SRTCP packet in `buffer[0..<length]` in place.
    /// - Returns: the plain RTCP length.
    public func unprotectRTCP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        do throws(SRTPError) {
            try Self.validateRTCP(buffer, length: length)
            guard length >= 8 + profile.rtcpOverhead else { throw .malformedPacket }
            return try run(buffer, length: length) { srtp_unprotect_rtcp(inbound, $0, $1) }
        } catch {
            count(error)
            throw error
        }
    }

    // MARK: - Array conveniences (no reallocation when the array has spare capacity).

    /// Protects `packet` in place, growing it by the trailer. Call `reserveCapacity` beforehand to
    /// keep this allocation-free.
    public func protectRTP(_ packet: inout [UInt8]) throws(SRTPError) {
        try process(&packet, extra: profile.rtpOverhead) { b, n throws(SRTPError) in try protectRTP(b, length: n) }
    }

    /// Unprotects `packet` in place, shrinking it to the plain RTP packet.
    public func unprotectRTP(_ packet: inout [UInt8]) throws(SRTPError) {
        try process(&packet, extra: 0) { b, n throws(SRTPError) in try unprotectRTP(b, length: n) }
    }

    /// Protects `packet` in place, growing it by the SRTCP index and tag.
    public func protectRTCP(_ packet: inout [UInt8]) throws(SRTPError) {
        try process(&packet, extra: profile.rtcpOverhead) { b, n throws(SRTPError) in try protectRTCP(b, length: n) }
    }

    /// Unprotects `packet` in place, shrinking it to the plain RTCP packet.
    public func unprotectRTCP(_ packet: inout [UInt8]) throws(SRTPError) {
        try process(&packet, extra: 0) { b, n throws(SRTPError) in try unprotectRTCP(b, length: n) }
    }

    // MARK: - Internals.

    private func process(
        _ packet: inout [UInt8], extra: Int,
        _ body: (UnsafeMutableRawBufferPointer, Int) throws(SRTPError) -> Int
    ) throws(SRTPError) {
        let length = packet.count
        packet.append(contentsOf: repeatElement(0, count: extra))
        let result: Result<Int, SRTPError> = packet.withUnsafeMutableBytes { buffer in
            do throws(SRTPError) { return .success(try body(buffer, length)) } catch { return .failure(error) }
        }
        switch result {
        case .success(let newLength):
            packet.removeLast(packet.count - newLength)
        case .failure(let error):
            packet.removeLast(extra)
            throw error
        }
    }

    private func run(
        _ buffer: UnsafeMutableRawBufferPointer, length: Int,
        _ call: (UnsafeMutableRawPointer, UnsafeMutablePointer<Int32>) -> srtp_err_status_t
    ) throws(SRTPError) -> Int {
        guard let base = buffer.baseAddress, length <= Int32.max else { throw .malformedPacket }
        var len = Int32(length)
        let status = call(base, &len)
        guard status == srtp_err_status_ok else { throw Self.map(status) }
        return Int(len)
    }

    private func count(_ error: SRTPError) {
        switch error {
        case .authFailure: authFailures &+= 1
        case .replay: replays &+= 1
        case .malformedPacket: malformed &+= 1
        default: break
        }
    }

    private static func map(_ status: srtp_err_status_t) -> SRTPError {
        switch status {
        case srtp_err_status_auth_fail: return .authFailure
        case srtp_err_status_replay_fail, srtp_err_status_replay_old: return .replay
        case srtp_err_status_bad_param, srtp_err_status_parse_err: return .malformedPacket
        default: return .libraryFailure(Int32(truncatingIfNeeded: status.rawValue))
        }
    }

    /// RTP header sanity (RFC 3550 §5.1, RFC 8285 §4.2): version 2, CSRC list and header extension
    /// inside the packet. libsrtp2 reads these fields before authenticating.
    private static func validateRTP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) {
        guard length >= 12, length <= buffer.count else { throw .malformedPacket }
        let first = buffer[0]
        guard first >> 6 == 2 else { throw .malformedPacket }
        var headerLength = 12 + 4 * Int(first & 0x0F)
        if first & 0x10 != 0 {
            guard length >= headerLength + 4 else { throw .malformedPacket }
            let words = Int(buffer[headerLength + 2]) << 8 | Int(buffer[headerLength + 3])
            headerLength += 4 + 4 * words
        }
        guard headerLength <= length else { throw .malformedPacket }
    }

    /// RTCP header sanity (RFC 3550 §6.4): version 2 and at least the 8-byte SR/RR prefix.
    private static func validateRTCP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) {
        guard length >= 8, length <= buffer.count, buffer[0] >> 6 == 2 else { throw .malformedPacket }
    }
}
