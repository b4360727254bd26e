import XCTest
@testable import CallCore

/// Invite: ringing fan-out, caller's other devices (§4 case 12), glare (case 1), busy (case 11).
final class CallInviteTests: XCTestCase {
    typealias F = Fixture

    func testInviteRingsOnlineCalleeDevicesPushesOfflineOnesAndSchedulesDeadlines() {
        var store = CallStore()
        store.create(.invite(F.invite), at: F.t0, expected: F.ringingState()) { s in
            [
                .scheduleDeadline(.ring, at: F.t0 + 60_000),
                .scheduleDeadline(.inviteExpiry, at: F.t0 + 90_000),
                .deliver(to: F.b1, .incomingCall(s.snapshot, offer: F.offer)),
                .deliver(to: F.b2, .incomingCall(s.snapshot, offer: F.offer)),
                .deliver(to: F.a2, .inProgressElsewhere(s.snapshot)),
                // Ring deadline (60 s) is earlier than lifetime − grace (85 s).
                .pushNotify(to: F.b3, .incomingCall(callID: F.callID, caller: F.a1, expiresAt: F.t0 + 60_000)),
            ]
        }
    }

    func testInviteWithoutOfferStartsAtGenerationZero() {
        var invite = F.invite
        invite.offer = nil
        invite.calleeDevices = ["b1": true]
        invite.callerOtherDevices = []
        var expected = F.ringingState()
        expected.participation = [F.a1: .callerDevice, F.b1: .ringing]
        expected.pushedDevices = []
        expected.negotiation = Negotiation()
        var store = CallStore()
        store.create(.invite(invite), at: F.t0, expected: expected) { s in
            [
                .scheduleDeadline(.ring, at: F.t0 + 60_000),
                .scheduleDeadline(.inviteExpiry, at: F.t0 + 90_000),
                .deliver(to: F.b1, .incomingCall(s.snapshot, offer: nil)),
            ]
        }
    }

    /// Case 12: the caller's other devices never ring for their own outgoing call and cannot
    /// answer or decline it; they learn "in progress elsewhere" at invite and at answer.
    func testCase12CallerOtherDevicesSeeInProgressElsewhereAndNeverRing() {
        var store = F.ringingStore()
        XCTAssertEqual(deliveryView(of: store.state!, for: F.a2, now: F.t0 + 1_000, config: store.config), .elsewhere(store.state!.snapshot))
        store.reject(.ringing(device: F.a2), at: F.t0 + 1_000, .notAllowed)
        store.reject(.answer(device: F.a2, seenRevision: 1, sdp: F.answer), at: F.t0 + 1_000, .notAllowed)
        store.reject(.decline(device: F.a2, seenRevision: 1), at: F.t0 + 1_000, .notAllowed)
        store.reject(.cancel(device: F.a2), at: F.t0 + 1_000, .notAllowed)
        store.reject(.answer(device: F.a1, seenRevision: 1, sdp: F.answer), at: F.t0 + 1_000, .notAllowed)
        store.send(.answer(device: F.b2, seenRevision: 1, sdp: F.answer), at: F.t0 + 2_000) {
            $0.revision = 2; $0.phaseRevision = 2; $0.phase = .connecting; $0.answeredBy = F.b2
            $0.participation[F.b2] = .answered
            $0.participation[F.b1] = .stopped(.answeredElsewhere)
            $0.participation[F.b3] = .stopped(.answeredElsewhere)
            $0.deadlines = CallDeadlines(connect: F.t0 + 32_000)
            $0.negotiation.pendingOffer = nil
            $0.negotiation.lastAnswer = NegotiatedDescription(side: .callee, generation: 1, description: F.answer)
            $0.negotiation.calleeUfrag = "calleeB"
        } effects: { s in
            [
                .cancelDeadline(.ring), .cancelDeadline(.inviteExpiry),
                .scheduleDeadline(.connect, at: F.t0 + 32_000),
                .deliver(to: F.a1, .answered(s.snapshot, by: F.b2, sdp: F.answer)),
                .deliver(to: F.b1, .stopped(.answeredElsewhere, s.snapshot)),
                .deliver(to: F.b3, .stopped(.answeredElsewhere, s.snapshot)),
                .deliver(to: F.a2, .inProgressElsewhere(s.snapshot)),
                .pushNotify(to: F.b3, .stopped(callID: F.callID, reason: .answeredElsewhere)),
            ]
        }
        store.reject(.hangup(device: F.a2), at: F.t0 + 3_000, .notAllowed)
        XCTAssertEqual(deliveryView(of: store.state!, for: F.a2, now: F.t0 + 3_000, config: store.config), .elsewhere(store.state!.snapshot))
    }

