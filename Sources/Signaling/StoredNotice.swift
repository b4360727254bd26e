import CallCore
import Foundation
import Storage

/// A call event as kept in a device's outbox: the reducer's ``CallNotice`` with its call ID
/// and server time, stored compactly and rendered to the JSON of docs/protocol.md §5 only
/// when it is sent (``NoticeJSON``, on the shard thread that writes it for a live device).
///
/// Why not the JSON itself: rendering every notice on the hub's thread, the one every frame
/// waits for, was ~11 % of its instructions per command, and a snapshot's JSON (~700 bytes,
/// mostly field names and repeated account names) is ~150 bytes here, so the outbox log
/// rows and the WAL pages they dirty shrink too (docs/benchmarks.md, "Events stored
/// compactly"). Rendering is a pure function of these values, so a replayed event has the
/// bytes it would have had live.
///
///     byte 0     formatTag (0x01; a JSON payload starts with `{`, 0x7B)
///     byte 1     kind (``Kind``)
///     …          callID (string), serverTime (int), then the kind's fields
///
/// Payloads that are not in this form (events stored by older builds, room ringing from
/// ``SignalingHub/deliverDurable(_:scope:time:)``) stay JSON and are sent as stored.
struct StoredNotice: Equatable {
    var callID: String
    var serverTime: Int64
    var notice: CallNotice

    /// First byte of the compact form; JSON starts with `{` (0x7B).
    static let formatTag: UInt8 = 0x01

    enum Kind: UInt8 {
        case incomingCall = 0, inProgressElsewhere, ringingOnCallee, answered, stopped, ended, stateChanged
        case sdpOffer, sdpAnswer, iceCandidates
    }

    var kind: Kind {
        switch notice {
        case .incomingCall: return .incomingCall
        case .inProgressElsewhere: return .inProgressElsewhere
        case .ringingOnCallee: return .ringingOnCallee
        case .answered: return .answered
        case .stopped: return .stopped
        case .ended: return .ended
        case .stateChanged: return .stateChanged
        case .sdpOffer: return .sdpOffer
        case .sdpAnswer: return .sdpAnswer
        case .iceCandidates: return .iceCandidates
        }
    }

    /// The JSON payload (``NoticeJSON``), as the outbox stored it before this form.
    func renderJSON() -> [UInt8] {
        var snapshots = SnapshotJSONMemo()
        var sdps = QuotedSDPMemo()
        return NoticeJSON.render(notice, callID: callID, serverTime: serverTime, snapshots: &snapshots, sdps: &sdps)
    }

    func encode() -> Data {
        var w = CompactWriter(capacity: 256)
        w.byte(Self.formatTag)
        w.byte(kind.rawValue)
        w.string(callID)
        w.int(serverTime)
        switch notice {
        case .incomingCall(let snapshot, let offer):
            snapshot.encode(to: &w)
            w.optionalString(offer?.sdp)
        case .inProgressElsewhere(let snapshot), .ringingOnCallee(let snapshot), .stateChanged(let snapshot):
            snapshot.encode(to: &w)
        case .answered(let snapshot, let by, let sdp):
            snapshot.encode(to: &w)
            Self.encode(by, to: &w)
            w.optionalString(sdp?.sdp)
        case .stopped(let reason, let snapshot):
            w.string(reason.rawValue)
            snapshot.encode(to: &w)
        case .ended(let reason, let snapshot):
            w.string(reason.rawValue)
            snapshot.encode(to: &w)
        case .sdpOffer(let from, let generation, let sdp), .sdpAnswer(let from, let generation, let sdp):
            Self.encode(from, to: &w)
            w.int(generation)
            w.string(sdp.sdp)
        case .iceCandidates(let from, let generation, let candidates):
            Self.encode(from, to: &w)
            w.int(generation)
            w.varint(UInt64(candidates.count))
            for candidate in candidates {
                w.string(candidate.candidate)
                w.optionalString(candidate.sdpMid)
                w.optionalInt(candidate.sdpMLineIndex.map(Int64.init))
                w.optionalString(candidate.usernameFragment)
            }
        }
        return Data(w.bytes)
    }

