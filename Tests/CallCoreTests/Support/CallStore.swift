import XCTest
@testable import CallCore

/// A TCA-TestStore-style driver for ``reduce(_:_:now:config:)``: every `send` asserts the
/// whole resulting state (expected = previous state mutated by the test) and the exact effect
/// list (built from the expected state, so snapshots in notices are checked too).
struct CallStore {
    var state: CallState?
    var config: CallConfig

    init(state: CallState? = nil, config: CallConfig = CallConfig()) {
        self.state = state
        self.config = config
    }

    /// Sends an event that must be accepted.
    @discardableResult
    mutating func send(
        _ event: CallEvent, at now: Int64,
        file: StaticString = #filePath, line: UInt = #line,
        _ update: (inout CallState) -> Void,
        effects: (CallState) -> [CallEffect]
    ) -> CallStep {
        let step = reduce(state, event, now: now, config: config)
        guard var expected = state else {
            XCTFail("no call yet: use create(_:at:expected:effects:) for \(event)", file: file, line: line)
            return step
        }
        update(&expected)
        XCTAssertEqual(step.state, expected, "state after \(event)", file: file, line: line)
        XCTAssertEqual(step.outcome, .accepted(revision: expected.revision), "outcome of \(event)", file: file, line: line)
        assertEffects(step.effects, effects(expected), file: file, line: line)
        state = step.state
        return step
    }

    /// Sends an event that creates the call; the test writes the whole new state out.
    mutating func create(
        _ event: CallEvent, at now: Int64, expected: CallState,
        file: StaticString = #filePath, line: UInt = #line,
        effects: (CallState) -> [CallEffect]
    ) {
        let step = reduce(state, event, now: now, config: config)
        XCTAssertEqual(step.state, expected, "state after \(event)", file: file, line: line)
        XCTAssertEqual(step.outcome, .accepted(revision: expected.revision), "outcome of \(event)", file: file, line: line)
        assertEffects(step.effects, effects(expected), file: file, line: line)
        state = step.state
    }

    /// Sends an event that must be refused with `code`, leaving state and effects untouched.
    mutating func reject(_ event: CallEvent, at now: Int64, _ code: CallRejection, file: StaticString = #filePath, line: UInt = #line) {
        let step = reduce(state, event, now: now, config: config)
        XCTAssertEqual(step.outcome, .rejected(code), "outcome of \(event)", file: file, line: line)
        XCTAssertEqual(step.state, state, "state after rejected \(event)", file: file, line: line)
        XCTAssertEqual(step.effects, [], "effects of rejected \(event)", file: file, line: line)
    }

    /// Sends an event that must be a legal no-op.
    mutating func ignore(_ event: CallEvent, at now: Int64, file: StaticString = #filePath, line: UInt = #line) {
        let step = reduce(state, event, now: now, config: config)
        XCTAssertEqual(step.outcome, .unchanged, "outcome of \(event)", file: file, line: line)
        XCTAssertEqual(step.state, state, "state after ignored \(event)", file: file, line: line)
        XCTAssertEqual(step.effects, [], "effects of ignored \(event)", file: file, line: line)
    }

    /// Sends an event that must be relayed without a stored change.
    mutating func relay(_ event: CallEvent, at now: Int64, file: StaticString = #filePath, line: UInt = #line, effects: [CallEffect]) {
        let step = reduce(state, event, now: now, config: config)
        XCTAssertEqual(step.outcome, .accepted(revision: state?.revision ?? -1), "outcome of \(event)", file: file, line: line)
        XCTAssertEqual(step.state, state, "state after relayed \(event)", file: file, line: line)
        assertEffects(step.effects, effects, file: file, line: line)
    }
}

/// Compares effect lists element by element so a failure names the first differing effect.
func assertEffects(_ actual: [CallEffect], _ expected: [CallEffect], file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertEqual(actual.count, expected.count, "effect count: got \(actual)", file: file, line: line)
    for (index, pair) in zip(actual, expected).enumerated() where pair.0 != pair.1 {
        XCTFail("effect \(index): got \(pair.0), expected \(pair.1)", file: file, line: line)
    }
}
