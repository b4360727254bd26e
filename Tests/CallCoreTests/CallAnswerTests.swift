import XCTest
@testable import CallCore

/// Ringing acknowledgement and answer arbitration (§3; §4 cases 2, 3, 8, 9, 13).
final class CallAnswerTests: XCTestCase {
    typealias F = Fixture

    /// The expected mutation of `answer(b1, seen 1, sdp)` on the fixture's ringing call.
    static func b1Wins(_ s: inout CallState, at now: Int64, revision: Int64 = 2) {
        s.revision = revision; s.phaseRevision = revision; s.phase = .connecting; s.answeredBy = F.b1
        s.participation[F.b1] = .answered
        s.participation[F.b2] = .stopped(.answeredElsewhere)
        s.participation[F.b3] = .stopped(.answeredElsewhere)
        s.deadlines = CallDeadlines(connect: now + 30_000)
        s.negotiation.pendingOffer = nil
        s.negotiation.lastAnswer = NegotiatedDescription(side: .callee, generation: 1, description: F.answer)
        s.negotiation.calleeUfrag = "calleeB"
    }

    static func b1WinsEffects(_ s: CallState, at now: Int64) -> [CallEffect] {
        [
            .cancelDeadline(.ring), .cancelDeadline(.inviteExpiry),
            .scheduleDeadline(.connect, at: now + 30_000),
            .deliver(to: F.a1, .answered(s.snapshot, by: F.b1, sdp: F.answer)),
            .deliver(to: F.b2, .stopped(.answeredElsewhere, s.snapshot)),
            .deliver(to: F.b3, .stopped(.answeredElsewhere, s.snapshot)),
            .deliver(to: F.a2, .inProgressElsewhere(s.snapshot)),
            .pushNotify(to: F.b3, .stopped(callID: F.callID, reason: .answeredElsewhere)),
        ]
    }

    func testRingingAcknowledgementNotifiesTheCallerOnceAndRepeatsAreUnchanged() {
        var store = F.ringingStore()
        store.send(.ringing(device: F.b2), at: F.t0 + 800) {
            $0.revision = 2
            $0.participation[F.b2] = .ringingAcknowledged
        } effects: { s in [.deliver(to: F.a1, .ringingOnCallee(s.snapshot))] }
        store.ignore(.ringing(device: F.b2), at: F.t0 + 900)
        store.send(.ringing(device: F.b1), at: F.t0 + 1_000) {
            $0.revision = 3
            $0.participation[F.b1] = .ringingAcknowledged
        } effects: { _ in [] }
        store.reject(.ringing(device: F.a1), at: F.t0 + 1_000, .notAllowed)
        store.reject(.ringing(device: F.mallory), at: F.t0 + 1_000, .notParticipant)
    }

    /// Ringing acknowledgements of other devices do not make a ringing device's view stale:
    /// the compare-and-set is against the revision of the last phase change.
    func testAnswerWithRevisionSeenBeforeOtherDevicesAcknowledgedRingingWins() {
        var store = F.ringingStore()
        store.state = reduce(store.state, .ringing(device: F.b2), now: F.t0 + 500, config: store.config).state
        store.state = reduce(store.state, .ringing(device: F.b3), now: F.t0 + 600, config: store.config).state
        store.send(.answer(device: F.b1, seenRevision: 1, sdp: F.answer), at: F.t0 + 700) {
            Self.b1Wins(&$0, at: F.t0 + 700, revision: 4)
        } effects: { s in
            // b3 confirmed ringing (it is online now), so it gets no stop push.
            Array(Self.b1WinsEffects(s, at: F.t0 + 700).dropLast())
        }
    }

