import CallCore

/// Call states for the codec tests (``CallStateJSONTests``, ``CallStateCompactTests``).
enum CallStateSamples {
    static let caller = DeviceKey(account: "alice", device: "phone")
    static let offer = SessionDescription(sdp: "v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=\"quoted\" \\ back\tslash\r\na=ice-ufrag:abcd\r\n")
    static let answer = SessionDescription(sdp: "v=0\r\na=ice-ufrag:wxyz\r\nu=caf\u{e9} \u{1F600}\r\n")

    /// States along a whole setup, as the reducer makes them: ringing (3 callee devices, one
    /// pushed, a caller's other device), answered (stopped losers), candidates buffered,
    /// active, ended.
    static func setupStates() -> [CallState] {
        let config = CallConfig()
        var states: [CallState] = []
        var state: CallState?
        var now: Int64 = 1_700_000_000_000
        func step(_ event: CallEvent) {
            now += 250
            let result = reduce(state, event, now: now, config: config)
            if let next = result.state { state = next; states.append(next) }
        }
        step(.invite(CallInvite(callID: "call-1", caller: caller, callee: "bob",
                                calleeDevices: ["d0": true, "d1": true, "d2": false],
                                callerOtherDevices: ["laptop"], offer: offer)))
        let d0 = DeviceKey(account: "bob", device: "d0")
        step(.ringing(device: d0))
        step(.ringing(device: DeviceKey(account: "bob", device: "d1")))
        step(.iceCandidate(device: caller, generation: 1,
                           candidate: IceCandidate(candidate: "candidate:1 1 udp 2122260223 192.0.2.1 5000 typ host",
                                                   sdpMid: "0", sdpMLineIndex: 0, usernameFragment: "abcd")))
        step(.iceCandidate(device: caller, generation: 1, candidate: IceCandidate(candidate: "")))
        step(.answer(device: d0, seenRevision: state?.revision ?? 0, sdp: answer))
        step(.iceCandidate(device: d0, generation: 1,
                           candidate: IceCandidate(candidate: "candidate:2 1 udp 1 192.0.2.2 6000 typ host", sdpMid: "0")))
        step(.mediaConnected(device: caller))
        step(.mediaConnected(device: d0))
        step(.sdpOffer(device: d0, generation: state?.negotiation.generation ?? 1, sdp: answer))
        step(.hangup(device: caller))
        return states
    }


    /// Every phase × media (× end reason when ended), with every optional set and every
    /// participation case, extreme numbers and escapes in the call ID; and a bare state.
    static func everyCase() -> [CallState] {
        let d0 = DeviceKey(account: "bob", device: "d0")
        var participation: [DeviceKey: DeviceParticipation] = [caller: .callerDevice,
                                                               DeviceKey(account: "alice", device: "tab"): .inProgressElsewhere,
                                                               d0: .answered,
                                                               DeviceKey(account: "bob", device: "d1"): .ringingAcknowledged,
                                                               DeviceKey(account: "bob", device: "d2"): .ringing]
        for (index, reason) in StopReason.allCases.enumerated() {
            participation[DeviceKey(account: "bob", device: "s\(index)")] = .stopped(reason)
        }
        var states: [CallState] = []
        for phase in CallPhase.allCases {
            for media in CallMedia.allCases {
                for reason in CallEndReason.allCases.prefix(phase == .ended ? CallEndReason.allCases.count : 1) {
                    states.append(CallState(
                        callID: "c\u{2028}\u{0}", revision: Int64.max, phaseRevision: Int64.min, phase: phase, caller: caller,
                        callee: "bob", participation: participation, pushedDevices: [DeviceKey(account: "bob", device: "d2"), d0],
                        answeredBy: d0, endReason: reason, endedBy: caller, createdAt: -1, endedAt: 2,
                        deadlines: CallDeadlines(ring: 3, inviteExpiry: 4, connect: 5, reconnect: 6),
                        negotiation: Negotiation(
                            generation: 7,
                            pendingOffer: NegotiatedDescription(side: .callee, generation: 7, description: answer),
                            lastAnswer: NegotiatedDescription(side: .caller, generation: 6, description: offer),
                            callerUfrag: "abcd", calleeUfrag: "wxyz", politeSide: .callee,
                            buffered: [d0: CandidateBuffer(generation: 7, candidates: [
                                IceCandidate(candidate: "a", sdpMid: "1", sdpMLineIndex: 1, usernameFragment: "u"),
                                IceCandidate(candidate: "", sdpMLineIndex: Int.min)]),
                                       caller: CandidateBuffer(generation: 6, candidates: [])]),
                        media: media))
                }
            }
        }
        states.append(CallState(callID: "c", revision: 1, phaseRevision: 1, phase: .ringing, caller: caller, callee: "bob",
                                participation: [:], createdAt: 0))
        return states
    }
}
