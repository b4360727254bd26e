import XCTest
@testable import CallCore
import SplitMix

/// Randomized, replayable (fixed-seed SplitMix64) checks of the arbitration invariants.
final class CallRandomizedTests: XCTestCase {
    typealias F = Fixture
    static let callees = [F.b1, F.b2, F.b3]

    /// ≥ 500 trials: three callee devices each send ringing + answer at the same seen revision,
    /// some events repeated, sometimes a decline and/or a cancel; shuffled and applied in
    /// order. The first applied of (answer, decline, cancel) decides, exactly as the server
    /// order says; never two winners; nobody rings at the end; ended never left.
    func testShuffledAnswerRacesHaveExactlyTheFirstAppliedOutcome() {
        var rng = SplitMix64(seed: 0x5EED_CA11)
        let config = CallConfig()
        var outcomes: [String: Int] = [:]
        for trial in 0..<1_000 {
            let withDecline = trial % 4 == 1 || trial % 4 == 3
            let withCancel = trial % 4 == 2 || trial % 4 == 3
            var events: [CallEvent] = []
            for device in Self.callees {
                events.append(.ringing(device: device))
                events.append(.answer(device: device, seenRevision: 1, sdp: F.answer))
            }
            if withDecline, let decliner = Self.callees.randomElement(using: &rng) {
                events.append(.decline(device: decliner, seenRevision: 1))
            }
            if withCancel { events.append(.cancel(device: F.a1)) }
            for _ in 0..<Int.random(in: 0...3, using: &rng) {
                if let repeated = events.randomElement(using: &rng) { events.append(repeated) }
            }
            events.shuffle(using: &rng)

            // Oracle: the first decisive event in apply order.
            let decisive = events.first { event in
                switch event {
                case .answer, .decline, .cancel: return true
                default: return false
                }
            }

            var state: CallState? = F.ringingState()
            var winners: Set<DeviceKey> = []
            var answeredNotices = 0
            var now = F.t0
            for event in events {
                now += Int64.random(in: 1...50, using: &rng)
                let before = state
                let step = reduce(state, event, now: now, config: config)
                checkStep(before: before, event: event, step: step, trial: trial)
                if case .answer(let device, _, _) = event, case .accepted = step.outcome { winners.insert(device) }
                answeredNotices += step.effects.filter {
                    if case .deliver(_, .answered) = $0 { return true } else { return false }
                }.count
                state = step.state
            }
            guard let final = state else { return XCTFail("trial \(trial): call vanished") }
            XCTAssertLessThanOrEqual(winners.count, 1, "trial \(trial): two winners")
            XCTAssertLessThanOrEqual(answeredNotices, 1, "trial \(trial): caller told twice")
            for device in Self.callees {
                XCTAssertFalse(final.participation[device]?.isRinging ?? true, "trial \(trial): \(device) still rings")
            }
            switch decisive {
            case .answer(let device, _, _)?:
                XCTAssertEqual(final.phase, .connecting, "trial \(trial)")
                XCTAssertEqual(final.answeredBy, device, "trial \(trial)")
                XCTAssertEqual(winners, [device], "trial \(trial)")
                outcomes["answered", default: 0] += 1
            case .decline?:
                XCTAssertEqual(final.phase, .ended, "trial \(trial)")
                XCTAssertEqual(final.endReason, .declined, "trial \(trial)")
                XCTAssertNil(final.answeredBy, "trial \(trial)")
                outcomes["declined", default: 0] += 1
            case .cancel?:
                XCTAssertEqual(final.phase, .ended, "trial \(trial)")
                XCTAssertEqual(final.endReason, .cancelled, "trial \(trial)")
                XCTAssertNil(final.answeredBy, "trial \(trial)")
                outcomes["cancelled", default: 0] += 1
            default:
                XCTFail("trial \(trial): no decisive event")
            }
            if !withDecline && !withCancel {
                XCTAssertEqual(final.phase, .connecting, "trial \(trial): answers only must connect")
                XCTAssertEqual(winners.count, 1, "trial \(trial)")
            }
        }
        // The seed must actually exercise every branch.
        XCTAssertGreaterThan(outcomes["answered", default: 0], 100)
        XCTAssertGreaterThan(outcomes["declined", default: 0], 50)
        XCTAssertGreaterThan(outcomes["cancelled", default: 0], 50)
        print("randomized answer races: \(outcomes.sorted { $0.key < $1.key })")
    }

