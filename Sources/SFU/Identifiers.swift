/// A participant (one device's transport) inside the router. The caller maps its own
/// identity (account + device, call id) to a small number once, so the hot path hashes a
/// 32-bit value instead of a string.
public struct ParticipantID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let raw: UInt32
    public init(_ raw: UInt32) { self.raw = raw }
    public static func < (a: ParticipantID, b: ParticipantID) -> Bool { a.raw < b.raw }
    public var description: String { "p\(raw)" }
}

/// A room (group call, or a 1:1 call routed through the SFU).
public struct RoomID: Hashable, Sendable {
    public let raw: String
    public init(_ raw: String) { self.raw = raw }
}

/// A published track, unique per publisher (e.g. the msid track id or the publisher's mid).
public struct TrackID: Hashable, Sendable, CustomStringConvertible {
    public let raw: String
    public init(_ raw: String) { self.raw = raw }
    public var description: String { raw }
}

/// Audio or video.
public enum MediaKind: Sendable, Equatable {
    case audio
    case video
}