    /// Case 2: three devices answer with the same seen revision; the first applied wins, the
    /// others are refused with `staleRevision` (the host attaches the snapshot), and the
    /// winner's own repeat is `unchanged` (case 8).
    func testCase02ThreeDevicesAnswerAtOnceExactlyOneWins() {
        var store = F.ringingStore()
        store.send(.answer(device: F.b1, seenRevision: 1, sdp: F.answer), at: F.t0 + 5_000) {
            Self.b1Wins(&$0, at: F.t0 + 5_000)
        } effects: { s in Self.b1WinsEffects(s, at: F.t0 + 5_000) }
        store.reject(.answer(device: F.b2, seenRevision: 1, sdp: F.answer), at: F.t0 + 5_001, .staleRevision)
        store.reject(.answer(device: F.b3, seenRevision: 1, sdp: nil), at: F.t0 + 5_002, .staleRevision)
        store.ignore(.answer(device: F.b1, seenRevision: 1, sdp: F.answer), at: F.t0 + 5_003)
        // A loser that saw the new snapshot and answers anyway is not allowed.
        store.reject(.answer(device: F.b2, seenRevision: 2, sdp: F.answer), at: F.t0 + 5_004, .notAllowed)
        // Losers cannot take part in media or negotiation (their media never starts).
        store.reject(.iceCandidate(device: F.b2, generation: 1, candidate: F.candidate(1)), at: F.t0 + 5_005, .notAllowed)
        store.reject(.mediaConnected(device: F.b2), at: F.t0 + 5_006, .notAllowed)
    }

    /// Case 3: the answer is applied first; the racing cancel loses and is refused, the call
    /// stays connecting, nothing re-rings.
    func testCase03AnswerBeatsCancel() {
        var store = F.ringingStore()
        store.send(.answer(device: F.b1, seenRevision: 1, sdp: F.answer), at: F.t0 + 5_000) {
            Self.b1Wins(&$0, at: F.t0 + 5_000)
        } effects: { s in Self.b1WinsEffects(s, at: F.t0 + 5_000) }
        store.reject(.cancel(device: F.a1), at: F.t0 + 5_001, .alreadyAnswered)
    }

    /// Case 3: the cancel is applied first; the racing answer gets `callEnded` (terminal
    /// snapshot), never a re-ring.
    func testCase03CancelBeatsAnswer() {
        var store = F.ringingStore()
        store.send(.cancel(device: F.a1), at: F.t0 + 5_000) {
            $0.revision = 2; $0.phaseRevision = 2; $0.phase = .ended
            $0.endReason = .cancelled; $0.endedBy = F.a1; $0.endedAt = F.t0 + 5_000
            $0.participation[F.a2] = .stopped(.ended)
            $0.participation[F.b1] = .stopped(.cancelled)
            $0.participation[F.b2] = .stopped(.cancelled)
            $0.participation[F.b3] = .stopped(.cancelled)
            $0.deadlines = CallDeadlines()
            $0.negotiation.pendingOffer = nil
        } effects: { s in
            [
                .cancelDeadline(.ring), .cancelDeadline(.inviteExpiry),
                .deliver(to: F.a2, .ended(.cancelled, s.snapshot)),
                .deliver(to: F.b1, .stopped(.cancelled, s.snapshot)),
                .deliver(to: F.b2, .stopped(.cancelled, s.snapshot)),
                .deliver(to: F.b3, .stopped(.cancelled, s.snapshot)),
                .pushNotify(to: F.b3, .stopped(callID: F.callID, reason: .cancelled)),
            ]
        }
        store.reject(.answer(device: F.b1, seenRevision: 1, sdp: F.answer), at: F.t0 + 5_001, .callEnded)
        store.reject(.ringing(device: F.b2), at: F.t0 + 5_002, .callEnded)
        // Case 8: a late repeat of the cancel changes nothing.
        store.ignore(.cancel(device: F.a1), at: F.t0 + 5_003)
        store.ignore(.hangup(device: F.a1), at: F.t0 + 5_004)
    }

    /// Case 3: answer vs decline on two devices of the callee, answer first.
    func testCase03AnswerBeatsDecline() {
        var store = F.ringingStore()
        store.send(.answer(device: F.b1, seenRevision: 1, sdp: F.answer), at: F.t0 + 5_000) {
            Self.b1Wins(&$0, at: F.t0 + 5_000)
        } effects: { s in Self.b1WinsEffects(s, at: F.t0 + 5_000) }
        store.reject(.decline(device: F.b2, seenRevision: 1), at: F.t0 + 5_001, .staleRevision)
        store.reject(.decline(device: F.b1, seenRevision: 2), at: F.t0 + 5_002, .invalidState)
    }

