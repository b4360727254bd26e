import XCTest
@testable import CallCore

/// Media transitions, hangup and the four deadlines (§2; §4 case 14).
final class CallLifecycleTests: XCTestCase {
    typealias F = Fixture

    /// Ends the call in `s` the way ``endCall`` does for a call with b1 as winner.
    static func ended(_ s: inout CallState, _ reason: CallEndReason, by: DeviceKey?, at now: Int64) {
        s.revision += 1; s.phaseRevision = s.revision; s.phase = .ended
        s.endReason = reason; s.endedBy = by; s.endedAt = now
        s.participation[F.a2] = .stopped(.ended)
        s.deadlines = CallDeadlines()
        s.negotiation.pendingOffer = nil
        s.negotiation.buffered = [:]
    }

    func testMediaConnectedMovesConnectingToActiveAndRepeatsAreUnchanged() {
        var store = F.connectingStore()
        store.send(.mediaConnected(device: F.b1), at: F.t0 + 7_000) {
            $0.revision = 3; $0.phaseRevision = 3; $0.phase = .active
            $0.deadlines.connect = nil
        } effects: { s in [.cancelDeadline(.connect), .deliver(to: F.a1, .stateChanged(s.snapshot))] }
        store.ignore(.mediaConnected(device: F.a1), at: F.t0 + 7_001)
        store.ignore(.deadlineFired(.connect), at: F.t0 + 35_000)
    }

    func testMediaLostStartsTheReconnectWindowAndRecoveryReturnsToActive() {
        var store = F.activeStore()
        store.send(.mediaLost(device: F.a1), at: F.t0 + 20_000) {
            $0.revision = 4; $0.phaseRevision = 4; $0.phase = .reconnecting
            $0.deadlines.reconnect = F.t0 + 50_000
        } effects: { s in [.scheduleDeadline(.reconnect, at: F.t0 + 50_000), .deliver(to: F.b1, .stateChanged(s.snapshot))] }
        store.ignore(.mediaLost(device: F.b1), at: F.t0 + 20_001)
        store.send(.mediaConnected(device: F.b1), at: F.t0 + 25_000) {
            $0.revision = 5; $0.phaseRevision = 5; $0.phase = .active
            $0.deadlines.reconnect = nil
        } effects: { s in [.cancelDeadline(.reconnect), .deliver(to: F.a1, .stateChanged(s.snapshot))] }
        // The recovered call's old reconnect deadline firing late changes nothing.
        store.ignore(.deadlineFired(.reconnect), at: F.t0 + 50_000)
    }

    func testMediaReportsOutsideTheirPhases() {
        var ringing = F.ringingStore()
        ringing.reject(.mediaConnected(device: F.a1), at: F.t0 + 1_000, .invalidState)
        ringing.reject(.mediaLost(device: F.a1), at: F.t0 + 1_000, .invalidState)
        ringing.reject(.mediaConnected(device: F.mallory), at: F.t0 + 1_000, .notParticipant)
        var connecting = F.connectingStore()
        // Before media ever flowed, the connect deadline decides.
        connecting.ignore(.mediaLost(device: F.a1), at: F.t0 + 6_000)
        connecting.reject(.mediaLost(device: F.b2), at: F.t0 + 6_000, .notAllowed)
    }

    func testHangupByEitherPartyEndsTheCallAndRepeatsAreUnchanged() {
        var store = F.activeStore()
        store.send(.hangup(device: F.b1), at: F.t0 + 100_000) {
            Self.ended(&$0, .hangup, by: F.b1, at: F.t0 + 100_000)
        } effects: { s in
            [.deliver(to: F.a1, .ended(.hangup, s.snapshot)), .deliver(to: F.a2, .ended(.hangup, s.snapshot))]
        }
        store.ignore(.hangup(device: F.a1), at: F.t0 + 100_001)
        store.ignore(.mediaLost(device: F.a1), at: F.t0 + 100_002)
        store.reject(.mediaConnected(device: F.a1), at: F.t0 + 100_003, .callEnded)
        XCTAssertEqual(store.state?.tombstoneExpiry(config: store.config), F.t0 + 100_000 + 86_400_000)
    }

