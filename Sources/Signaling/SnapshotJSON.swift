import CallCore

/// Renders a ``CallSnapshot`` in the flat wire shape of docs/protocol.md §5 (participation as
/// a string plus an optional reason; absent values omitted).
///
/// Nested objects (devices, deadlines, the device list) are written into the one writer in
/// place (``JSONWriter/object(_:_:)``), not rendered to strings of their own and spliced:
/// the same bytes with one buffer instead of ~15 per snapshot.
public enum SnapshotJSON {
    public static func render(_ s: CallSnapshot) -> String {
        var w = JSONWriter()
        w.field("callID", s.callID)
        w.field("revision", s.revision)
        w.field("phase", s.phase.rawValue)
        w.object("caller") { device(s.caller, to: &$0) }
        w.field("callee", s.callee)
        if let answeredBy = s.answeredBy { w.object("answeredBy") { device(answeredBy, to: &$0) } }
        w.field("endReason", s.endReason?.rawValue)
        if let endedBy = s.endedBy { w.object("endedBy") { device(endedBy, to: &$0) } }
        w.field("createdAt", s.createdAt)
        w.field("endedAt", s.endedAt)
        w.field("generation", s.generation)
        w.field("media", s.media.rawValue)
        // ``CallDeadlines/pending``'s order and keys (the kinds' raw values, which
        // `WireBytesTests.testSnapshotDeadlineKeysAreTheKindsRawValuesInPendingOrder` holds
        // these literals to), without its array.
        w.object("deadlines") { d in
            d.field("ring", s.deadlines.ring)
            d.field("inviteExpiry", s.deadlines.inviteExpiry)
            d.field("connect", s.deadlines.connect)
            d.field("reconnect", s.deadlines.reconnect)
        }
        w.objects("devices", s.devices) { entry($1, to: &$0) }
        return w.finish()
    }

    public static func device(_ key: DeviceKey) -> String {
        var w = JSONWriter()
        device(key, to: &w)
        return w.finish()
    }

    /// The fields of ``device(_:)`` into an object being written.
    static func device(_ key: DeviceKey, to w: inout JSONWriter) {
        w.field("account", key.account)
        w.field("device", key.device)
    }

    static func entry(_ e: DeviceEntry) -> String {
        var w = JSONWriter()
        entry(e, to: &w)
        return w.finish()
    }

    /// The fields of ``entry(_:)`` into an object being written.
    static func entry(_ e: DeviceEntry, to w: inout JSONWriter) {
        w.field("account", e.device.account)
        w.field("device", e.device.device)
        switch e.participation {
        case .ringing: w.field("participation", "ringing")
        case .ringingAcknowledged: w.field("participation", "ringingAcknowledged")
        case .answered: w.field("participation", "answered")
        case .stopped(let reason):
            w.field("participation", "stopped")
            w.field("reason", reason.rawValue)
        case .callerDevice: w.field("participation", "caller")
        case .inProgressElsewhere: w.field("participation", "inProgressElsewhere")
        }
    }
}
