import CallCore

/// What a `result` frame says about the call besides its revision (docs/protocol.md §4).
///
/// An accepted command gets the call's phase after the step (and the end reason once it has
/// ended): the acting device learns where its command left the call without a second
/// request, and everything else reaches every device as durable events. A rejection and
/// `call.get` carry the whole snapshot, which is what the device needs to recover (a lost
/// answer race, a glare, a late command).
///
/// Accepted results carried the whole snapshot until 2026-12-02: ~600 of a result's ~750
/// bytes, rendered by the hub, stored in `processed_events`, UTF-8-checked by libsoup and
/// parsed by the client for each of the 12 commands of a call setup (docs/benchmarks.md,
/// "Accepted results without the snapshot"). Rows stored with a snapshot still render
/// with it, so a retry gets its first result byte for byte.
enum ResultCall: Equatable {
    case phase(CallPhase, endReason: CallEndReason?)
    case snapshot(CallSnapshot)

    /// The brief form for the call's state after an accepted step.
    static func phase(of state: CallState) -> ResultCall {
        .phase(state.phase, endReason: state.endReason)
    }
}

extension JSONWriter {
    /// Writes `call` as the result's `phase` (+ `endReason`) or `snapshot` fields.
    mutating func resultCall(_ call: ResultCall?, snapshots: inout SnapshotJSONMemo) {
        switch call {
        case .phase(let phase, let endReason)?:
            field("phase", phase.rawValue)
            field("endReason", endReason?.rawValue)
        case .snapshot(let snapshot)?:
            raw("snapshot", snapshots.render(snapshot))
        case nil:
            break
        }
    }
}