    /// Case 13 (and case 3 with decline first): a decline on one device ends the 1:1 call for
    /// all devices; the others get declinedElsewhere; a later answer gets `callEnded`; a
    /// second decline is `unchanged` (case 8).
    func testCase13DeclineOnOneDeviceEndsTheCallForAllDevices() {
        var store = F.ringingStore()
        store.state = reduce(store.state, .ringing(device: F.b1), now: F.t0 + 500, config: store.config).state
        store.send(.decline(device: F.b1, seenRevision: 2), at: F.t0 + 4_000) {
            $0.revision = 3; $0.phaseRevision = 3; $0.phase = .ended
            $0.endReason = .declined; $0.endedBy = F.b1; $0.endedAt = F.t0 + 4_000
            $0.participation[F.a2] = .stopped(.ended)
            $0.participation[F.b1] = .stopped(.declined)
            $0.participation[F.b2] = .stopped(.declinedElsewhere)
            $0.participation[F.b3] = .stopped(.declinedElsewhere)
            $0.deadlines = CallDeadlines()
            $0.negotiation.pendingOffer = nil
        } effects: { s in
            [
                .cancelDeadline(.ring), .cancelDeadline(.inviteExpiry),
                .deliver(to: F.a1, .ended(.declined, s.snapshot)),
                .deliver(to: F.a2, .ended(.declined, s.snapshot)),
                .deliver(to: F.b2, .stopped(.declinedElsewhere, s.snapshot)),
                .deliver(to: F.b3, .stopped(.declinedElsewhere, s.snapshot)),
                .pushNotify(to: F.b3, .stopped(callID: F.callID, reason: .declinedElsewhere)),
            ]
        }
        store.ignore(.decline(device: F.b1, seenRevision: 2), at: F.t0 + 4_001)
        store.ignore(.decline(device: F.b2, seenRevision: 1), at: F.t0 + 4_002)
        store.reject(.answer(device: F.b2, seenRevision: 1, sdp: F.answer), at: F.t0 + 4_003, .callEnded)
        store.ignore(.cancel(device: F.a1), at: F.t0 + 4_004)
        store.ignore(.deadlineFired(.ring), at: F.t0 + 60_000)
    }

    /// Case 9: a revision from the future is refused `invalidRevision`; one from before the
    /// last phase change is refused `staleRevision`. State and effects stay untouched.
    func testCase09StaleAndOutOfOrderRevisionsAreRefused() {
        var store = F.ringingStore()
        store.reject(.answer(device: F.b1, seenRevision: 7, sdp: F.answer), at: F.t0 + 1_000, .invalidRevision)
        store.reject(.decline(device: F.b1, seenRevision: 7), at: F.t0 + 1_000, .invalidRevision)
        store.reject(.answer(device: F.b1, seenRevision: 0, sdp: F.answer), at: F.t0 + 1_000, .staleRevision)
        store.reject(.decline(device: F.b2, seenRevision: 0), at: F.t0 + 1_000, .staleRevision)
    }

    func testAnswerWithSDPWhenNoOfferIsPendingIsRefused() {
        var invite = F.invite
        invite.offer = nil
        var store = CallStore()
        store.state = reduce(nil, .invite(invite), now: F.t0, config: store.config).state
        store.reject(.answer(device: F.b1, seenRevision: 1, sdp: F.answer), at: F.t0 + 1_000, .invalidState)
    }

    func testHangupWhileRingingIsCancelForTheCallerAndDeclineForACalleeDevice() {
        let ringing = F.ringingState()
        let viaHangup = reduce(ringing, .hangup(device: F.a1), now: F.t0 + 1_000, config: CallConfig())
        let viaCancel = reduce(ringing, .cancel(device: F.a1), now: F.t0 + 1_000, config: CallConfig())
        XCTAssertEqual(viaHangup, viaCancel)
        XCTAssertEqual(viaHangup.state?.endReason, .cancelled)
        let calleeHangup = reduce(ringing, .hangup(device: F.b2), now: F.t0 + 1_000, config: CallConfig())
        let calleeDecline = reduce(ringing, .decline(device: F.b2, seenRevision: 1), now: F.t0 + 1_000, config: CallConfig())
        XCTAssertEqual(calleeHangup, calleeDecline)
        XCTAssertEqual(calleeHangup.state?.endReason, .declined)
        var store = CallStore(state: ringing)
        store.reject(.hangup(device: F.a2), at: F.t0 + 1_000, .notAllowed)
        store.reject(.hangup(device: F.mallory), at: F.t0 + 1_000, .notParticipant)
        store.reject(.cancel(device: F.b1), at: F.t0 + 1_000, .notAllowed)
    }
}