    func testHangupWhileConnectingCancelsTheConnectDeadline() {
        var store = F.connectingStore()
        store.reject(.hangup(device: F.b2), at: F.t0 + 6_000, .notAllowed)
        store.send(.hangup(device: F.a1), at: F.t0 + 6_000) {
            Self.ended(&$0, .hangup, by: F.a1, at: F.t0 + 6_000)
        } effects: { s in
            [.cancelDeadline(.connect), .deliver(to: F.a2, .ended(.hangup, s.snapshot)), .deliver(to: F.b1, .ended(.hangup, s.snapshot))]
        }
    }

    /// Case 14: ring deadline → ended(noAnswer); every ringing device stops with noAnswer.
    func testCase14RingDeadlineEndsNoAnswer() {
        var store = F.ringingStore()
        store.ignore(.deadlineFired(.ring), at: F.t0 + 59_999)  // early fire: not due yet
        store.send(.deadlineFired(.ring), at: F.t0 + 60_000) {
            Self.ended(&$0, .noAnswer, by: nil, at: F.t0 + 60_000)
            $0.participation[F.b1] = .stopped(.noAnswer)
            $0.participation[F.b2] = .stopped(.noAnswer)
            $0.participation[F.b3] = .stopped(.noAnswer)
        } effects: { s in
            [
                .cancelDeadline(.inviteExpiry),
                .deliver(to: F.a1, .ended(.noAnswer, s.snapshot)),
                .deliver(to: F.a2, .ended(.noAnswer, s.snapshot)),
                .deliver(to: F.b1, .stopped(.noAnswer, s.snapshot)),
                .deliver(to: F.b2, .stopped(.noAnswer, s.snapshot)),
                .deliver(to: F.b3, .stopped(.noAnswer, s.snapshot)),
                .pushNotify(to: F.b3, .stopped(callID: F.callID, reason: .noAnswer)),
            ]
        }
        store.ignore(.deadlineFired(.inviteExpiry), at: F.t0 + 90_000)
    }

    /// Case 14: invite expiry (e.g. the host was down past both deadlines and fires the
    /// expiry first) → ended(expired).
    func testCase14InviteExpiryEndsExpired() {
        var store = F.ringingStore()
        store.send(.deadlineFired(.inviteExpiry), at: F.t0 + 95_000) {
            Self.ended(&$0, .expired, by: nil, at: F.t0 + 95_000)
            $0.participation[F.b1] = .stopped(.expired)
            $0.participation[F.b2] = .stopped(.expired)
            $0.participation[F.b3] = .stopped(.expired)
        } effects: { s in
            [
                .cancelDeadline(.ring),
                .deliver(to: F.a1, .ended(.expired, s.snapshot)),
                .deliver(to: F.a2, .ended(.expired, s.snapshot)),
                .deliver(to: F.b1, .stopped(.expired, s.snapshot)),
                .deliver(to: F.b2, .stopped(.expired, s.snapshot)),
                .deliver(to: F.b3, .stopped(.expired, s.snapshot)),
                .pushNotify(to: F.b3, .stopped(callID: F.callID, reason: .expired)),
            ]
        }
        store.ignore(.deadlineFired(.ring), at: F.t0 + 95_001)
    }

    /// Case 14: connect deadline → ended(connectFailed).
    func testCase14ConnectDeadlineEndsConnectFailed() {
        var store = F.connectingStore()
        store.ignore(.deadlineFired(.ring), at: F.t0 + 60_000)  // cancelled at answer
        store.send(.deadlineFired(.connect), at: F.t0 + 35_000) {
            Self.ended(&$0, .connectFailed, by: nil, at: F.t0 + 35_000)
        } effects: { s in
            [
                .deliver(to: F.a1, .ended(.connectFailed, s.snapshot)),
                .deliver(to: F.a2, .ended(.connectFailed, s.snapshot)),
                .deliver(to: F.b1, .ended(.connectFailed, s.snapshot)),
            ]
        }
    }

