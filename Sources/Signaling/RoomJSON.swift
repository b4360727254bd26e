/// Frames of the rooms / SFU negotiation protocol (docs/protocol.md §9), for the media
/// coordinator that answers room commands asynchronously.
public enum RoomJSON {
    public static func accepted(_ request: MediaRequest, room: String, serverTime: Int64,
                                fields: (inout JSONWriter) -> Void = { _ in }) -> String {
        var w = header(request, room: room, status: "accepted", serverTime: serverTime)
        fields(&w)
        return w.finish()
    }

    public static func rejected(_ request: MediaRequest, room: String, code: String, message: String, serverTime: Int64) -> String {
        var w = header(request, room: room, status: "rejected", serverTime: serverTime)
        w.field("code", code)
        w.field("message", message)
        return w.finish()
    }

    /// A transient room event (no `seq`: it describes the live session).
    public static func event(_ type: String, room: String, serverTime: Int64, fields: (inout JSONWriter) -> Void) -> String {
        var w = JSONWriter()
        w.field("v", 1)
        w.field("type", type)
        w.field("room", room)
        w.field("serverTime", serverTime)
        fields(&w)
        return w.finish()
    }

    private static func header(_ request: MediaRequest, room: String, status: String, serverTime: Int64) -> JSONWriter {
        ResultJSON.header(eventID: request.eventID, kind: request.kind, scope: ("room", room), status: status, serverTime: serverTime)
    }
}