    func testDuplicateInviteIsUnchangedAndOtherCallerReusingTheIDIsRejected() {
        var store = F.ringingStore()
        store.ignore(.invite(F.invite), at: F.t0 + 500)
        var other = F.invite
        other.caller = F.mallory
        store.reject(.invite(other), at: F.t0 + 500, .callExists)
        var otherCallee = F.invite
        otherCallee.callee = "carol"
        store.reject(.invite(otherCallee), at: F.t0 + 500, .callExists)
    }

    func testInviteForEndedCallIsRejectedAndNeverRingsAgain() {
        var store = F.ringingStore()
        store.state = reduce(store.state, .cancel(device: F.a1), now: F.t0 + 1_000, config: store.config).state
        store.reject(.invite(F.invite), at: F.t0 + 2_000, .callEnded)
    }

    func testMalformedInvitesAreRejectedWithoutCreatingACall() {
        var store = CallStore()
        var selfCall = F.invite
        selfCall.callee = "alice"
        store.reject(.invite(selfCall), at: F.t0, .invalidEvent)
        var emptyID = F.invite
        emptyID.callID = ""
        store.reject(.invite(emptyID), at: F.t0, .invalidEvent)
        var noDevices = F.invite
        noDevices.calleeDevices = ["": true]
        store.reject(.invite(noDevices), at: F.t0, .calleeUnavailable)
        store.reject(.ringing(device: F.b1), at: F.t0, .callNotFound)
        XCTAssertNil(store.state)
    }

    /// Case 1, glare: A's invite to B arrives while B's call to A still rings. The second
    /// invite is refused with `glare` and creates nothing; B's call to A goes on, and A
    /// answers it, so each user has exactly one call.
    func testCase01GlareSecondInviteIsRefusedAndTheExistingCallIsAnswered() {
        // B's call to A (already ringing at A).
        let reverse = CallInvite(callID: "call-ba", caller: F.b1, callee: "alice", calleeDevices: ["a1": true, "a2": true], offer: F.answer)
        var reverseStore = CallStore()
        let reverseStep = reduce(nil, .invite(reverse), now: F.t0, config: reverseStore.config)
        XCTAssertEqual(reverseStep.outcome, .accepted(revision: 1))
        reverseStore.state = reverseStep.state

        // A's call to B, with the host's context naming the ringing reverse call.
        var crossing = F.invite
        crossing.context = InviteContext(glareCallID: "call-ba")
        var crossingStore = CallStore()
        crossingStore.reject(.invite(crossing), at: F.t0 + 300, .glare)
        XCTAssertNil(crossingStore.state)

        // A answers the existing incoming call instead.
        let answered = reduce(reverseStore.state, .answer(device: F.a1, seenRevision: 1, sdp: F.offer), now: F.t0 + 400, config: reverseStore.config)
        XCTAssertEqual(answered.outcome, .accepted(revision: 2))
        XCTAssertEqual(answered.state?.phase, .connecting)
        XCTAssertEqual(answered.state?.answeredBy, F.a1)
    }

