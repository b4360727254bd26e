import CallCore
import Foundation
import Storage

/// The binary form of a ``CallState`` in the `calls` table (``CallStateCodec``), written on
/// every accepted step.
///
/// Why not the JSON of ``CallStateJSON``: writing it was ~6 % of the hub's instructions per
/// command (callgrind, docs/benchmarks.md "Call state stored compactly"), and, mostly key
/// names and repeated account names, it was 4–5× this form (725–960 against 151–233 bytes
/// along a setup, `CallStateCompactTests`). Reading it back is a loop over the bytes
/// instead of `JSONDecoder`. Rows written as JSON (older builds) are still read: JSON starts
/// with `{`, this form with ``formatTag``.
///
///     byte 0    formatTag (0x01)
///     …         callID, revision, phaseRevision, phase, caller, callee,
///               participation (count, then device + participation, sorted by device),
///               pushedDevices (count, sorted), answeredBy?, endReason?, endedBy?,
///               createdAt, endedAt?, deadlines (4 optional ints), negotiation, media
///
/// Enums as their raw strings or a fixed byte code (a renamed case makes old rows
/// unreadable rather than silently different); entries sorted, so equal states encode to
/// equal bytes.
enum CallStateCompact {
    static let formatTag: UInt8 = 0x01

    /// `omittingSDP`: every description's `sdp` as "" (the store keeps the bodies apart,
    /// ``CallDescriptions``).
    static func encode(_ state: CallState, omittingSDP: Bool) -> Data {
        var w = CompactWriter(capacity: 384)
        w.byte(formatTag)
        w.string(state.callID)
        w.int(state.revision)
        w.int(state.phaseRevision)
        w.string(state.phase.rawValue)
        device(state.caller, to: &w)
        w.string(state.callee)
        w.varint(UInt64(state.participation.count))
        for (key, participation) in state.participation.sorted(by: { $0.key < $1.key }) {
            device(key, to: &w)
            participation.encode(to: &w)
        }
        w.varint(UInt64(state.pushedDevices.count))
        for key in state.pushedDevices.sorted() { device(key, to: &w) }
        optionalDevice(state.answeredBy, to: &w)
        w.optionalString(state.endReason?.rawValue)
        optionalDevice(state.endedBy, to: &w)
        w.int(state.createdAt)
        w.optionalInt(state.endedAt)
        w.optionalInt(state.deadlines.ring)
        w.optionalInt(state.deadlines.inviteExpiry)
        w.optionalInt(state.deadlines.connect)
        w.optionalInt(state.deadlines.reconnect)
        let n = state.negotiation
        w.int(n.generation)
        described(n.pendingOffer, omittingSDP: omittingSDP, to: &w)
        described(n.lastAnswer, omittingSDP: omittingSDP, to: &w)
        w.optionalString(n.callerUfrag)
        w.optionalString(n.calleeUfrag)
        w.string(n.politeSide.rawValue)
        w.varint(UInt64(n.buffered.count))
        for (key, buffer) in n.buffered.sorted(by: { $0.key < $1.key }) {
            device(key, to: &w)
            w.int(buffer.generation)
            w.varint(UInt64(buffer.candidates.count))
            for candidate in buffer.candidates {
                w.string(candidate.candidate)
                w.optionalString(candidate.sdpMid)
                w.optionalInt(candidate.sdpMLineIndex.map(Int64.init))
                w.optionalString(candidate.usernameFragment)
            }
        }
        w.string(state.media.rawValue)
        return w.record()
    }

    static func isCompact(_ data: Data) -> Bool {
        data.first == formatTag
    }

