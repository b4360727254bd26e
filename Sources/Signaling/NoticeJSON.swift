import CallCore
import Foundation

/// Turns a reducer ``CallNotice`` into the durable event payload stored in a device's outbox
/// (docs/protocol.md §5). The payload starts with `{"v":1,` so that the stream position can
/// be spliced in when it is sent (``OutboxFrame``).
public enum NoticeJSON {
    public static let incomingType = "call.incoming"

    public static func render(_ notice: CallNotice, callID: String, serverTime: Int64) -> String {
        var snapshots = SnapshotJSONMemo()
        return render(notice, callID: callID, serverTime: serverTime, snapshots: &snapshots)
    }

    /// ``render(_:callID:serverTime:)`` with the snapshot text taken from (and left in)
    /// `snapshots`, so that a step's notices and result render their common snapshot once.
    public static func render(_ notice: CallNotice, callID: String, serverTime: Int64,
                              snapshots: inout SnapshotJSONMemo) -> String {
        var sdps = QuotedSDPMemo()
        return String(decoding: render(notice, callID: callID, serverTime: serverTime, snapshots: &snapshots, sdps: &sdps),
                      as: UTF8.self)
    }

    /// The UTF-8 bytes of ``render(_:callID:serverTime:snapshots:)`` (the outbox stores
    /// bytes: no `String` in between), with the SDP literals taken from (and left in)
    /// `sdps`, so that a body the hub already escaped (or got in the writer's form) is not
    /// escaped again.
    static func render(_ notice: CallNotice, callID: String, serverTime: Int64,
                       snapshots: inout SnapshotJSONMemo, sdps: inout QuotedSDPMemo) -> [UInt8] {
        var w = JSONWriter()
        w.field("v", 1)
        func header(_ type: String, _ snapshot: CallSnapshot?, to w: inout JSONWriter) {
            w.field("type", type)
            w.field("callID", callID)
            if let snapshot { w.field("revision", snapshot.revision) }
            w.field("serverTime", serverTime)
        }
        switch notice {
        case .incomingCall(let snapshot, let offer):
            header(incomingType, snapshot, to: &w)
            w.raw("snapshot", snapshots.render(snapshot))
            w.field("sdp", quoted: offer.map { sdps.quoted($0.sdp) })
        case .inProgressElsewhere(let snapshot):
            header("call.inProgressElsewhere", snapshot, to: &w)
            w.raw("snapshot", snapshots.render(snapshot))
        case .ringingOnCallee(let snapshot):
            header("call.ringing", snapshot, to: &w)
            w.raw("snapshot", snapshots.render(snapshot))
        case .answered(let snapshot, let by, let sdp):
            header("call.answered", snapshot, to: &w)
            w.object("by") { SnapshotJSON.device(by, to: &$0) }
            w.field("sdp", quoted: sdp.map { sdps.quoted($0.sdp) })
            w.raw("snapshot", snapshots.render(snapshot))
        case .stopped(let reason, let snapshot):
            header("call.stopRinging", snapshot, to: &w)
            w.field("reason", reason.rawValue)
            w.raw("snapshot", snapshots.render(snapshot))
        case .ended(let reason, let snapshot):
            header("call.ended", snapshot, to: &w)
            w.field("reason", reason.rawValue)
            w.raw("snapshot", snapshots.render(snapshot))
        case .stateChanged(let snapshot):
            header("call.state", snapshot, to: &w)
            w.field("phase", snapshot.phase.rawValue)
            w.raw("snapshot", snapshots.render(snapshot))
        case .sdpOffer(let from, let generation, let sdp):
            header("sdp.offer", nil, to: &w)
            w.field("generation", generation)
            w.object("from") { SnapshotJSON.device(from, to: &$0) }
            w.field("sdp", quoted: sdps.quoted(sdp.sdp))
        case .sdpAnswer(let from, let generation, let sdp):
            header("sdp.answer", nil, to: &w)
            w.field("generation", generation)
            w.object("from") { SnapshotJSON.device(from, to: &$0) }
            w.field("sdp", quoted: sdps.quoted(sdp.sdp))
        case .iceCandidates(let from, let generation, let candidates):
            header("ice.candidate", nil, to: &w)
            w.field("generation", generation)
            w.object("from") { SnapshotJSON.device(from, to: &$0) }
            w.objects("candidates", candidates) { candidate($1, to: &$0) }
        }
        return w.finishBytes()
    }

    /// A backlog `call.incoming` that must not ring any more, delivered as ended
    /// (docs/protocol.md §3 replay rule).
    public static func missed(_ snapshot: CallSnapshot, for device: DeviceKey, serverTime: Int64) -> String {
        var w = JSONWriter()
        w.field("v", 1)
        w.field("type", "call.ended")
        w.field("callID", snapshot.callID)
        w.field("revision", snapshot.revision)
        w.field("serverTime", serverTime)
        var reason = snapshot.endReason?.rawValue ?? CallEndReason.expired.rawValue
        if case .stopped(let stop) = snapshot.participation(of: device) { reason = stop.rawValue }
        w.field("reason", reason)
        w.field("missed", true)
        w.raw("snapshot", SnapshotJSON.render(snapshot))
        return w.finish()
    }

