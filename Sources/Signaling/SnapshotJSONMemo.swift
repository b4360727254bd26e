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
    // Two fields, not an optional tuple: `if let last` copied the whole snapshot (a retain
    // and release of each of its strings and arrays) on every lookup.
    private var lastSnapshot: CallSnapshot?
    private var lastJSON = ""

    public init() {}

    public mutating func render(_ snapshot: CallSnapshot) -> String {
        if lastSnapshot == snapshot { return lastJSON }
        let json = SnapshotJSON.render(snapshot)
        lastSnapshot = snapshot
        lastJSON = json
        return json
    }
}