    static func decode(_ data: Data) throws -> CallState {
        var r = CompactReader(data)
        guard try r.byte() == formatTag else { throw CompactReader.Malformed() }
        let callID = try r.string()
        let revision = try r.int()
        let phaseRevision = try r.int()
        let phase = try r.raw(CallPhase.self)
        let caller = try device(from: &r)
        let callee = try r.string()
        var participation: [DeviceKey: DeviceParticipation] = [:]
        for _ in 0 ..< (try count(from: &r)) {
            let key = try device(from: &r)
            participation[key] = try DeviceParticipation.decode(from: &r)
        }
        var pushed: Set<DeviceKey> = []
        for _ in 0 ..< (try count(from: &r)) { pushed.insert(try device(from: &r)) }
        let answeredBy = try optionalDevice(from: &r)
        let endReason = try r.optionalRaw(CallEndReason.self)
        let endedBy = try optionalDevice(from: &r)
        let createdAt = try r.int()
        let endedAt = try r.optionalInt()
        let deadlines = CallDeadlines(ring: try r.optionalInt(), inviteExpiry: try r.optionalInt(),
                                      connect: try r.optionalInt(), reconnect: try r.optionalInt())
        let generation = try r.int()
        let pendingOffer = try described(from: &r)
        let lastAnswer = try described(from: &r)
        let callerUfrag = try r.optionalString()
        let calleeUfrag = try r.optionalString()
        let politeSide = try r.raw(CallSide.self)
        var buffered: [DeviceKey: CandidateBuffer] = [:]
        for _ in 0 ..< (try count(from: &r)) {
            let key = try device(from: &r)
            let bufferGeneration = try r.int()
            var candidates: [IceCandidate] = []
            for _ in 0 ..< (try count(from: &r)) {
                let candidate = try r.string()
                let mid = try r.optionalString()
                let index = try r.optionalInt()
                let ufrag = try r.optionalString()
                guard index.map({ Int(exactly: $0) != nil }) ?? true else { throw CompactReader.Malformed() }
                candidates.append(IceCandidate(candidate: candidate, sdpMid: mid, sdpMLineIndex: index.map { Int($0) },
                                               usernameFragment: ufrag))
            }
            buffered[key] = CandidateBuffer(generation: bufferGeneration, candidates: candidates)
        }
        let media = try r.raw(CallMedia.self)
        guard r.isAtEnd else { throw CompactReader.Malformed() }
        return CallState(
            callID: callID, revision: revision, phaseRevision: phaseRevision, phase: phase, caller: caller, callee: callee,
            participation: participation, pushedDevices: pushed, answeredBy: answeredBy, endReason: endReason,
            endedBy: endedBy, createdAt: createdAt, endedAt: endedAt, deadlines: deadlines,
            negotiation: Negotiation(generation: generation, pendingOffer: pendingOffer, lastAnswer: lastAnswer,
                                     callerUfrag: callerUfrag, calleeUfrag: calleeUfrag, politeSide: politeSide,
                                     buffered: buffered),
            media: media)
    }

    // MARK: Parts

    private static func device(_ key: DeviceKey, to w: inout CompactWriter) {
        w.string(key.account)
        w.string(key.device)
    }

    private static func optionalDevice(_ key: DeviceKey?, to w: inout CompactWriter) {
        guard let key else { return w.byte(0) }
        w.byte(1)
        device(key, to: &w)
    }

    private static func described(_ d: NegotiatedDescription?, omittingSDP: Bool, to w: inout CompactWriter) {
        guard let d else { return w.byte(0) }
        w.byte(1)
        w.string(d.side.rawValue)
        w.int(d.generation)
        w.string(omittingSDP ? "" : d.description.sdp)
    }

    private static func device(from r: inout CompactReader) throws -> DeviceKey {
        DeviceKey(account: try r.string(), device: try r.string())
    }

    private static func optionalDevice(from r: inout CompactReader) throws -> DeviceKey? {
        switch try r.byte() {
        case 0: return nil
        case 1: return try device(from: &r)
        default: throw CompactReader.Malformed()
        }
    }

    private static func described(from r: inout CompactReader) throws -> NegotiatedDescription? {
        switch try r.byte() {
        case 0: return nil
        case 1:
            return NegotiatedDescription(side: try r.raw(CallSide.self), generation: try r.int(),
                                         description: SessionDescription(sdp: try r.string()))
        default: throw CompactReader.Malformed()
        }
    }

    /// A list's length; a call has a handful of devices and a bounded candidate buffer,
    /// so anything past 2^16 is a corrupt row, not an allocation to attempt.
    private static func count(from r: inout CompactReader) throws -> Int {
        let n = try r.varint()
        guard n <= 1 << 16 else { throw CompactReader.Malformed() }
        return Int(n)
    }
}
