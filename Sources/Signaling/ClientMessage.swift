import CallCore
import Foundation

/// A frame from a device, validated (docs/protocol.md §3–§4).
public enum ClientMessage: Equatable, Sendable {
    case hello(token: String, cursor: Int64?)
    case ack(cursor: Int64)
    case ping
    case command(ClientCommand)

    /// 32 KiB: a Chromium offer with simulcast and many codecs is ~8 KiB; four times that is
    /// room for growth without letting one call hog the outbox.
    public static let maxSDPBytes = 32 * 1024
    /// 1 KiB: an ICE candidate line is under 200 bytes.
    public static let maxCandidateBytes = 1024
    /// 8 KiB: tokens above 4 KiB are rejected by Auth anyway.
    static let maxTokenBytes = 8 * 1024
}

/// A command: something a device asks the server to do, with its dedup key.
public struct ClientCommand: Equatable, Sendable {
    public var eventID: String
    public var kind: CommandKind
    /// A digest of the command's meaning (type and fields, not whitespace), used to detect
    /// an eventID reused for a different command.
    public var payloadHash: String

    public var callID: String? { kind.callID }
}

public enum CommandKind: Equatable, Sendable {
    case invite(callee: String, callID: String?, sdp: String?, media: CallMedia?)
    case ringing(callID: String)
    case answer(callID: String, revision: Int64, sdp: String?)
    case decline(callID: String, revision: Int64)
    case cancel(callID: String)
    case hangup(callID: String)
    case mediaConnected(callID: String)
    case mediaLost(callID: String)
    case offer(callID: String, generation: Int64, sdp: String)
    case answerSDP(callID: String, generation: Int64, sdp: String)
    case candidate(callID: String, generation: Int64, candidate: String, sdpMid: String?, sdpMLineIndex: Int?, ufrag: String?)
    case get(callID: String)
    /// Rooms and SFU negotiation (docs/protocol.md §9): session-bound, handled by the media
    /// coordinator, not by the call reducer.
    case roomJoin(room: String)
    case roomLeave(room: String)
    case sfuOffer(room: String, sdp: String)
    case sfuAnswer(room: String, generation: Int64, sdp: String)
    case roomRing(room: String, invitees: [String])
    case roomAccept(room: String)
    case roomDecline(room: String)
    /// A subscriber's rendered size (and layer cap) for one video track it receives.
    case sfuPreferences(room: String, SFUPreferences)

    /// The room command's room, if this is one.
    public var room: String? {
        switch self {
        case .roomJoin(let room), .roomLeave(let room), .sfuOffer(let room, _), .sfuAnswer(let room, _, _),
             .roomRing(let room, _), .roomAccept(let room), .roomDecline(let room), .sfuPreferences(let room, _): return room
        default: return nil
        }
    }

    public var callID: String? {
        switch self {
        case .roomJoin, .roomLeave, .sfuOffer, .sfuAnswer, .roomRing, .roomAccept, .roomDecline, .sfuPreferences: return nil
        case .invite(_, let id, _, _): return id
        case .ringing(let id), .answer(let id, _, _), .decline(let id, _), .cancel(let id),
             .hangup(let id), .mediaConnected(let id), .mediaLost(let id), .offer(let id, _, _),
             .answerSDP(let id, _, _), .candidate(let id, _, _, _, _, _), .get(let id):
            return id
        }
    }

    /// The wire `type` of this command.
    public var wireType: String {
        switch self {
        case .invite: return "call.invite"
        case .ringing: return "call.ringing"
        case .answer: return "call.answer"
        case .decline: return "call.decline"
        case .cancel: return "call.cancel"
        case .hangup: return "call.hangup"
        case .mediaConnected: return "call.mediaConnected"
        case .mediaLost: return "call.mediaLost"
        case .offer: return "sdp.offer"
        case .answerSDP: return "sdp.answer"
        case .candidate: return "ice.candidate"
        case .get: return "call.get"
        case .roomJoin: return "room.join"
        case .roomLeave: return "room.leave"
        case .sfuOffer: return "sfu.offer"
        case .sfuAnswer: return "sfu.answer"
        case .roomRing: return "room.ring"
        case .roomAccept: return "room.accept"
        case .roomDecline: return "room.decline"
        case .sfuPreferences: return "sfu.preferences"
        }
    }