    /// 2 000 trials of 40 events drawn from every event kind with random devices, revisions
    /// and generations (including malformed ones): general invariants hold at every step.
    func testRandomEventSoupKeepsTheReducerInvariants() {
        var rng = SplitMix64(seed: 0xC0FFEE)
        var config = CallConfig()
        config.candidateBufferLimit = 4
        let devices = [F.a1, F.a2, F.b1, F.b2, F.b3, F.mallory]
        let descriptions = [F.offer, F.answer, F.restartOffer, F.calleeOffer, F.restartAnswer]
        var phasesSeen: Set<CallPhase> = []
        for trial in 0..<2_000 {
            var state: CallState? = F.ringingState(config: config)
            var now = F.t0
            var winner: DeviceKey?
            for _ in 0..<40 {
                now += Int64.random(in: 0...8_000, using: &rng)
                let device = devices.randomElement(using: &rng) ?? F.a1
                let revision = Int64.random(in: 0...((state?.revision ?? 1) + 1), using: &rng)
                let generation = Int64.random(in: 0...((state?.negotiation.generation ?? 1) + 1), using: &rng)
                let sdp = descriptions.randomElement(using: &rng) ?? F.offer
                let ufrag = ["callerA", "calleeB", "callerR", "stale", nil].randomElement(using: &rng) ?? nil
                let event: CallEvent
                switch Int.random(in: 0..<13, using: &rng) {
                case 0: event = .ringing(device: device)
                case 1, 2: event = .answer(device: device, seenRevision: revision, sdp: Bool.random(using: &rng) ? sdp : nil)
                case 3: event = .decline(device: device, seenRevision: revision)
                case 4: event = .cancel(device: device)
                case 5: event = .hangup(device: device)
                case 6: event = .sdpOffer(device: device, generation: generation, sdp: sdp)
                case 7: event = .sdpAnswer(device: device, generation: generation, sdp: sdp)
                case 8: event = .iceCandidate(device: device, generation: generation, candidate: F.candidate(Int.random(in: 1...9, using: &rng), ufrag: ufrag))
                case 9: event = .mediaConnected(device: device)
                case 10: event = .mediaLost(device: device)
                case 11: event = .deadlineFired(DeadlineKind.allCases.randomElement(using: &rng) ?? .ring)
                default: event = .invite(F.invite)
                }
                let before = state
                let step = reduce(state, event, now: now, config: config)
                checkStep(before: before, event: event, step: step, trial: trial)
                if let answeredBy = step.state?.answeredBy {
                    if let winner { XCTAssertEqual(answeredBy, winner, "trial \(trial): winner changed") }
                    winner = answeredBy
                }
                for buffer in step.state?.negotiation.buffered.values ?? [:].values {
                    XCTAssertLessThanOrEqual(buffer.candidates.count, config.candidateBufferLimit, "trial \(trial)")
                }
                state = step.state
                if let phase = state?.phase { phasesSeen.insert(phase) }
            }
        }
        XCTAssertEqual(phasesSeen, Set(CallPhase.allCases), "the soup must reach every phase")
    }

    /// Step invariants shared by both randomized tests.
    private func checkStep(before: CallState?, event: CallEvent, step: CallStep, trial: Int, file: StaticString = #filePath, line: UInt = #line) {
        switch step.outcome {
        case .rejected, .unchanged:
            XCTAssertEqual(step.state, before, "trial \(trial): \(event) changed state without acceptance", file: file, line: line)
            XCTAssertEqual(step.effects, [], "trial \(trial): \(event) had effects without acceptance", file: file, line: line)
        case .accepted(let revision):
            XCTAssertEqual(revision, step.state?.revision, "trial \(trial)", file: file, line: line)
            if step.state == before {
                // A pure relay: no stored change, no revision change.
                XCTAssertEqual(revision, before?.revision, "trial \(trial)", file: file, line: line)
            } else {
                XCTAssertEqual(revision, (before?.revision ?? 0) + 1, "trial \(trial): \(event) must bump once", file: file, line: line)
            }
            XCTAssertFalse(before?.phase.isTerminal ?? false, "trial \(trial): \(event) accepted on an ended call", file: file, line: line)
        }
        if before?.phase == .ended {
            XCTAssertEqual(step.state?.phase, .ended, "trial \(trial): left ended on \(event)", file: file, line: line)
        }
        if before != nil {
            // Never (re-)ring once the call exists.
            for effect in step.effects {
                if case .deliver(_, .incomingCall) = effect { XCTFail("trial \(trial): re-ring on \(event)", file: file, line: line) }
                if case .pushNotify(_, .incomingCall) = effect { XCTFail("trial \(trial): re-push on \(event)", file: file, line: line) }
            }
        }
        if let state = step.state, state.phase == .ended {
            XCTAssertFalse(state.participation.values.contains { $0.isRinging }, "trial \(trial): ended call still rings", file: file, line: line)
            XCTAssertEqual(state.deadlines, CallDeadlines(), "trial \(trial)", file: file, line: line)
            XCTAssertEqual(state.negotiation.buffered, [:], "trial \(trial)", file: file, line: line)
        }
        if let state = step.state, state.phase != .ringing, state.phase != .ended {
            XCTAssertNotNil(state.answeredBy, "trial \(trial)", file: file, line: line)
            XCTAssertFalse(state.participation.values.contains { $0.isRinging }, "trial \(trial): answered call still rings", file: file, line: line)
        }
    }
}
