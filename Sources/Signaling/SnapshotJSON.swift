import CallCore

/// Renders a ``CallSnapshot`` in the flat wire shape of docs/protocol.md §5 (participation as
/// a string plus an optional reason; absent values omitted).
public enum SnapshotJSON {
    public static func render(_ s: CallSnapshot) -> String {
        var w = JSONWriter()
        w.field("callID", s.callID)
        w.field("revision", s.revision)
        w.field("phase", s.phase.rawValue)
        w.raw("caller", device(s.caller))
        w.field("callee", s.callee)
        w.raw("answeredBy", s.answeredBy.map(device))
        w.field("endReason", s.endReason?.rawValue)
        w.raw("endedBy", s.endedBy.map(device))
        w.field("createdAt", s.createdAt)
        w.field("endedAt", s.endedAt)
        w.field("generation", s.generation)
        w.field("media", s.media.rawValue)
        var deadlines = JSONWriter()
        for (kind, at) in s.deadlines.pending { deadlines.field(kind.rawValue, at) }
        w.raw("deadlines", deadlines.finish())
        w.raw("devices", "[" + s.devices.map(entry).joined(separator: ",") + "]")
        return w.finish()
    }

    public static func device(_ key: DeviceKey) -> String {
        var w = JSONWriter()
        w.field("account", key.account)
        w.field("device", key.device)
        return w.finish()
    }

    static func entry(_ e: DeviceEntry) -> String {
        var w = JSONWriter()
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
        return w.finish()
    }
}