    /// The SDP body of a 1:1 call command (invite, answer, renegotiation), if it has one.
    var callSDP: String? {
        switch self {
        case .invite(_, _, let sdp, _), .answer(_, _, let sdp): return sdp
        case .offer(_, _, let sdp), .answerSDP(_, _, let sdp): return sdp
        default: return nil
        }
    }
}

extension ClientMessage {
    /// Parses one text frame. Never traps on any input.
    public static func parse(_ text: String) -> Result<ClientMessage, WireError> {
        var unused: [UInt8]?
        return parse(text, quotedSDP: &unused, wantsQuotedSDP: false)
    }

    /// ``parse(_:)``, and the frame's `sdp` literal (quotes included) in `quotedSDP` when it
    /// is exactly what ``JSONWriter`` makes of the parsed SDP, so that it need not be
    /// escaped again (``QuotedSDPMemo``); nil otherwise (or when the frame was not scanned).
    static func parse(_ text: String, quotedSDP: inout [UInt8]?) -> Result<ClientMessage, WireError> {
        parse(text, quotedSDP: &quotedSDP, wantsQuotedSDP: true)
    }

    private static func parse(_ text: String, quotedSDP: inout [UInt8]?,
                              wantsQuotedSDP: Bool) -> Result<ClientMessage, WireError> {
        // Scanned in place (a native string's UTF-8 storage), not copied into an array first.
        let scanned = text.utf8.withContiguousStorageIfAvailable { bytes in
            wantsQuotedSDP ? RawFrame.scan(bytes, quotedSDP: &quotedSDP) : RawFrame.scan(bytes)
        } ?? RawFrame.scan(Array(text.utf8))
        let raw: RawFrame
        if let scanned {
            // No depth check needed: the scanner takes only a flat object whose one nested
            // value is an array of strings (depth 2 ≤ ``JSONShape/maxDepth``), and it reads
            // string contents the way ``JSONShape`` skips them, so `depth(of:)` would be ≤ 2.
            raw = scanned
        } else {
            let bytes = Array(text.utf8)
            guard JSONShape.depth(of: bytes) <= JSONShape.maxDepth else { return .failure(.tooDeep) }
            // Anything the scanner does not take (bad JSON, a wrong type, nesting in an
            // unknown field, a fractional number, a repeated key) goes to Foundation's
            // decoder, which accepts or refuses it with its error as before.
            do {
                raw = try JSONDecoder().decode(RawFrame.self, from: Data(bytes))
            } catch {
                return .failure(.malformed(Self.describe(error)))
            }
        }
        do {
            return .success(try validate(raw))
        } catch let error as WireError {
            return .failure(error)
        } catch {
            return .failure(.malformed("invalid"))
        }
    }

    private static func describe(_ error: Error) -> String {
        switch error {
        case DecodingError.typeMismatch(_, let ctx), DecodingError.valueNotFound(_, let ctx):
            let path = ctx.codingPath.map(\.stringValue).joined(separator: ".")
            return path.isEmpty ? "not a JSON object" : "field '\(path)' has the wrong type"
        case DecodingError.dataCorrupted:
            return "not valid JSON"
        default:
            return "not valid JSON"
        }
    }

    private static func validate(_ raw: RawFrame) throws -> ClientMessage {
        if let v = raw.v, v != 1 { throw WireError.unsupportedVersion(v) }
        guard let type = raw.type else { throw WireError.malformed("missing 'type'") }
        switch type {
        case "hello":
            guard let token = raw.token, !token.isEmpty else { throw WireError.malformed("missing 'token'") }
            guard token.utf8.count <= maxTokenBytes else { throw WireError.malformed("token too large") }
            return .hello(token: token, cursor: try raw.cursor.map { try parseCursor($0) })
        case "ack":
            guard let cursor = raw.cursor else { throw WireError.malformed("missing 'cursor'") }
            return .ack(cursor: try parseCursor(cursor))
        case "ping":
            return .ping
        default:
            return .command(try command(type: type, raw))
        }
    }

    private static func parseCursor(_ text: String) throws -> Int64 {
        guard let value = Int64(text), value >= 0 else { throw WireError.malformed("'cursor' is not a stream position") }
        return value
    }

