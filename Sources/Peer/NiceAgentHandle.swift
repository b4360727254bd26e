import CNice
import Foundation

/// One libnice `NiceAgent` (RFC 8445 full agent, controlling, as a browser is against an
/// ICE-lite SFU) with one stream of one component (BUNDLE + rtcp-mux), bound to a
/// `GMainContext`: every callback below runs on the thread iterating that context.
///
/// Only host candidates on the given local addresses: no STUN/TURN server, UPnP and ICE-TCP
/// off (see `sb_nice_agent_new_controlling_options`). With `consentFreshness` libnice sends
/// RFC 7675 consent checks (authenticated binding requests) on the selected pair, which is what
/// keeps an ICE-lite server's 30 s consent alive. Create, use and `close()` on the context's thread.
final class NiceAgentHandle {
    /// Component state changes (`NiceComponentState` raw values).
    var onStateChange: (UInt32) -> Void = { _ in }
    var onGatheringDone: () -> Void = {}
    /// A datagram libnice did not consume itself (everything but STUN); valid during the call.
    var onReceive: (UnsafeRawBufferPointer) -> Void = { _ in }

    private(set) var agent: OpaquePointer?
    let stream: guint
    private let context: OpaquePointer
    private var handlerIDs: [gulong] = []
    /// Retained while the agent can call back; released in `close()`.
    private var selfReference: Unmanaged<NiceAgentHandle>?

    static let component: guint = 1

    init(context: OpaquePointer, localAddresses: [String], regularNomination: Bool, consentFreshness: Bool) throws(PeerError) {
        self.context = context
        var options = NICE_AGENT_OPTION_NONE.rawValue
        if regularNomination { options |= NICE_AGENT_OPTION_REGULAR_NOMINATION.rawValue }
        if consentFreshness { options |= NICE_AGENT_OPTION_CONSENT_FRESHNESS.rawValue }
        guard let agent = sb_nice_agent_new_controlling_options(context, NiceAgentOption(rawValue: options)) else {
            throw .ice("nice_agent_new_full failed")
        }
        for host in localAddresses {
            let address = nice_address_new()
            defer { nice_address_free(address) }
            guard nice_address_set_from_string(address, host) == 1, nice_agent_add_local_address(agent, address) == 1 else {
                g_object_unref(UnsafeMutableRawPointer(agent))
                throw .ice("local address \(host) rejected")
            }
        }
        let stream = nice_agent_add_stream(agent, 1)
        guard stream > 0 else {
            g_object_unref(UnsafeMutableRawPointer(agent))
            throw .ice("nice_agent_add_stream failed")
        }
        self.agent = agent
        self.stream = stream
        let me = Unmanaged.passRetained(self)
        selfReference = me
        let data = me.toOpaque()

        let stateChanged: @convention(c) (UnsafeMutableRawPointer?, guint, guint, guint, gpointer?) -> Void = { _, _, _, state, data in
            guard let data else { return }
            Unmanaged<NiceAgentHandle>.fromOpaque(data).takeUnretainedValue().onStateChange(state)
        }
        let gatheringDone: @convention(c) (UnsafeMutableRawPointer?, guint, gpointer?) -> Void = { _, _, data in
            guard let data else { return }
            Unmanaged<NiceAgentHandle>.fromOpaque(data).takeUnretainedValue().onGatheringDone()
        }
        handlerIDs.append(g_signal_connect_data(UnsafeMutableRawPointer(agent), "component-state-changed",
                                                unsafeBitCast(stateChanged, to: GCallback.self), data, nil, GConnectFlags(0)))
        handlerIDs.append(g_signal_connect_data(UnsafeMutableRawPointer(agent), "candidate-gathering-done",
                                                unsafeBitCast(gatheringDone, to: GCallback.self), data, nil, GConnectFlags(0)))
        let receive: NiceAgentRecvFunc = { _, _, _, length, buffer, data in
            guard let buffer, let data else { return }
            Unmanaged<NiceAgentHandle>.fromOpaque(data).takeUnretainedValue()
                .onReceive(UnsafeRawBufferPointer(start: buffer, count: Int(length)))
        }
        guard nice_agent_attach_recv(agent, stream, Self.component, context, receive, data) == 1 else {
            close()
            throw .ice("nice_agent_attach_recv failed")
        }
    }

