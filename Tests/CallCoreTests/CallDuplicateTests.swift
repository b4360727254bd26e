import XCTest
@testable import CallCore

/// §4 case 8: repeats that slip past the host's eventID dedup give the first result again
/// (or a no-op) and never a second effect.
final class CallDuplicateTests: XCTestCase {
    typealias F = Fixture

    func testCase08EveryRepeatedEventIsANoOpWithoutEffects() {
        var ringing = F.ringingStore()
        ringing.ignore(.invite(F.invite), at: F.t0 + 10)
        ringing.state = reduce(ringing.state, .ringing(device: F.b1), now: F.t0 + 20, config: ringing.config).state
        ringing.ignore(.ringing(device: F.b1), at: F.t0 + 30)
        ringing.state = reduce(ringing.state, .iceCandidate(device: F.a1, generation: 1, candidate: F.candidate(1)), now: F.t0 + 40, config: ringing.config).state
        ringing.ignore(.iceCandidate(device: F.a1, generation: 1, candidate: F.candidate(1)), at: F.t0 + 50)

        var active = F.activeStore()
        active.ignore(.answer(device: F.b1, seenRevision: 1, sdp: F.answer), at: F.t0 + 8_000)
        active.ignore(.mediaConnected(device: F.b1), at: F.t0 + 8_000)
        active.state = reduce(active.state, .sdpOffer(device: F.a1, generation: 1, sdp: F.restartOffer), now: F.t0 + 8_100, config: active.config).state
        active.ignore(.sdpOffer(device: F.a1, generation: 1, sdp: F.restartOffer), at: F.t0 + 8_200)
        active.state = reduce(active.state, .sdpAnswer(device: F.b1, generation: 2, sdp: F.restartAnswer), now: F.t0 + 8_300, config: active.config).state
        active.ignore(.sdpAnswer(device: F.b1, generation: 2, sdp: F.restartAnswer), at: F.t0 + 8_400)
        active.state = reduce(active.state, .mediaLost(device: F.a1), now: F.t0 + 9_000, config: active.config).state
        active.ignore(.mediaLost(device: F.a1), at: F.t0 + 9_100)
        active.state = reduce(active.state, .hangup(device: F.a1), now: F.t0 + 10_000, config: active.config).state
        active.ignore(.hangup(device: F.a1), at: F.t0 + 10_100)
        active.ignore(.hangup(device: F.b1), at: F.t0 + 10_200)
        active.ignore(.deadlineFired(.reconnect), at: F.t0 + 60_000)
        active.reject(.invite(F.invite), at: F.t0 + 10_300, .callEnded)
    }
}