    private static func command(type: String, _ raw: RawFrame) throws -> ClientCommand {
        guard let eventID = raw.eventID else { throw WireError.malformed("missing 'eventID'") }
        guard WireIdentifier.isValid(eventID) else { throw WireError.invalidIdentifier(field: "eventID") }
        func callID() throws -> String {
            guard let id = raw.callID else { throw WireError.malformed("missing 'callID'") }
            guard WireIdentifier.isValid(id) else { throw WireError.invalidIdentifier(field: "callID") }
            return id
        }
        func room() throws -> String {
            guard let id = raw.room else { throw WireError.malformed("missing 'room'") }
            guard WireIdentifier.isValid(id) else { throw WireError.invalidIdentifier(field: "room") }
            return id
        }
        func revision() throws -> Int64 {
            guard let r = raw.revision, r >= 0 else { throw WireError.malformed("missing 'revision'") }
            return r
        }
        func generation() throws -> Int64 {
            guard let g = raw.generation, g >= 0 else { throw WireError.malformed("missing 'generation'") }
            return g
        }
        func sdp(required: Bool) throws -> String? {
            guard let s = raw.sdp else {
                if required { throw WireError.malformed("missing 'sdp'") }
                return nil
            }
            guard s.utf8.count <= maxSDPBytes else { throw WireError.sdpTooLarge }
            return s
        }
        let kind: CommandKind
        switch type {
        case "call.invite":
            guard let callee = raw.callee else { throw WireError.malformed("missing 'callee'") }
            guard WireIdentifier.isValid(callee) else { throw WireError.invalidIdentifier(field: "callee") }
            let proposed = try raw.callID.map { id -> String in
                guard WireIdentifier.isValid(id) else { throw WireError.invalidIdentifier(field: "callID") }
                return id
            }
            let media = try raw.media.map { text -> CallMedia in
                guard let media = CallMedia(rawValue: text) else { throw WireError.malformed("'media' must be p2p or sfu") }
                return media
            }
            kind = .invite(callee: callee, callID: proposed, sdp: try sdp(required: false), media: media)
        case "call.ringing": kind = .ringing(callID: try callID())
        case "call.answer": kind = .answer(callID: try callID(), revision: try revision(), sdp: try sdp(required: false))
        case "call.decline": kind = .decline(callID: try callID(), revision: try revision())
        case "call.cancel": kind = .cancel(callID: try callID())
        case "call.hangup": kind = .hangup(callID: try callID())
        case "call.mediaConnected": kind = .mediaConnected(callID: try callID())
        case "call.mediaLost": kind = .mediaLost(callID: try callID())
        case "call.get": kind = .get(callID: try callID())
        case "room.join": kind = .roomJoin(room: try room())
        case "room.leave": kind = .roomLeave(room: try room())
        case "room.accept": kind = .roomAccept(room: try room())
        case "room.decline": kind = .roomDecline(room: try room())
        case "room.ring":
            guard let invitees = raw.invitees, !invitees.isEmpty else { throw WireError.malformed("missing 'invitees'") }
            // 32: a group call rings a team, not a city; bounds the fan-out of one command.
            guard invitees.count <= 32 else { throw WireError.malformed("at most 32 invitees") }
            guard invitees.allSatisfy(WireIdentifier.isValid) else { throw WireError.invalidIdentifier(field: "invitees") }
            kind = .roomRing(room: try room(), invitees: invitees)
        case "sfu.offer": kind = .sfuOffer(room: try room(), sdp: try sdp(required: true)!)
        case "sfu.preferences": kind = .sfuPreferences(room: try room(), try preferences(raw))
        case "sfu.answer": kind = .sfuAnswer(room: try room(), generation: try generation(), sdp: try sdp(required: true)!)
        case "sdp.offer": kind = .offer(callID: try callID(), generation: try generation(), sdp: try sdp(required: true)!)
        case "sdp.answer": kind = .answerSDP(callID: try callID(), generation: try generation(), sdp: try sdp(required: true)!)
        case "ice.candidate":
            guard let candidate = raw.candidate else { throw WireError.malformed("missing 'candidate'") }
            guard candidate.utf8.count <= maxCandidateBytes else { throw WireError.malformed("candidate too large") }
            if let mid = raw.sdpMid, mid.utf8.count > 64 { throw WireError.malformed("sdpMid too large") }
            if let ufrag = raw.ufrag, ufrag.utf8.count > 256 { throw WireError.malformed("ufrag too large") }
            kind = .candidate(callID: try callID(), generation: try generation(), candidate: candidate,
                              sdpMid: raw.sdpMid, sdpMLineIndex: raw.sdpMLineIndex, ufrag: raw.ufrag)
        default:
            throw WireError.unknownType(type)
        }
        return ClientCommand(eventID: eventID, kind: kind, payloadHash: PayloadHash.of(kind))
    }
}