    deinit { close() }

    /// Starts gathering host candidates; `onGatheringDone` follows.
    func gather() throws(PeerError) {
        guard let agent, nice_agent_gather_candidates(agent, stream) == 1 else { throw .ice("gathering failed") }
    }

    /// libnice's ICE credentials for the stream (RFC 8445 §5.3).
    func localCredentials() throws(PeerError) -> (ufrag: String, pwd: String) {
        guard let agent else { throw .ice("closed") }
        var ufrag: UnsafeMutablePointer<gchar>?
        var pwd: UnsafeMutablePointer<gchar>?
        guard nice_agent_get_local_credentials(agent, stream, &ufrag, &pwd) == 1, let ufrag, let pwd else {
            throw .ice("no local credentials")
        }
        defer { g_free(ufrag); g_free(pwd) }
        return (String(cString: ufrag), String(cString: pwd))
    }

    /// Local candidates as SDP attribute values (after "a=candidate:").
    func localCandidates() -> [String] {
        guard let agent else { return [] }
        var result: [String] = []
        var node = nice_agent_get_local_candidates(agent, stream, Self.component)
        let head = node
        while let current = node {
            if let candidate = current.pointee.data?.assumingMemoryBound(to: NiceCandidate.self) {
                if let line = nice_agent_generate_local_candidate_sdp(agent, candidate) {
                    var text = String(cString: line)
                    g_free(line)
                    if text.hasPrefix("a=") { text.removeFirst(2) }
                    if text.hasPrefix("candidate:") { text.removeFirst("candidate:".count) }
                    result.append(text)
                }
                nice_candidate_free(candidate)
            }
            node = current.pointee.next
        }
        g_slist_free(head)
        return result
    }

    /// Sets the peer's credentials and candidates; libnice starts connectivity checks.
    func setRemote(ufrag: String, pwd: String, candidates: [String]) throws(PeerError) {
        guard let agent else { throw .ice("closed") }
        guard nice_agent_set_remote_credentials(agent, stream, ufrag, pwd) == 1 else {
            throw .invalidRemoteDescription("libnice refused the remote credentials")
        }
        var list: UnsafeMutablePointer<GSList>?
        var parsed: [UnsafeMutablePointer<NiceCandidate>] = []
        for value in candidates {
            // libnice parses only UDP candidates of component 1 in our setup; others are skipped.
            if let candidate = nice_agent_parse_remote_candidate_sdp(agent, stream, "a=candidate:" + value) {
                parsed.append(candidate)
                list = g_slist_append(list, candidate)
            }
        }
        defer {
            g_slist_free(list)
            for candidate in parsed { nice_candidate_free(candidate) }
        }
        guard !parsed.isEmpty else { throw .invalidRemoteDescription("no usable remote candidate") }
        guard nice_agent_set_remote_candidates(agent, stream, Self.component, list) > 0 else {
            throw .invalidRemoteDescription("libnice refused the remote candidates")
        }
    }

    /// Sends one datagram on the selected pair; false unless libnice took all of it.
    func send(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let agent, let base = bytes.baseAddress else { return false }
        let sent = nice_agent_send(agent, stream, Self.component, guint(bytes.count), base.assumingMemoryBound(to: gchar.self))
        return sent == Int32(bytes.count)
    }

    var componentState: UInt32 {
        guard let agent else { return NICE_COMPONENT_STATE_DISCONNECTED.rawValue }
        return nice_agent_get_component_state(agent, stream, Self.component).rawValue
    }

    /// Stops callbacks and releases the agent (idempotent).
    func close() {
        guard let agent else { return }
        _ = nice_agent_attach_recv(agent, stream, Self.component, context, nil, nil)
        for id in handlerIDs { g_signal_handler_disconnect(UnsafeMutableRawPointer(agent), id) }
        handlerIDs.removeAll()
        nice_agent_remove_stream(agent, stream)
        g_object_unref(UnsafeMutableRawPointer(agent))
        self.agent = nil
        let reference = selfReference
        selfReference = nil
        reference?.release()
    }
}
