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
    private var last: (snapshot: CallSnapshot, json: String)?

    public init() {}

    public mutating func render(_ snapshot: CallSnapshot) -> String {
        if let last, last.snapshot == snapshot { return last.json }
        let json = SnapshotJSON.render(snapshot)
        last = (snapshot, json)
        return json
    }
}
