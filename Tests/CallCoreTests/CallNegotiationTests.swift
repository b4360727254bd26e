import XCTest
@testable import CallCore

/// Candidates, offer/answer relays and renegotiation glare (§4 cases 6, 7, 10).
final class CallNegotiationTests: XCTestCase {
    typealias F = Fixture

    /// Case 6: candidates before the answer are buffered per (call, device) and flushed to the
    /// right peer when b1 wins; the losers' buffers are dropped.
    func testCase06CandidatesBeforeTheAnswerAreBufferedAndFlushedToTheWinner() {
        var store = F.ringingStore()
        let c1 = F.candidate(1, ufrag: "callerA"), c2 = F.candidate(2), c3 = F.candidate(3), c4 = F.candidate(4)
        store.send(.iceCandidate(device: F.a1, generation: 1, candidate: c1), at: F.t0 + 100) {
            $0.revision = 2
            $0.negotiation.buffered[F.a1] = CandidateBuffer(generation: 1, candidates: [c1])
        } effects: { _ in [] }
        store.send(.iceCandidate(device: F.a1, generation: 1, candidate: c2), at: F.t0 + 110) {
            $0.revision = 3
            $0.negotiation.buffered[F.a1]?.candidates.append(c2)
        } effects: { _ in [] }
        store.ignore(.iceCandidate(device: F.a1, generation: 1, candidate: c2), at: F.t0 + 120)  // case 8 repeat
        store.send(.iceCandidate(device: F.b1, generation: 1, candidate: c3), at: F.t0 + 130) {
            $0.revision = 4
            $0.negotiation.buffered[F.b1] = CandidateBuffer(generation: 1, candidates: [c3])
        } effects: { _ in [] }
        store.send(.iceCandidate(device: F.b2, generation: 1, candidate: c4), at: F.t0 + 140) {
            $0.revision = 5
            $0.negotiation.buffered[F.b2] = CandidateBuffer(generation: 1, candidates: [c4])
        } effects: { _ in [] }
        store.reject(.iceCandidate(device: F.a2, generation: 1, candidate: c4), at: F.t0 + 150, .notAllowed)
        store.send(.answer(device: F.b1, seenRevision: 5, sdp: F.answer), at: F.t0 + 5_000) {
            CallAnswerTests.b1Wins(&$0, at: F.t0 + 5_000, revision: 6)
            $0.negotiation.buffered = [:]
        } effects: { s in
            [
                .cancelDeadline(.ring), .cancelDeadline(.inviteExpiry),
                .scheduleDeadline(.connect, at: F.t0 + 35_000),
                .deliver(to: F.a1, .answered(s.snapshot, by: F.b1, sdp: F.answer)),
                .deliver(to: F.a1, .iceCandidates(from: F.b1, generation: 1, candidates: [c3])),
                .deliver(to: F.b1, .iceCandidates(from: F.a1, generation: 1, candidates: [c1, c2])),
                .deliver(to: F.b2, .stopped(.answeredElsewhere, s.snapshot)),
                .deliver(to: F.b3, .stopped(.answeredElsewhere, s.snapshot)),
                .deliver(to: F.a2, .inProgressElsewhere(s.snapshot)),
                .pushNotify(to: F.b3, .stopped(callID: F.callID, reason: .answeredElsewhere)),
            ]
        }
        // After the answer, candidates are relayed at once, without a stored change.
        store.relay(.iceCandidate(device: F.a1, generation: 1, candidate: F.candidate(5)), at: F.t0 + 5_100,
                    effects: [.deliver(to: F.b1, .iceCandidates(from: F.a1, generation: 1, candidates: [F.candidate(5)]))])
        store.relay(.iceCandidate(device: F.b1, generation: 1, candidate: F.candidate(6, ufrag: "calleeB")), at: F.t0 + 5_100,
                    effects: [.deliver(to: F.a1, .iceCandidates(from: F.b1, generation: 1, candidates: [F.candidate(6, ufrag: "calleeB")]))])
    }