    static func candidate(_ c: IceCandidate) -> String {
        var w = JSONWriter()
        candidate(c, to: &w)
        return w.finish()
    }

    /// The fields of ``candidate(_:)`` into an object being written.
    static func candidate(_ c: IceCandidate, to w: inout JSONWriter) {
        w.field("candidate", c.candidate)
        w.field("sdpMid", c.sdpMid)
        w.field("sdpMLineIndex", c.sdpMLineIndex)
        w.field("ufrag", c.usernameFragment)
    }

    /// The push-hook body for a device that had no live connection (docs/protocol.md §8).
    public static func push(_ notice: PushNotice, callee: DeviceKey) -> (callID: String, body: String) {
        var w = JSONWriter()
        switch notice {
        case .incomingCall(let callID, let caller, let expiresAt):
            w.field("type", "call.incoming")
            w.field("callID", callID)
            w.field("caller", caller.account)
            w.field("callee", callee.account)
            w.field("device", callee.device)
            w.field("expiresAt", expiresAt)
            return (callID, w.finish())
        case .stopped(let callID, let reason):
            w.field("type", "call.ended")
            w.field("callID", callID)
            w.field("callee", callee.account)
            w.field("device", callee.device)
            w.field("reason", reason.rawValue)
            return (callID, w.finish())
        }
    }
}

/// Splices per-send fields into a stored payload that starts with `{"v":1,`.
///
/// The prefix tests compare bytes (`starts(with:)`) where `String.hasPrefix` compares
/// characters; they differ only if the byte after the prefix is a combining mark, and in every
/// payload the writers produce the prefix is followed by `"` (a key).
enum OutboxFrame {
    static let prefix = "{\"v\":1,"
    static let prefixBytes: [UInt8] = Array(prefix.utf8)
    private static let incomingBytes: [UInt8] = Array((prefix + "\"type\":\"" + NoticeJSON.incomingType + "\"").utf8)
    private static let seqKeyBytes: [UInt8] = Array("\"seq\":\"".utf8)

    static func frame(payload: String, seq: Int64, extra: String? = nil) -> String {
        guard payload.hasPrefix(prefix) else { return payload }
        var out = prefix + "\"seq\":\"\(seq)\","
        if let extra { out += extra + "," }
        out += payload.dropFirst(prefix.count)
        return out
    }

    /// ``frame(payload:seq:extra:)`` of the stored bytes, i.e. of
    /// `String(decoding: payload, as: UTF8.self)`, made with one copy of the payload (not
    /// three: decode, splice, append) into the frame's own storage.
    static func frame(payload: Data, seq: Int64, extra: String? = nil) -> String {
        String(decoding: frameBytes(payload: payload, seq: seq, extra: extra), as: UTF8.self)
    }

    /// The UTF-8 bytes of ``frame(payload:seq:extra:)-(Data,_,_)``, made with one copy of the
    /// payload and no `String` (whose UTF-8 validation of a 3 KB `call.incoming` was the
    /// biggest cost of a delivered event): the frame goes to the socket as bytes. The
    /// stored payloads are the writers' bytes, valid UTF-8.
    static func frameBytes(payload: Data, seq: Int64, extra: String? = nil) -> [UInt8] {
        guard hasPrefix(payload, prefixBytes) else { return [UInt8](payload) }
        var head = prefixBytes
        head.reserveCapacity(prefixBytes.count + seqKeyBytes.count + 22 + (extra.map { $0.utf8.count + 1 } ?? 0))
        head.append(contentsOf: seqKeyBytes)
        JSONWriter.appendDecimal(seq, to: &head)
        head.append(UInt8(ascii: "\""))
        head.append(UInt8(ascii: ","))
        if let extra {
            head.append(contentsOf: extra.utf8)
            head.append(UInt8(ascii: ","))
        }
        let tail = payload.index(payload.startIndex, offsetBy: prefixBytes.count) ..< payload.endIndex
        let count = head.count + tail.count
        return [UInt8](unsafeUninitializedCapacity: count) { out, initialized in
            // `out` holds `count` = head.count + tail.count bytes: the head goes to
            // [0, head.count), the tail (memcpy) to [head.count, count).
            let afterHead = out.initialize(from: head).1
            payload[tail].withUnsafeBytes { bytes in
                UnsafeMutableRawBufferPointer(UnsafeMutableBufferPointer(rebasing: out[afterHead...])).copyMemory(from: bytes)
            }
            initialized = afterHead + tail.count
        }
    }

    static func isIncoming(_ payload: String) -> Bool {
        payload.hasPrefix(prefix + "\"type\":\"" + NoticeJSON.incomingType + "\"")
    }

    static func isIncoming(_ payload: Data) -> Bool {
        hasPrefix(payload, incomingBytes)
    }

    /// `payload.starts(with: prefix)` over the contiguous bytes: `Data`'s generic iteration
    /// took ~2,000 instructions for a 30-byte prefix (callgrind).
    private static func hasPrefix(_ payload: Data, _ prefix: [UInt8]) -> Bool {
        guard payload.count >= prefix.count else { return false }
        return payload.withUnsafeBytes { bytes in bytes.prefix(prefix.count).elementsEqual(prefix) }
    }
}
