import XCTest
@testable import CallCore

/// What a (re)connecting device should get (§4 cases 4 and 5).
final class DeliveryViewTests: XCTestCase {
    typealias F = Fixture

    /// Case 4: b3 was offline at invite (pushed, never delivered). The caller cancels before
    /// b3 connects: b3 gets a stop push, and on connect it sees the terminal state, no ring.
    func testCase04CancelBeforeDeliveryMeansTheDeviceNeverRings() throws {
        let config = CallConfig()
        let ringing = F.ringingState()
        XCTAssertEqual(deliveryView(of: ringing, for: F.b3, now: F.t0 + 1_000, config: config), .ring(ringing.snapshot, offer: F.offer))
        let step = reduce(ringing, .cancel(device: F.a1), now: F.t0 + 2_000, config: config)
        XCTAssertTrue(step.effects.contains(.pushNotify(to: F.b3, .stopped(callID: F.callID, reason: .cancelled))))
        let ended = try XCTUnwrap(step.state)
        XCTAssertEqual(deliveryView(of: ended, for: F.b3, now: F.t0 + 3_000, config: config), .ended(ended.snapshot))
        XCTAssertEqual(deliveryView(of: ended, for: F.a1, now: F.t0 + 3_000, config: config), .ended(ended.snapshot))
    }

    /// Case 5: a device reconnecting mid-ring rings only while the invite's server age is
    /// below lifetime − grace (and before the ring deadline).
    func testCase05ReconnectMidRingRingsOnlyWhileTheInviteIsYoungEnough() throws {
        // Ring timeout equal to the lifetime, so the grace rule is the binding one: 20 − 5 s.
        let config = CallConfig(ringTimeout: 20_000, inviteLifetime: 20_000, deliveryGrace: 5_000)
        let ringing = try XCTUnwrap(reduce(nil, .invite(F.invite), now: F.t0, config: config).state)
        XCTAssertEqual(deliveryView(of: ringing, for: F.b2, now: F.t0 + 14_999, config: config), .ring(ringing.snapshot, offer: F.offer))
        XCTAssertEqual(deliveryView(of: ringing, for: F.b2, now: F.t0 + 15_000, config: config), .ended(ringing.snapshot))
        // With defaults the ring deadline (60 s) is earlier than lifetime − grace (85 s).
        let defaults = F.ringingState()
        XCTAssertEqual(deliveryView(of: defaults, for: F.b2, now: F.t0 + 59_999, config: CallConfig()), .ring(defaults.snapshot, offer: F.offer))
        XCTAssertEqual(deliveryView(of: defaults, for: F.b2, now: F.t0 + 60_000, config: CallConfig()), .ended(defaults.snapshot))
    }

    func testReconnectAfterAnswerShowsPartyElsewhereOrNothing() throws {
        let connecting = try XCTUnwrap(F.connectingStore().state)
        let config = CallConfig()
        XCTAssertEqual(deliveryView(of: connecting, for: F.b1, now: F.t0 + 6_000, config: config), .party(connecting.snapshot))
        XCTAssertEqual(deliveryView(of: connecting, for: F.a1, now: F.t0 + 6_000, config: config), .party(connecting.snapshot))
        XCTAssertEqual(deliveryView(of: connecting, for: F.b2, now: F.t0 + 6_000, config: config), .elsewhere(connecting.snapshot))
        XCTAssertEqual(deliveryView(of: connecting, for: F.a2, now: F.t0 + 6_000, config: config), .elsewhere(connecting.snapshot))
        XCTAssertEqual(deliveryView(of: connecting, for: F.mallory, now: F.t0 + 6_000, config: config), .notParticipant)
    }
}