    /// Case 6: an answer without SDP keeps the winner's candidates until its SDP answer
    /// reaches the caller, then flushes them after it.
    func testCase06WinnerCandidatesWaitForItsSDPAnswer() {
        var store = F.ringingStore()
        let c3 = F.candidate(3), c5 = F.candidate(5), c7 = F.candidate(7)
        store.state = reduce(store.state, .iceCandidate(device: F.b1, generation: 1, candidate: c3), now: F.t0 + 100, config: store.config).state
        store.send(.answer(device: F.b1, seenRevision: 2, sdp: nil), at: F.t0 + 5_000) {
            CallAnswerTests.b1Wins(&$0, at: F.t0 + 5_000, revision: 3)
            $0.negotiation.pendingOffer = NegotiatedDescription(side: .caller, generation: 1, description: F.offer)
            $0.negotiation.lastAnswer = nil
            $0.negotiation.calleeUfrag = nil
        } effects: { s in
            [
                .cancelDeadline(.ring), .cancelDeadline(.inviteExpiry),
                .scheduleDeadline(.connect, at: F.t0 + 35_000),
                .deliver(to: F.a1, .answered(s.snapshot, by: F.b1, sdp: nil)),
                .deliver(to: F.b2, .stopped(.answeredElsewhere, s.snapshot)),
                .deliver(to: F.b3, .stopped(.answeredElsewhere, s.snapshot)),
                .deliver(to: F.a2, .inProgressElsewhere(s.snapshot)),
                .pushNotify(to: F.b3, .stopped(callID: F.callID, reason: .answeredElsewhere)),
            ]
        }
        store.send(.iceCandidate(device: F.b1, generation: 1, candidate: c5), at: F.t0 + 5_100) {
            $0.revision = 4
            $0.negotiation.buffered[F.b1]?.candidates.append(c5)
        } effects: { _ in [] }
        store.relay(.iceCandidate(device: F.a1, generation: 1, candidate: c7), at: F.t0 + 5_150,
                    effects: [.deliver(to: F.b1, .iceCandidates(from: F.a1, generation: 1, candidates: [c7]))])
        store.send(.sdpAnswer(device: F.b1, generation: 1, sdp: F.answer), at: F.t0 + 5_200) {
            $0.revision = 5
            $0.negotiation.pendingOffer = nil
            $0.negotiation.lastAnswer = NegotiatedDescription(side: .callee, generation: 1, description: F.answer)
            $0.negotiation.calleeUfrag = "calleeB"
            $0.negotiation.buffered = [:]
        } effects: { _ in
            [
                .deliver(to: F.a1, .sdpAnswer(from: F.b1, generation: 1, sdp: F.answer)),
                .deliver(to: F.a1, .iceCandidates(from: F.b1, generation: 1, candidates: [c3, c5])),
            ]
        }
        store.ignore(.sdpAnswer(device: F.b1, generation: 1, sdp: F.answer), at: F.t0 + 5_300)  // case 8 repeat
    }

    /// Case 6: the buffer is bounded per device (RingRTC keeps 30) and dropped on end.
    func testCase06BufferIsBoundedPerDeviceAndDroppedOnEnd() {
        var store = F.ringingStore()
        store.config.candidateBufferLimit = 3
        for n in 1...3 {
            store.state = reduce(store.state, .iceCandidate(device: F.a1, generation: 1, candidate: F.candidate(n)), now: F.t0 + Int64(n), config: store.config).state
        }
        XCTAssertEqual(store.state?.negotiation.buffered[F.a1]?.candidates.count, 3)
        store.reject(.iceCandidate(device: F.a1, generation: 1, candidate: F.candidate(9)), at: F.t0 + 10, .candidateLimit)
        // Another device has its own bound.
        store.send(.iceCandidate(device: F.b2, generation: 1, candidate: F.candidate(9)), at: F.t0 + 11) {
            $0.revision = 5
            $0.negotiation.buffered[F.b2] = CandidateBuffer(generation: 1, candidates: [F.candidate(9)])
        } effects: { _ in [] }
        let ended = reduce(store.state, .cancel(device: F.a1), now: F.t0 + 20, config: store.config)
        XCTAssertEqual(ended.state?.negotiation.buffered, [:])
        XCTAssertEqual(ended.state?.negotiation.pendingOffer, nil)
        store.state = ended.state
        store.reject(.iceCandidate(device: F.a1, generation: 1, candidate: F.candidate(8)), at: F.t0 + 21, .callEnded)
    }

