import CNice
import STUN

/// Connectivity checks (RFC 8445 §7.3) validated and answered with libnice's STUN usage API.
extension ICELiteAgent {
    /// Handles one STUN datagram from `address`.
    ///
    /// 1. Quick pre-parse of the 20-byte header (STUN module's type decoding): only Binding
    ///    requests go further; a lite agent sends no requests, so responses are dropped, and
    ///    Binding indications (keepalives) are ignored without an event.
    /// 2. `stun_agent_validate` with a validater callback that finds the session by the
    ///    USERNAME "ourUfrag:theirUfrag" (RFC 8445 §7.2.2) and lends libnice its password.
    /// 3. Authenticated: ICE-CONTROLLED → 487 (a lite agent never takes the controlling role,
    ///    RFC 8445 §6.1.1/§7.3.1.1); otherwise `stun_usage_ice_conncheck_create_reply` in
    ///    the controlled role builds the success response (XOR-MAPPED-ADDRESS of the source,
    ///    i.e. the peer-reflexive address, MESSAGE-INTEGRITY, FINGERPRINT), consent is
    ///    refreshed and USE-CANDIDATE nominates.
    /// Never traps on input: all parsing is bounds-checked by libnice.
    public func handleSTUN(_ bytes: [UInt8], from address: SocketAddress, now: Int64) -> ICEAction {
        guard bytes.count >= 20, bytes[0] & 0xC0 == 0 else { return .drop(.notSTUN) }
        // RFC 5389 §6: the magic cookie 0x2112A442. Without it libnice would answer in the
        // RFC 3489 form, which no ICE agent speaks (found by the `stun` fuzz target).
        guard bytes[4] == 0x21, bytes[5] == 0x12, bytes[6] == 0xA4, bytes[7] == 0x42 else { return .drop(.notSTUN) }
        let type = STUNMessageType(rawValue: UInt16(bytes[0]) << 8 | UInt16(bytes[1]))
        // Binding indications are keepalives (RFC 8445 §11, libnice sends them once READY):
        // ignored silently, and they do not refresh consent (RFC 7675 §5.1 needs an
        // authenticated transaction).
        if type == .bindingIndication { return ICEAction() }
        guard type == .bindingRequest else { return .drop(.notBindingRequest) }
        return bytes.withUnsafeBufferPointer { buffer in handleBindingRequest(buffer, from: address, now: now) }
    }

    private func handleBindingRequest(_ buffer: UnsafeBufferPointer<UInt8>, from address: SocketAddress, now: Int64) -> ICEAction {
        stun.lookup = .notCalled
        let validater: StunMessageIntegrityValidate = { _, _, username, usernameLength, password, passwordLength, userData in
            guard let userData, let username, let password, let passwordLength else { return false }
            let agent = Unmanaged<ICELiteAgent>.fromOpaque(userData).takeUnretainedValue()
            return agent.lendPassword(UnsafeBufferPointer(start: username, count: Int(usernameLength)), password, passwordLength)
        }
        let status = withExtendedLifetime(self) {
            stun_agent_validate(stun.agent, stun.request, buffer.baseAddress, buffer.count, validater,
                                Unmanaged.passUnretained(self).toOpaque())
        }
        switch status {
        case STUN_VALIDATION_SUCCESS:
            break
        case STUN_VALIDATION_NOT_STUN, STUN_VALIDATION_INCOMPLETE_STUN:
            return .drop(.notSTUN)
        case STUN_VALIDATION_BAD_REQUEST, STUN_VALIDATION_UNAUTHORIZED_BAD_REQUEST:
            return errorAction(STUN_ERROR_BAD_REQUEST, to: address, reason: .badRequest)
        case STUN_VALIDATION_UNAUTHORIZED:
            switch stun.lookup {
            case .notCalled: return errorAction(STUN_ERROR_BAD_REQUEST, to: address, reason: .badRequest)
            case .unknown: return .drop(.unknownUsername)
            case .expired(let id): return .drop(.sessionExpired(id))
            case .found(let session): return errorAction(STUN_ERROR_UNAUTHORIZED, to: address, reason: .badIntegrity(session.id))
            }
        case STUN_VALIDATION_UNKNOWN_REQUEST_ATTRIBUTE:
            guard case .found(let session) = stun.lookup else { return .drop(.unknownUsername) }
            let length = stun_agent_build_unknown_attributes_error(stun.agent, stun.reply, stun.replyBuffer,
                                                                   LibniceSTUN.replyCapacity, stun.request)
            return ICEAction(response: length > 0 ? stun.replyBytes(length) : nil, to: length > 0 ? address : nil,
                             events: [.reject(.unknownAttribute(session.id))])
        default:
            return .drop(.notBindingRequest)
        }
        guard case .found(let session) = stun.lookup else { return .drop(.unknownUsername) }

        var tieBreaker: UInt64 = 0
        if stun_message_find64(stun.request, STUN_ATTRIBUTE_ICE_CONTROLLED, &tieBreaker) == STUN_MESSAGE_RETURN_SUCCESS {
            let reply = stun.errorReply(STUN_ERROR_ROLE_CONFLICT, signed: true)
            return ICEAction(response: reply, to: reply == nil ? nil : address, events: [.reject(.roleConflict(session.id))])
        }

        var (storage, storageLength) = address.sockaddrStorage
        var length = LibniceSTUN.replyCapacity
        // Controlled role; tie-breaker 0 is never used because ICE-CONTROLLED was handled above.
        var controlling = false
        let result = stun_usage_ice_conncheck_create_reply(
            stun.agent, stun.request, stun.reply, stun.replyBuffer, &length, &storage, storageLength,
            &controlling, 0, STUN_USAGE_ICE_COMPATIBILITY_RFC5245)
        guard result == STUN_USAGE_ICE_RETURN_SUCCESS, length > 0 else { return .drop(.replyFailed) }
        let nominated = stun_usage_ice_conncheck_use_candidate(stun.request)
        let events = recordCheck(session, from: address, nominated: nominated, now: now)
        return ICEAction(response: stun.replyBytes(length), to: address, events: events)
    }

    /// The validater: USERNAME "localUfrag:remoteUfrag" → session → its password.
    fileprivate func lendPassword(_ username: UnsafeBufferPointer<UInt8>, _ password: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>,
                                  _ passwordLength: UnsafeMutablePointer<Int>) -> Bool {
        stun.lookup = .unknown
        guard let colon = username.firstIndex(of: UInt8(ascii: ":")) else { return false }
        // Short ufrags (≤ 15 UTF-8 bytes) are stored inline by String: no allocation.
        let local = String(decoding: UnsafeBufferPointer(rebasing: username[..<colon]), as: UTF8.self)
        guard let session = sessionsByUfrag[local],
              username[(colon + 1)...].elementsEqual(session.remoteUfrag.utf8) else { return false }
        if session.expired {
            stun.lookup = .expired(session.id)
            return false
        }
        stun.lookup = .found(session)
        password.pointee = session.localPassword.baseAddress
        passwordLength.pointee = session.localPassword.count
        return true
    }

    private func errorAction(_ code: StunError, to address: SocketAddress, reason: ICERejectReason) -> ICEAction {
        let reply = stun.errorReply(code, signed: false)
        return ICEAction(response: reply, to: reply == nil ? nil : address, events: [.reject(reason)])
    }
}
