import CallCore
import Foundation

/// `CallState` written as the JSON its synthesized `Codable` conformance reads, without
/// `JSONEncoder`: the state is encoded on every accepted step and holds the SDP offer and
/// buffered candidates, and Foundation's reflection-based encoder was ~9–12 % of the hub's
/// CPU (docs/benchmarks.md, "Signaling"). Decoding stays `JSONDecoder` (only on a cache miss).
///
/// The shapes are Swift's synthesized ones (SE-0166, SE-0295): structs as objects keyed by
/// property name with nil optionals left out (`encodeIfPresent`); `String` raw-value enums
/// as their raw value; a dictionary whose key is not `String`/`Int` as a flat array
/// `[key, value, key, value, …]`; a `Set` as an array; an enum case without payload as
/// `{"case":{}}` and one with an unlabeled payload as `{"case":{"_0":…}}`. Dictionary and
/// set entries are written sorted, so equal states encode to equal bytes.
struct CallStateJSON {
    private var out: [UInt8] = []
    /// True right after `{`, `[` or a key: the next value or key needs no comma.
    private var fresh = true
    /// Write every description's `sdp` as "" (the store keeps the bodies apart,
    /// ``CallDescriptions``).
    private var omittingSDP = false

    static func encode(_ state: CallState, omittingSDP: Bool = false) -> Data {
        var w = CallStateJSON()
        w.omittingSDP = omittingSDP
        // 1024: a state without SDP bodies (participation of a few devices, some candidates).
        w.out.reserveCapacity(omittingSDP ? 1024 : 1024 + (state.negotiation.pendingOffer?.description.sdp.utf8.count ?? 0)
            + (state.negotiation.lastAnswer?.description.sdp.utf8.count ?? 0))
        w.callState(state)
        return Data(w.out)
    }

    private mutating func callState(_ state: CallState) {
        open("{")
        string("callID", state.callID)
        int("revision", state.revision)
        int("phaseRevision", state.phaseRevision)
        string("phase", state.phase.rawValue)
        key("caller"); device(state.caller)
        string("callee", state.callee)
        key("participation")
        open("[")
        for (device, participation) in state.participation.sorted(by: { $0.key < $1.key }) {
            self.device(device)
            self.participation(participation)
        }
        close("]")
        key("pushedDevices")
        open("[")
        for device in state.pushedDevices.sorted() { self.device(device) }
        close("]")
        if let answeredBy = state.answeredBy { key("answeredBy"); device(answeredBy) }
        if let endReason = state.endReason { string("endReason", endReason.rawValue) }
        if let endedBy = state.endedBy { key("endedBy"); device(endedBy) }
        int("createdAt", state.createdAt)
        if let endedAt = state.endedAt { int("endedAt", endedAt) }
        key("deadlines"); deadlines(state.deadlines)
        key("negotiation"); negotiation(state.negotiation)
        string("media", state.media.rawValue)
        close("}")
    }

    private mutating func device(_ key: DeviceKey) {
        open("{")
        string("account", key.account)
        string("device", key.device)
        close("}")
    }

    private mutating func participation(_ value: DeviceParticipation) {
        open("{")
        switch value {
        case .ringing: key("ringing")
        case .ringingAcknowledged: key("ringingAcknowledged")
        case .answered: key("answered")
        case .stopped: key("stopped")
        case .callerDevice: key("callerDevice")
        case .inProgressElsewhere: key("inProgressElsewhere")
        }
        open("{")
        if case .stopped(let reason) = value { string("_0", reason.rawValue) }
        close("}")
        close("}")
    }

    private mutating func deadlines(_ value: CallDeadlines) {
        open("{")
        if let ring = value.ring { int("ring", ring) }
        if let inviteExpiry = value.inviteExpiry { int("inviteExpiry", inviteExpiry) }
        if let connect = value.connect { int("connect", connect) }
        if let reconnect = value.reconnect { int("reconnect", reconnect) }
        close("}")
    }

    private mutating func negotiation(_ value: Negotiation) {
        open("{")
        int("generation", value.generation)
        if let offer = value.pendingOffer { key("pendingOffer"); described(offer) }
        if let answer = value.lastAnswer { key("lastAnswer"); described(answer) }
        if let ufrag = value.callerUfrag { string("callerUfrag", ufrag) }
        if let ufrag = value.calleeUfrag { string("calleeUfrag", ufrag) }
        string("politeSide", value.politeSide.rawValue)
        key("buffered")
        open("[")
        for (device, buffer) in value.buffered.sorted(by: { $0.key < $1.key }) {
            self.device(device)
            candidateBuffer(buffer)
        }
        close("]")
        close("}")
    }

    private mutating func described(_ value: NegotiatedDescription) {
        open("{")
        string("side", value.side.rawValue)
        int("generation", value.generation)
        key("description")
        open("{")
        string("sdp", omittingSDP ? "" : value.description.sdp)
        close("}")
        close("}")
    }

    private mutating func candidateBuffer(_ value: CandidateBuffer) {
        open("{")
        int("generation", value.generation)
        key("candidates")
        open("[")
        for candidate in value.candidates {
            open("{")
            string("candidate", candidate.candidate)
            if let mid = candidate.sdpMid { string("sdpMid", mid) }
            if let index = candidate.sdpMLineIndex { int("sdpMLineIndex", index) }
            if let ufrag = candidate.usernameFragment { string("usernameFragment", ufrag) }
            close("}")
        }
        close("]")
        close("}")
    }

    // MARK: Bytes

    /// A comma unless this is the first element of its object or array (or a key's value).
    private mutating func separate() {
        if fresh { fresh = false } else { out.append(UInt8(ascii: ",")) }
    }

    private mutating func open(_ bracket: Unicode.Scalar) {
        separate()
        out.append(UInt8(ascii: bracket))
        fresh = true
    }

    private mutating func close(_ bracket: Unicode.Scalar) {
        out.append(UInt8(ascii: bracket))
        fresh = false
    }

    private mutating func key(_ name: StaticString) {
        separate()
        out.append(UInt8(ascii: "\""))
        out.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        out.append(UInt8(ascii: "\""))
        out.append(UInt8(ascii: ":"))
        fresh = true
    }

    private mutating func string(_ name: StaticString, _ value: String) {
        key(name)
        fresh = false
        JSONWriter.appendQuoted(value, to: &out)
    }

    private mutating func int(_ name: StaticString, _ value: Int64) {
        key(name)
        fresh = false
        JSONWriter.appendDecimal(value, to: &out)
    }

    private mutating func int(_ name: StaticString, _ value: Int) {
        int(name, Int64(value))
    }
}
