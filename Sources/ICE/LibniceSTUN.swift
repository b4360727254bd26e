import CNice

/// libnice's STUN agent (stun/stunagent.h) and the message/reply storage it works on,
/// allocated once per `ICELiteAgent`: libnice keeps pointers between them (a message points
/// at its agent, a reply at its request's key), so they live at stable addresses.
final class LibniceSTUN {
    /// Attributes we understand (0-terminated). A comprehension-required attribute outside
    /// this list makes libnice report UNKNOWN_REQUEST_ATTRIBUTE (→ 420, RFC 8489 §6.3.1.1).
    /// Written once at first use and only read afterwards (libnice never writes it).
    nonisolated(unsafe) static let knownAttributes: UnsafeMutablePointer<UInt16> = {
        let list: [UInt16] = [
            UInt16(STUN_ATTRIBUTE_USERNAME.rawValue), UInt16(STUN_ATTRIBUTE_MESSAGE_INTEGRITY.rawValue),
            UInt16(STUN_ATTRIBUTE_ERROR_CODE.rawValue), UInt16(STUN_ATTRIBUTE_XOR_MAPPED_ADDRESS.rawValue),
            UInt16(STUN_ATTRIBUTE_PRIORITY.rawValue), UInt16(STUN_ATTRIBUTE_USE_CANDIDATE.rawValue),
            UInt16(STUN_ATTRIBUTE_SOFTWARE.rawValue), UInt16(STUN_ATTRIBUTE_FINGERPRINT.rawValue),
            UInt16(STUN_ATTRIBUTE_ICE_CONTROLLED.rawValue), UInt16(STUN_ATTRIBUTE_ICE_CONTROLLING.rawValue), 0,
        ]
        let pointer = UnsafeMutablePointer<UInt16>.allocate(capacity: list.count)
        pointer.initialize(from: list, count: list.count)
        return pointer
    }()

    /// Reply buffer: replies are header + XOR-MAPPED-ADDRESS + USERNAME (≤ 516) +
    /// MESSAGE-INTEGRITY + FINGERPRINT < 600 bytes; 1280 leaves room (the IPv6 minimum MTU).
    static let replyCapacity = 1280

    /// What the validater callback found for the USERNAME of the message being validated.
    enum Lookup {
        /// libnice did not call the validater (USERNAME or MESSAGE-INTEGRITY missing).
        case notCalled
        case unknown
        case expired(ICESessionID)
        case found(ICESession)
    }

    let agent: UnsafeMutablePointer<StunAgent>
    let request: UnsafeMutablePointer<StunMessage>
    let reply: UnsafeMutablePointer<StunMessage>
    let replyBuffer: UnsafeMutablePointer<UInt8>
    var lookup: Lookup = .notCalled

    init() {
        agent = .allocate(capacity: 1)
        agent.initialize(to: StunAgent())
        request = .allocate(capacity: 1)
        request.initialize(to: StunMessage())
        reply = .allocate(capacity: 1)
        reply.initialize(to: StunMessage())
        replyBuffer = .allocate(capacity: Self.replyCapacity)
        replyBuffer.initialize(repeating: 0, count: Self.replyCapacity)
        // RFC 5389 (3489bis) mode: magic cookie; USE_FINGERPRINT makes libnice require and
        // check FINGERPRINT on input and add it on output, as ICE requires (RFC 8445 §7.2.2).
        let flags = StunAgentUsageFlags(STUN_AGENT_USAGE_SHORT_TERM_CREDENTIALS.rawValue | STUN_AGENT_USAGE_USE_FINGERPRINT.rawValue)
        stun_agent_init(agent, Self.knownAttributes, STUN_COMPATIBILITY_RFC5389, flags)
    }

    deinit {
        agent.deallocate()
        request.deallocate()
        reply.deallocate()
        replyBuffer.deallocate()
    }

    /// The reply built so far as bytes (`length` from libnice).
    func replyBytes(_ length: Int) -> [UInt8] {
        Array(UnsafeBufferPointer(start: replyBuffer, count: min(length, Self.replyCapacity)))
    }

    /// Builds an error response to `request` with libnice (`stun_agent_init_error` +
    /// `stun_agent_finish_message`); signed with the request's key when `signed` (487 after
    /// an authenticated request), unsigned otherwise (400/401, RFC 8489 §9.1.3).
    func errorReply(_ code: StunError, signed: Bool) -> [UInt8]? {
        guard stun_agent_init_error(agent, reply, replyBuffer, Self.replyCapacity, request, code) else { return nil }
        let key = signed ? request.pointee.key : nil
        let length = stun_agent_finish_message(agent, reply, key, signed ? request.pointee.key_len : 0)
        return length > 0 ? replyBytes(length) : nil
    }
}
