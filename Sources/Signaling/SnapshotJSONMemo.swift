import CallCore

/// Renders call snapshots (``SnapshotJSON/render(_:)``), reusing the text of the last one
/// when the next is equal.
///
/// One reducer step puts the same snapshot (the call's new state) in its result frame and
/// in most of its notices (`call.incoming`, `call.answered`, `call.stopRinging`,
/// `call.ended`, …), and each rendering escapes every field and device entry again:
/// ~5 % of the hub's CPU in the profile of docs/benchmarks.md "Hub CPU per setup". Comparing
/// two snapshots is far cheaper than rendering one. The rendering is a pure function of the
/// snapshot, so an equal snapshot gets byte-for-byte the same text either way.
public struct SnapshotJSONMemo {
    // Separate fields, not an optional tuple or an optional snapshot: `if let last` copied
    // the whole snapshot (a retain and release of each of its strings and arrays) on every
    // lookup, and `==` between `CallSnapshot?` values went through `Optional`'s generic copy
    // of both sides. `lastSnapshot` means something only once `hasLast` is set.
    private var hasLast = false
    private var lastSnapshot = CallSnapshot(callID: "", revision: 0, phase: .ringing, caller: DeviceKey(account: "", device: ""),
                                            callee: "", devices: [], answeredBy: nil, endReason: nil, endedBy: nil,
                                            createdAt: 0, endedAt: nil, deadlines: CallDeadlines(), generation: 0)
    private var lastJSON = ""

    public init() {}

    public mutating func render(_ snapshot: CallSnapshot) -> String {
        if hasLast, lastSnapshot == snapshot { return lastJSON }
        let json = SnapshotJSON.render(snapshot)
        hasLast = true
        lastSnapshot = snapshot
        lastJSON = json
        return json
    }
}