    /// Case 7: candidates of another generation or of a replaced ICE session (ufrag) are
    /// refused and never relayed, before and after an ICE-restart offer.
    func testCase07OldGenerationAndStaleUfragCandidatesAreDropped() {
        var store = F.activeStore()
        store.reject(.iceCandidate(device: F.a1, generation: 0, candidate: F.candidate(1)), at: F.t0 + 8_000, .invalidGeneration)
        store.reject(.iceCandidate(device: F.a1, generation: 2, candidate: F.candidate(1)), at: F.t0 + 8_000, .invalidGeneration)
        store.reject(.iceCandidate(device: F.a1, generation: 1, candidate: F.candidate(1, ufrag: "old")), at: F.t0 + 8_000, .staleIceCredentials)
        // ICE restart from the caller: generation 2, new ufrag.
        store.send(.sdpOffer(device: F.a1, generation: 1, sdp: F.restartOffer), at: F.t0 + 9_000) {
            $0.revision = 4
            $0.negotiation.generation = 2
            $0.negotiation.pendingOffer = NegotiatedDescription(side: .caller, generation: 2, description: F.restartOffer)
            $0.negotiation.callerUfrag = "callerR"
        } effects: { _ in [.deliver(to: F.b1, .sdpOffer(from: F.a1, generation: 2, sdp: F.restartOffer))] }
        store.reject(.iceCandidate(device: F.a1, generation: 1, candidate: F.candidate(2, ufrag: "callerA")), at: F.t0 + 9_100, .staleIceCredentials)
        store.relay(.iceCandidate(device: F.a1, generation: 2, candidate: F.candidate(3, ufrag: "callerR")), at: F.t0 + 9_100,
                    effects: [.deliver(to: F.b1, .iceCandidates(from: F.a1, generation: 2, candidates: [F.candidate(3, ufrag: "callerR")]))])
        // The callee's old session still trickles while its answer is pending...
        store.relay(.iceCandidate(device: F.b1, generation: 1, candidate: F.candidate(4, ufrag: "calleeB")), at: F.t0 + 9_200,
                    effects: [.deliver(to: F.a1, .iceCandidates(from: F.b1, generation: 1, candidates: [F.candidate(4, ufrag: "calleeB")]))])
        // ...and its new-generation candidates wait for its answer.
        store.send(.iceCandidate(device: F.b1, generation: 2, candidate: F.candidate(5)), at: F.t0 + 9_300) {
            $0.revision = 5
            $0.negotiation.buffered[F.b1] = CandidateBuffer(generation: 2, candidates: [F.candidate(5)])
        } effects: { _ in [] }
        store.send(.sdpAnswer(device: F.b1, generation: 2, sdp: F.restartAnswer), at: F.t0 + 9_400) {
            $0.revision = 6
            $0.negotiation.pendingOffer = nil
            $0.negotiation.lastAnswer = NegotiatedDescription(side: .callee, generation: 2, description: F.restartAnswer)
            $0.negotiation.calleeUfrag = "calleeR2"
            $0.negotiation.buffered = [:]
        } effects: { _ in
            [
                .deliver(to: F.a1, .sdpAnswer(from: F.b1, generation: 2, sdp: F.restartAnswer)),
                .deliver(to: F.a1, .iceCandidates(from: F.b1, generation: 2, candidates: [F.candidate(5)])),
            ]
        }
        store.reject(.iceCandidate(device: F.b1, generation: 1, candidate: F.candidate(6)), at: F.t0 + 9_500, .invalidGeneration)
        store.reject(.iceCandidate(device: F.b1, generation: 2, candidate: F.candidate(6, ufrag: "calleeB")), at: F.t0 + 9_500, .staleIceCredentials)
    }

    /// Case 10: the caller's offer is pending and the polite callee offers too: the callee's
    /// offer is refused with `glare`; it answers the caller's offer instead.
    func testCase10RenegotiationGlarePoliteCalleeOfferIsRefused() {
        var store = F.activeStore()
        store.state = reduce(store.state, .sdpOffer(device: F.a1, generation: 1, sdp: F.restartOffer), now: F.t0 + 9_000, config: store.config).state
        store.reject(.sdpOffer(device: F.b1, generation: 1, sdp: F.calleeOffer), at: F.t0 + 9_001, .glare)
        store.send(.sdpAnswer(device: F.b1, generation: 2, sdp: F.restartAnswer), at: F.t0 + 9_100) {
            $0.revision = 5
            $0.negotiation.pendingOffer = nil
            $0.negotiation.lastAnswer = NegotiatedDescription(side: .callee, generation: 2, description: F.restartAnswer)
            $0.negotiation.calleeUfrag = "calleeR2"
        } effects: { _ in [.deliver(to: F.a1, .sdpAnswer(from: F.b1, generation: 2, sdp: F.restartAnswer))] }
    }

