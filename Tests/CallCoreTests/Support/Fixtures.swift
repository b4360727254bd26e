@testable import CallCore
import SplitMix

/// Accounts and devices used across the reducer tests. The caller account sorts before the
/// callee account, so deterministic effect order is easy to write down.
enum Fixture {
    static let t0: Int64 = 1_800_000_000_000
    static let callID = "call-1"
    static let a1 = DeviceKey(account: "alice", device: "a1")
    static let a2 = DeviceKey(account: "alice", device: "a2")
    static let b1 = DeviceKey(account: "bob", device: "b1")
    static let b2 = DeviceKey(account: "bob", device: "b2")
    static let b3 = DeviceKey(account: "bob", device: "b3")
    static let mallory = DeviceKey(account: "mallory", device: "m1")

    static let offer = SessionDescription(sdp: "v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\na=ice-ufrag:callerA\r\na=ice-pwd:pwdpwdpwdpwdpwdpwdpwdpwd\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\n")
    static let answer = SessionDescription(sdp: "v=0\r\no=- 3 4 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\na=ice-ufrag:calleeB\r\na=ice-pwd:pwdpwdpwdpwdpwdpwdpwdpwd\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\n")
    static let restartOffer = SessionDescription(sdp: "v=0\r\ns=-\r\na=ice-ufrag:callerR\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\n")
    static let calleeOffer = SessionDescription(sdp: "v=0\r\ns=-\r\na=ice-ufrag:calleeR\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\n")
    static let restartAnswer = SessionDescription(sdp: "v=0\r\ns=-\r\na=ice-ufrag:calleeR2\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\n")

    static func candidate(_ n: Int, ufrag: String? = nil) -> IceCandidate {
        IceCandidate(candidate: "candidate:\(n) 1 udp 2122260223 192.0.2.\(n) 5\(n)000 typ host", sdpMid: "0", sdpMLineIndex: 0, usernameFragment: ufrag)
    }

    /// b1 and b2 online, b3 offline; a2 is the caller's other device.
    static let invite = CallInvite(
        callID: callID, caller: a1, callee: "bob",
        calleeDevices: ["b1": true, "b2": true, "b3": false],
        callerOtherDevices: ["a2", "a1"], offer: offer
    )

    /// The state right after `invite` at `t0`, written out field by field.
    static func ringingState(config: CallConfig = CallConfig()) -> CallState {
        CallState(
            callID: callID, revision: 1, phaseRevision: 1, phase: .ringing, caller: a1, callee: "bob",
            participation: [a1: .callerDevice, a2: .inProgressElsewhere, b1: .ringing, b2: .ringing, b3: .ringing],
            pushedDevices: [b3], createdAt: t0,
            deadlines: CallDeadlines(ring: t0 + config.ringTimeout, inviteExpiry: t0 + config.inviteLifetime),
            negotiation: Negotiation(
                generation: 1, pendingOffer: NegotiatedDescription(side: .caller, generation: 1, description: offer),
                callerUfrag: "callerA"
            )
        )
    }

    /// A store holding the ringing call (asserted once in the invite tests).
    static func ringingStore(config: CallConfig = CallConfig()) -> CallStore {
        CallStore(state: ringingState(config: config), config: config)
    }

    /// A store whose call b1 answered (with SDP) at t0 + 5 s: connecting, revision 2.
    static func connectingStore() -> CallStore {
        var store = ringingStore()
        let step = reduce(store.state, .answer(device: b1, seenRevision: 1, sdp: answer), now: t0 + 5_000, config: store.config)
        store.state = step.state
        return store
    }

    /// A store whose call is active (media connected at t0 + 7 s): revision 3.
    static func activeStore() -> CallStore {
        var store = connectingStore()
        store.state = reduce(store.state, .mediaConnected(device: a1), now: t0 + 7_000, config: store.config).state
        return store
    }
}