    /// Whether `payload` is in this form (else it is JSON).
    static func isCompact(_ payload: Data) -> Bool {
        payload.first == formatTag
    }

    /// The kind of a compact payload, read from its second byte; nil for JSON or an
    /// unknown kind.
    static func kind(of payload: Data) -> Kind? {
        guard isCompact(payload), payload.count >= 2 else { return nil }
        return Kind(rawValue: payload[payload.index(after: payload.startIndex)])
    }

    /// The call ID of a compact payload, without decoding the rest.
    static func callID(of payload: Data) -> String? {
        guard kind(of: payload) != nil else { return nil }
        var r = CompactReader(payload, from: 2)
        return try? r.string()
    }

    static func decode(_ payload: Data) throws -> StoredNotice {
        var r = CompactReader(payload)
        guard try r.byte() == formatTag, let kind = Kind(rawValue: try r.byte()) else { throw CompactReader.Malformed() }
        let callID = try r.string()
        let serverTime = try r.int()
        let notice: CallNotice
        switch kind {
        case .incomingCall:
            notice = .incomingCall(try CallSnapshot.decode(from: &r), offer: try r.optionalString().map(SessionDescription.init(sdp:)))
        case .inProgressElsewhere:
            notice = .inProgressElsewhere(try CallSnapshot.decode(from: &r))
        case .ringingOnCallee:
            notice = .ringingOnCallee(try CallSnapshot.decode(from: &r))
        case .stateChanged:
            notice = .stateChanged(try CallSnapshot.decode(from: &r))
        case .answered:
            let snapshot = try CallSnapshot.decode(from: &r)
            let by = try decodeDevice(from: &r)
            notice = .answered(snapshot, by: by, sdp: try r.optionalString().map(SessionDescription.init(sdp:)))
        case .stopped:
            let reason = try r.raw(StopReason.self)
            notice = .stopped(reason, try CallSnapshot.decode(from: &r))
        case .ended:
            let reason = try r.raw(CallEndReason.self)
            notice = .ended(reason, try CallSnapshot.decode(from: &r))
        case .sdpOffer, .sdpAnswer:
            let from = try decodeDevice(from: &r)
            let generation = try r.int()
            let sdp = SessionDescription(sdp: try r.string())
            notice = kind == .sdpOffer ? .sdpOffer(from: from, generation: generation, sdp: sdp)
                : .sdpAnswer(from: from, generation: generation, sdp: sdp)
        case .iceCandidates:
            let from = try decodeDevice(from: &r)
            let generation = try r.int()
            let count = try r.varint()
            // The candidate buffer is bounded per call and device (hundreds at most);
            // anything huge is a corrupt row.
            guard count <= 1 << 16 else { throw CompactReader.Malformed() }
            var candidates: [IceCandidate] = []
            for _ in 0 ..< count {
                let candidate = try r.string()
                let mid = try r.optionalString()
                let index = try r.optionalInt()
                let ufrag = try r.optionalString()
                candidates.append(IceCandidate(candidate: candidate, sdpMid: mid, sdpMLineIndex: index.map { Int($0) },
                                               usernameFragment: ufrag))
            }
            notice = .iceCandidates(from: from, generation: generation, candidates: candidates)
        }
        guard r.isAtEnd else { throw CompactReader.Malformed() }
        return StoredNotice(callID: callID, serverTime: serverTime, notice: notice)
    }

    private static func encode(_ device: DeviceKey, to w: inout CompactWriter) {
        w.string(device.account)
        w.string(device.device)
    }

    private static func decodeDevice(from r: inout CompactReader) throws -> DeviceKey {
        DeviceKey(account: try r.string(), device: try r.string())
    }
}