    /// Case 10: the callee's offer is pending and the impolite caller offers too: the caller's
    /// offer replaces it (new generation) and is relayed; the polite callee rolls back.
    func testCase10RenegotiationGlareImpoliteCallerOfferWins() {
        var store = F.activeStore()
        store.send(.sdpOffer(device: F.b1, generation: 1, sdp: F.calleeOffer), at: F.t0 + 9_000) {
            $0.revision = 4
            $0.negotiation.generation = 2
            $0.negotiation.pendingOffer = NegotiatedDescription(side: .callee, generation: 2, description: F.calleeOffer)
            $0.negotiation.calleeUfrag = "calleeR"
        } effects: { _ in [.deliver(to: F.a1, .sdpOffer(from: F.b1, generation: 2, sdp: F.calleeOffer))] }
        store.send(.sdpOffer(device: F.a1, generation: 1, sdp: F.restartOffer), at: F.t0 + 9_001) {
            $0.revision = 5
            $0.negotiation.generation = 3
            $0.negotiation.pendingOffer = NegotiatedDescription(side: .caller, generation: 3, description: F.restartOffer)
            $0.negotiation.callerUfrag = "callerR"
        } effects: { _ in [.deliver(to: F.b1, .sdpOffer(from: F.a1, generation: 3, sdp: F.restartOffer))] }
        store.reject(.sdpAnswer(device: F.a1, generation: 2, sdp: F.answer), at: F.t0 + 9_002, .invalidState)
        store.reject(.sdpAnswer(device: F.b1, generation: 2, sdp: F.restartAnswer), at: F.t0 + 9_002, .invalidGeneration)
        store.send(.sdpAnswer(device: F.b1, generation: 3, sdp: F.restartAnswer), at: F.t0 + 9_100) {
            $0.revision = 6
            $0.negotiation.pendingOffer = nil
            $0.negotiation.lastAnswer = NegotiatedDescription(side: .callee, generation: 3, description: F.restartAnswer)
            $0.negotiation.calleeUfrag = "calleeR2"
        } effects: { _ in [.deliver(to: F.a1, .sdpAnswer(from: F.b1, generation: 3, sdp: F.restartAnswer))] }
    }

    func testNegotiationIsRefusedOutsideAnAnsweredCallOrFromNonParties() {
        var ringing = F.ringingStore()
        ringing.reject(.sdpOffer(device: F.a1, generation: 1, sdp: F.restartOffer), at: F.t0 + 1_000, .invalidState)
        ringing.reject(.sdpAnswer(device: F.b1, generation: 1, sdp: F.answer), at: F.t0 + 1_000, .invalidState)
        ringing.reject(.iceCandidate(device: F.a1, generation: 0, candidate: F.candidate(1)), at: F.t0 + 1_000, .invalidGeneration)
        var active = F.activeStore()
        active.reject(.sdpOffer(device: F.b2, generation: 1, sdp: F.calleeOffer), at: F.t0 + 9_000, .notAllowed)
        active.reject(.sdpOffer(device: F.mallory, generation: 1, sdp: F.calleeOffer), at: F.t0 + 9_000, .notParticipant)
        active.reject(.sdpOffer(device: F.a1, generation: 0, sdp: F.restartOffer), at: F.t0 + 9_000, .invalidGeneration)
        active.reject(.sdpAnswer(device: F.b1, generation: 1, sdp: F.restartAnswer), at: F.t0 + 9_000, .invalidState)
        active.state = reduce(active.state, .sdpOffer(device: F.a1, generation: 1, sdp: F.restartOffer), now: F.t0 + 9_100, config: active.config).state
        active.ignore(.sdpOffer(device: F.a1, generation: 1, sdp: F.restartOffer), at: F.t0 + 9_101)  // case 8 repeat
        active.reject(.sdpOffer(device: F.a1, generation: 2, sdp: F.offer), at: F.t0 + 9_102, .invalidState)
        active.reject(.sdpAnswer(device: F.a1, generation: 2, sdp: F.answer), at: F.t0 + 9_103, .invalidState)
        active.state = reduce(active.state, .hangup(device: F.a1), now: F.t0 + 9_200, config: active.config).state
        active.reject(.sdpAnswer(device: F.b1, generation: 2, sdp: F.restartAnswer), at: F.t0 + 9_201, .callEnded)
        active.reject(.sdpOffer(device: F.b1, generation: 2, sdp: F.calleeOffer), at: F.t0 + 9_201, .callEnded)
    }
}