    /// Case 14: reconnect deadline → ended(mediaLost).
    func testCase14ReconnectDeadlineEndsMediaLost() {
        var store = F.activeStore()
        store.state = reduce(store.state, .mediaLost(device: F.b1), now: F.t0 + 20_000, config: store.config).state
        store.send(.deadlineFired(.reconnect), at: F.t0 + 50_000) {
            Self.ended(&$0, .mediaLost, by: nil, at: F.t0 + 50_000)
        } effects: { s in
            [
                .deliver(to: F.a1, .ended(.mediaLost, s.snapshot)),
                .deliver(to: F.a2, .ended(.mediaLost, s.snapshot)),
                .deliver(to: F.b1, .ended(.mediaLost, s.snapshot)),
            ]
        }
    }

    /// Case 14: all windows are configurable and stored as absolute times, so a restarted
    /// host (state decoded from storage) fires them with the same result.
    func testCase14DeadlinesAreConfigurableAndSurviveARestart() throws {
        let config = CallConfig(ringTimeout: 45_000, inviteLifetime: 60_000, connectTimeout: 10_000, reconnectTimeout: 20_000, deliveryGrace: 2_000)
        XCTAssertNoThrow(try config.validate())
        let created = reduce(nil, .invite(F.invite), now: F.t0, config: config)
        XCTAssertEqual(created.state?.deadlines, CallDeadlines(ring: F.t0 + 45_000, inviteExpiry: F.t0 + 60_000))
        let stored = try JSONEncoder().encode(created.state)
        let restored = try JSONDecoder().decode(CallState.self, from: stored)
        XCTAssertEqual(restored, created.state)
        let fired = reduce(restored, .deadlineFired(.ring), now: F.t0 + 45_000, config: config)
        XCTAssertEqual(fired.state?.endReason, .noAnswer)
        XCTAssertEqual(fired, reduce(created.state, .deadlineFired(.ring), now: F.t0 + 45_000, config: config))
    }

    /// The host stores effects with the state (transactional outbox): they round-trip.
    func testEffectsRoundTripThroughCodableForTheOutbox() throws {
        let step = reduce(nil, .invite(F.invite), now: F.t0, config: CallConfig())
        XCTAssertEqual(step.effects.count, 6)
        let decoded = try JSONDecoder().decode([CallEffect].self, from: JSONEncoder().encode(step.effects))
        XCTAssertEqual(decoded, step.effects)
    }

    func testHangupWhileReconnectingEndsTheCallAndCancelsTheReconnectDeadline() {
        var store = F.activeStore()
        store.state = reduce(store.state, .mediaLost(device: F.b1), now: F.t0 + 20_000, config: store.config).state
        store.send(.hangup(device: F.a1), at: F.t0 + 22_000) {
            Self.ended(&$0, .hangup, by: F.a1, at: F.t0 + 22_000)
        } effects: { s in
            [.cancelDeadline(.reconnect), .deliver(to: F.a2, .ended(.hangup, s.snapshot)), .deliver(to: F.b1, .ended(.hangup, s.snapshot))]
        }
    }

    /// A second media loss re-arms the reconnect deadline; the first loss's deadline firing
    /// at its old time is stale and changes nothing.
    func testReArmedReconnectDeadlineIgnoresTheOldFiring() {
        var store = F.activeStore()
        store.state = reduce(store.state, .mediaLost(device: F.b1), now: F.t0 + 20_000, config: store.config).state
        store.state = reduce(store.state, .mediaConnected(device: F.b1), now: F.t0 + 25_000, config: store.config).state
        store.send(.mediaLost(device: F.b1), at: F.t0 + 40_000) {
            $0.revision = 6; $0.phaseRevision = 6; $0.phase = .reconnecting
            $0.deadlines.reconnect = F.t0 + 70_000
        } effects: { s in [.scheduleDeadline(.reconnect, at: F.t0 + 70_000), .deliver(to: F.a1, .stateChanged(s.snapshot))] }
        store.ignore(.deadlineFired(.reconnect), at: F.t0 + 50_000)
        store.send(.deadlineFired(.reconnect), at: F.t0 + 70_000) {
            Self.ended(&$0, .mediaLost, by: nil, at: F.t0 + 70_000)
        } effects: { s in
            [
                .deliver(to: F.a1, .ended(.mediaLost, s.snapshot)),
                .deliver(to: F.a2, .ended(.mediaLost, s.snapshot)),
                .deliver(to: F.b1, .ended(.mediaLost, s.snapshot)),
            ]
        }
    }
}
