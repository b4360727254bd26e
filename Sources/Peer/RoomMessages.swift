import Foundation

/// The room and SFU negotiation messages of docs/protocol.md §9, built and parsed without I/O.
public enum RoomMessages {
    /// A command to send with `SignalingClient.command/request` (`type` + fields; the client adds
    /// `v` and `eventID`).
    public struct Command: Equatable {
        public var type: String
        public var room: String
        public var sdp: String?
        public var generation: Int64?
        public var invitees: [String]?
        /// `sfu.preferences`: whose track, which one, and how large it is rendered.
        public var preferences: Preferences?

        /// JSON fields besides `v`, `type` and `eventID`.
        public var fields: [String: Any] {
            var fields: [String: Any] = ["room": room]
            if let sdp { fields["sdp"] = sdp }
            if let generation { fields["generation"] = generation }
            if let invitees { fields["invitees"] = invitees }
            if let preferences {
                fields["publisher"] = preferences.publisher
                fields["mid"] = preferences.mid
                fields["maxWidth"] = preferences.maxWidth
                fields["maxHeight"] = preferences.maxHeight
                if let maxLayer = preferences.maxLayer { fields["maxLayer"] = maxLayer }
            }
            return fields
        }
    }

    /// The fields of `sfu.preferences` (§9): `publisher` as "account/device", the publisher's
    /// `mid` of the video track, the rendered size in device pixels, an optional layer cap.
    public struct Preferences: Equatable {
        public var publisher: String
        public var mid: String
        public var maxWidth: Int
        public var maxHeight: Int
        public var maxLayer: Int?

        public init(publisher: String, mid: String, maxWidth: Int, maxHeight: Int, maxLayer: Int? = nil) {
            self.publisher = publisher
            self.mid = mid
            self.maxWidth = maxWidth
            self.maxHeight = maxHeight
            self.maxLayer = maxLayer
        }
    }

    /// §9: room names are 1–64 chars of `[A-Za-z0-9._:-]` (the protocol's identifier rule).
    public static func validate(room: String) throws(PeerError) {
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:-")
        guard (1...64).contains(room.count), room.allSatisfy({ allowed.contains($0) }) else {
            throw .invalidParameter("room name must be 1–64 chars of [A-Za-z0-9._:-]")
        }
    }

    public static func join(room: String) throws(PeerError) -> Command {
        try validate(room: room)
        return Command(type: "room.join", room: room)
    }

    public static func leave(room: String) throws(PeerError) -> Command {
        try validate(room: room)
        return Command(type: "room.leave", room: room)
    }

    public static func ring(room: String, invitees: [String]) throws(PeerError) -> Command {
        try validate(room: room)
        guard !invitees.isEmpty else { throw .invalidParameter("no invitees") }
        return Command(type: "room.ring", room: room, invitees: invitees)
    }

    /// The device's offer with its send tracks (§9 Negotiation).
    public static func offer(room: String, sdp: String) throws(PeerError) -> Command {
        try validate(room: room)
        return Command(type: "sfu.offer", room: room, sdp: sdp)
    }

    /// The answer to the server's offer of `generation`.
    public static func answer(room: String, generation: Int64, sdp: String) throws(PeerError) -> Command {
        try validate(room: room)
        return Command(type: "sfu.answer", room: room, sdp: sdp, generation: generation)
    }

    /// A subscriber's preference for one received video track. Only the room name is checked
    /// here: sizes and layers go to the server as given, so tests can send out-of-range values
    /// and see the server's refusal (`badSize`, `badLayer`).
    public static func preferences(room: String, _ preferences: Preferences) throws(PeerError) -> Command {
        try validate(room: room)
        return Command(type: "sfu.preferences", room: room, preferences: preferences)
    }

    /// What the server said to a command.
    public enum Outcome: Equatable {
        /// `sfu.offer` accepted: the server's answer and the negotiation generation.
        case answered(generation: Int64?, sdp: String)
        /// Accepted with no SDP (room.join, room.leave, sfu.answer…); `members` for room.join.
        case accepted(members: [String])
        case duplicate
        case rejected(code: String, message: String?)
    }

    /// Parses a `result` frame (a JSON object). Typed error on anything else.
    public static func outcome(ofResult object: [String: Any]) throws(PeerError) -> Outcome {
        guard object["type"] as? String == "result", let status = object["status"] as? String else {
            throw .invalidParameter("not a result frame")
        }
        switch status {
        case "accepted":
            let generation = (object["generation"] as? NSNumber)?.int64Value
            if let sdp = object["sdp"] as? String { return .answered(generation: generation, sdp: sdp) }
            return .accepted(members: Self.members(object["members"]))
        case "duplicate":
            return .duplicate
        case "rejected":
            return .rejected(code: object["code"] as? String ?? "unknown", message: object["message"] as? String)
        default:
            throw .invalidParameter("unknown result status \(status)")
        }
    }

    /// Members as account/device strings: accepts `["alice/laptop"]` and
    /// `[{"account":"alice","device":"laptop"}]` (the protocol does not fix the shape yet).
    static func members(_ value: Any?) -> [String] {
        guard let list = value as? [Any] else { return [] }
        return list.compactMap { item in
            if let text = item as? String { return text }
            if let object = item as? [String: Any], let account = object["account"] as? String {
                return (object["device"] as? String).map { "\(account)/\($0)" } ?? account
            }
            return nil
        }
    }

    /// Server-to-device room events (§9).
    public enum Event: Equatable {
        case serverOffer(room: String, generation: Int64, sdp: String)
        case memberJoined(room: String, member: String)
        case memberLeft(room: String, member: String, reason: String?)
        case incoming(room: String, from: String, expiresAt: Int64?)
        case ringState(room: String, member: String, state: String)
        /// The room's dominant speaker ("account/device"), nil when nobody speaks (§9).
        case activeSpeaker(room: String, member: String?)
    }

    /// Parses a room event frame; nil for frames that are not room events (or lack fields).
    public static func event(_ object: [String: Any]) -> Event? {
        guard let type = object["type"] as? String, let room = object["room"] as? String else { return nil }
        func member(_ key: String) -> String? { Self.members([object[key] as Any]).first }
        switch type {
        case "sfu.offer":
            guard let generation = (object["generation"] as? NSNumber)?.int64Value, let sdp = object["sdp"] as? String else { return nil }
            return .serverOffer(room: room, generation: generation, sdp: sdp)
        case "room.memberJoined":
            return member("member").map { .memberJoined(room: room, member: $0) }
        case "room.memberLeft":
            return member("member").map { .memberLeft(room: room, member: $0, reason: object["reason"] as? String) }
        case "room.incoming":
            return member("from").map { .incoming(room: room, from: $0, expiresAt: (object["expiresAt"] as? NSNumber)?.int64Value) }
        case "room.ringState":
            guard let who = member("member"), let state = object["state"] as? String else { return nil }
            return .ringState(room: room, member: who, state: state)
        case "room.activeSpeaker":
            // `member` is required: a device object, or null when the floor is free.
            guard let value = object["member"] else { return nil }
            if value is NSNull { return .activeSpeaker(room: room, member: nil) }
            return member("member").map { .activeSpeaker(room: room, member: $0) }
        default:
            return nil
        }
    }
}