    /// Case 11, busy: call waiting off. The call is created ended(busy): the caller is told
    /// busy, online callee devices get stopped(busyElsewhere), nothing rings or is pushed.
    func testCase11BusyCalleeEndsCallAtOnceAndNeverRings() {
        var invite = F.invite
        invite.context = InviteContext(calleeBusy: true)
        let expected = CallState(
            callID: F.callID, revision: 1, phaseRevision: 1, phase: .ended, caller: F.a1, callee: "bob",
            participation: [
                F.a1: .callerDevice, F.a2: .stopped(.ended),
                F.b1: .stopped(.busyElsewhere), F.b2: .stopped(.busyElsewhere), F.b3: .stopped(.busyElsewhere),
            ],
            endReason: .busy, createdAt: F.t0, endedAt: F.t0,
            negotiation: Negotiation(generation: 1, callerUfrag: "callerA")
        )
        var store = CallStore()
        store.create(.invite(invite), at: F.t0, expected: expected) { s in
            [
                .deliver(to: F.a1, .ended(.busy, s.snapshot)),
                .deliver(to: F.b1, .stopped(.busyElsewhere, s.snapshot)),
                .deliver(to: F.b2, .stopped(.busyElsewhere, s.snapshot)),
            ]
        }
        XCTAssertEqual(deliveryView(of: expected, for: F.b3, now: F.t0 + 1, config: store.config), .ended(expected.snapshot))
        store.reject(.answer(device: F.b1, seenRevision: 1, sdp: F.answer), at: F.t0 + 1, .callEnded)
        store.ignore(.deadlineFired(.ring), at: F.t0 + 60_000)
        XCTAssertEqual(expected.tombstoneExpiry(config: store.config), F.t0 + 86_400_000)
    }
}

/// SFU-routed 1:1 calls (issue 3): the call carries no SDP; media is negotiated in the room.
final class CallMediaModeTests: XCTestCase {
    let alice = DeviceKey(account: "alice", device: "laptop")
    let bob = DeviceKey(account: "bob", device: "phone")

    func invite(_ media: CallMedia, offer: SessionDescription? = nil) -> CallEvent {
        .invite(CallInvite(callID: "c1", caller: alice, callee: "bob", calleeDevices: ["phone": true], offer: offer, media: media))
    }

    func testSFUInviteRecordsTheModeAndShowsItInTheSnapshot() {
        let step = reduce(nil, invite(.sfu), now: 1_000, config: .default)
        XCTAssertEqual(step.outcome, .accepted(revision: 1))
        XCTAssertEqual(step.state?.media, .sfu)
        XCTAssertEqual(step.state?.snapshot.media, .sfu)
        XCTAssertEqual(reduce(nil, invite(.p2p), now: 1_000, config: .default).state?.media, .p2p)
    }

    func testSFUInviteWithAnOfferIsRefused() {
        let step = reduce(nil, invite(.sfu, offer: SessionDescription(sdp: "v=0")), now: 1_000, config: .default)
        XCTAssertEqual(step.outcome, .rejected(.invalidEvent))
        XCTAssertNil(step.state)
    }

    func testSFUCallRefusesPeerToPeerNegotiationButAnswersWithoutSDP() throws {
        let ringing = try XCTUnwrap(reduce(nil, invite(.sfu), now: 1_000, config: .default).state)
        let withSDP = reduce(ringing, .answer(device: bob, seenRevision: 1, sdp: SessionDescription(sdp: "v=0")), now: 2_000, config: .default)
        XCTAssertEqual(withSDP.outcome, .rejected(.invalidState))
        XCTAssertEqual(withSDP.state, ringing)
        let answered = reduce(ringing, .answer(device: bob, seenRevision: 1, sdp: nil), now: 2_000, config: .default)
        XCTAssertEqual(answered.outcome, .accepted(revision: 2))
        let connecting = try XCTUnwrap(answered.state)
        let candidate = IceCandidate(candidate: "candidate:1 1 udp 1 127.0.0.1 1 typ host")
        XCTAssertEqual(reduce(connecting, .iceCandidate(device: alice, generation: 0, candidate: candidate), now: 3_000, config: .default).outcome,
                       .rejected(.invalidState))
        XCTAssertEqual(reduce(connecting, .sdpOffer(device: alice, generation: 0, sdp: SessionDescription(sdp: "v=0")), now: 3_000, config: .default).outcome,
                       .rejected(.invalidState))
    }
}
