import CallCore

/// The business ack frames of docs/protocol.md §4.
enum ResultJSON {
    static func accepted(_ command: ClientCommand, callID: String, revision: Int64, call: ResultCall?,
                         noop: Bool, serverTime: Int64) -> String {
        var snapshots = SnapshotJSONMemo()
        return String(decoding: acceptedBytes(command, callID: callID, revision: revision, call: call, noop: noop,
                                              serverTime: serverTime, snapshots: &snapshots), as: UTF8.self)
    }

    /// An accepted result: the new revision and the call's phase (``ResultCall``; the whole
    /// snapshot for `call.get` and for rows stored before 2026-12-02).
    static func acceptedBytes(_ command: ClientCommand, callID: String, revision: Int64, call: ResultCall?,
                              noop: Bool, serverTime: Int64, snapshots: inout SnapshotJSONMemo) -> [UInt8] {
        var w = header(command, callID: callID, status: "accepted", serverTime: serverTime)
        w.field("revision", revision)
        if noop { w.field("noop", true) }
        w.resultCall(call, snapshots: &snapshots)
        return w.finishBytes()
    }

    static func rejected(_ command: ClientCommand, code: String, message: String, snapshot: CallSnapshot?,
                         serverTime: Int64) -> String {
        var snapshots = SnapshotJSONMemo()
        return rejected(command, code: code, message: message, snapshot: snapshot, serverTime: serverTime,
                        snapshots: &snapshots)
    }

    static func rejected(_ command: ClientCommand, code: String, message: String, snapshot: CallSnapshot?,
                         serverTime: Int64, snapshots: inout SnapshotJSONMemo) -> String {
        String(decoding: rejectedBytes(command, code: code, message: message, call: snapshot.map(ResultCall.snapshot),
                                       serverTime: serverTime, snapshots: &snapshots), as: UTF8.self)
    }

    /// The UTF-8 bytes of ``rejected(_:code:message:snapshot:serverTime:snapshots:)``; `call`
    /// is the call's snapshot when the device may see the call.
    static func rejectedBytes(_ command: ClientCommand, code: String, message: String, call: ResultCall?,
                              serverTime: Int64, snapshots: inout SnapshotJSONMemo) -> [UInt8] {
        var w = header(command, callID: command.callID, status: "rejected", serverTime: serverTime)
        w.field("code", code)
        w.field("message", message)
        w.resultCall(call, snapshots: &snapshots)
        return w.finishBytes()
    }

    static func duplicate(_ command: ClientCommand, first: String, serverTime: Int64) -> String {
        var w = header(command, callID: command.callID, status: "duplicate", serverTime: serverTime)
        w.raw("first", first)
        return w.finish()
    }

    private static func header(_ command: ClientCommand, callID: String?, status: String, serverTime: Int64) -> JSONWriter {
        header(eventID: command.eventID, kind: command.kind, scope: ("callID", callID), status: status, serverTime: serverTime)
    }

    /// The fields every `result` frame starts with; `scope` names the call or room.
    static func header(eventID: String, kind: CommandKind, scope: (key: StaticString, value: String?), status: String,
                       serverTime: Int64) -> JSONWriter {
        var w = JSONWriter()
        w.field("v", 1)
        w.field("type", "result")
        w.field("eventID", eventID)
        w.field("command", kind.wireType)
        w.field(scope.key, scope.value)
        w.field("status", status)
        w.field("serverTime", serverTime)
        return w
    }
}
