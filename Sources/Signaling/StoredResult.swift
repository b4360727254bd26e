import CallCore
import Storage
import Foundation

/// The first result of a command as kept in `processed_events.result`, so that a retry gets
/// it again (docs/protocol.md §4, `duplicate` → `first`).
///
/// Stored compactly (``encode()``), not as the JSON that was sent: a rejection's JSON is
/// ~750 bytes (mostly the snapshot's field names and repeated account names), its compact
/// form ~100–150; an accepted result (phase, no snapshot, ``ResultCall``) ~200 and ~50.
/// The processed-event insert is one of the biggest SQLite costs per command (profile in
/// docs/benchmarks.md), and a smaller row means 5–6× more rows per 4 KB leaf, i.e. fewer
/// page splits and fewer dirty pages written to the WAL per commit. ``render(_:)`` rebuilds
/// the very bytes ``ResultJSON`` produced the first time: everything in the frame is either
/// stored here or part of the command, which a retry repeats (same eventID and payload hash).
///
/// Rows written by older builds hold the JSON itself; it starts with `{`, never with
/// ``formatTag``, so ``firstResultJSON(stored:command:)`` tells them apart.
struct StoredResult: Equatable {
    enum Status: Equatable {
        case accepted(revision: Int64, noop: Bool)
        case rejected(code: String, message: String)
    }

    /// The `callID` of an accepted result (a generated one for an invite without callID).
    /// A rejected result names `command.callID`, as ``ResultJSON/rejected`` does.
    var callID: String?
    var status: Status
    /// The call's phase (accepted) or snapshot (rejected, and accepted rows stored before
    /// 2026-12-02), as the result frame carries it (``ResultCall``).
    var call: ResultCall?
    var serverTime: Int64

    /// First byte of the compact form; JSON starts with `{` (0x7B).
    static let formatTag: UInt8 = 0x01

    /// The JSON text of the result, byte for byte as ``ResultJSON`` rendered it first.
    func render(_ command: ClientCommand) -> String {
        var snapshots = SnapshotJSONMemo()
        return render(command, snapshots: &snapshots)
    }

    /// ``render(_:)`` with the snapshot text taken from (and left in) `snapshots`.
    func render(_ command: ClientCommand, snapshots: inout SnapshotJSONMemo) -> String {
        String(decoding: renderBytes(command, snapshots: &snapshots), as: UTF8.self)
    }

    /// The UTF-8 bytes of ``render(_:snapshots:)``, for sending.
    func renderBytes(_ command: ClientCommand, snapshots: inout SnapshotJSONMemo) -> [UInt8] {
        switch status {
        case .accepted(let revision, let noop):
            return ResultJSON.acceptedBytes(command, callID: callID ?? "", revision: revision, call: call,
                                            noop: noop, serverTime: serverTime, snapshots: &snapshots)
        case .rejected(let code, let message):
            return ResultJSON.rejectedBytes(command, code: code, message: message, call: call,
                                            serverTime: serverTime, snapshots: &snapshots)
        }
    }

    func encode() -> Data {
        var w = CompactWriter()
        w.byte(Self.formatTag)
        w.optionalString(callID)
        switch status {
        case .accepted(let revision, let noop):
            w.byte(noop ? 1 : 0)
            w.int(revision)
        case .rejected(let code, let message):
            w.byte(2)
            w.string(code)
            w.string(message)
        }
        w.int(serverTime)
        // 0 nothing, 1 a snapshot, 2 a phase and optional end reason (as raw strings).
        switch call {
        case nil:
            w.byte(0)
        case .snapshot(let snapshot)?:
            w.byte(1)
            snapshot.encode(to: &w)
        case .phase(let phase, let endReason)?:
            w.byte(2)
            w.string(phase.rawValue)
            w.optionalString(endReason?.rawValue)
        }
        return w.record()
    }

    static func decode(_ data: Data) throws -> StoredResult {
        var r = CompactReader(data)
        guard try r.byte() == formatTag else { throw CompactReader.Malformed() }
        let callID = try r.optionalString()
        let status: Status
        switch try r.byte() {
        case 0: status = .accepted(revision: try r.int(), noop: false)
        case 1: status = .accepted(revision: try r.int(), noop: true)
        case 2: status = .rejected(code: try r.string(), message: try r.string())
        default: throw CompactReader.Malformed()
        }
        let serverTime = try r.int()
        let call: ResultCall?
        switch try r.byte() {
        case 0: call = nil
        case 1: call = .snapshot(try CallSnapshot.decode(from: &r))
        case 2:
            let phase = try r.raw(CallPhase.self)
            let endReason = try r.optionalRaw(CallEndReason.self)
            call = .phase(phase, endReason: endReason)
        default: throw CompactReader.Malformed()
        }
        guard r.isAtEnd else { throw CompactReader.Malformed() }
        return StoredResult(callID: callID, status: status, call: call, serverTime: serverTime)
    }

    /// The `first` of a duplicate reply from a stored result: a compact one re-rendered for
    /// the retried command, an older build's JSON as stored. Nil if the bytes are unreadable.
    static func firstResultJSON(stored: Data, command: ClientCommand) -> String? {
        guard let tag = stored.first else { return nil }
        if tag != formatTag { return String(decoding: stored, as: UTF8.self) }
        return (try? decode(stored))?.render(command)
    }
}
