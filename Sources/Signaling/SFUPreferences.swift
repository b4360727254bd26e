import CallCore

/// `sfu.preferences` (docs/protocol.md §9): how large a subscriber renders one video track it
/// receives, so the SFU forwards the lowest simulcast layer that covers that size (issue 4;
/// LiveKit's "adaptive stream" does the same from the element size).
///
/// The subscriber is always the authenticated device that sends the command; `publisher`
/// names whose track it means. Sizes arrive as the wire's integers and are range-checked by
/// ``problem`` so an out-of-range value is a business refusal (`result` with a code and the
/// command's eventID) rather than a frame error.
public struct SFUPreferences: Equatable, Sendable {
    /// The publishing member.
    public var publisher: DeviceKey
    /// The publisher's mid of the track (RFC 8843 §2): the part after the first "-" of the
    /// msid track id the server's offer carries (`<n>-<mid>`).
    public var mid: String
    /// The rendered size in device pixels (CSS size × devicePixelRatio).
    public var maxWidth: Int64
    public var maxHeight: Int64
    /// The largest simulcast layer wanted (0 = lowest); nil = no layer cap, only the size.
    public var maxLayer: Int64?

    /// 16383: the largest VP8 frame dimension (14 bits, RFC 6386 §9.1); no browser renders a
    /// tile larger, and it keeps the router's size arithmetic far from overflow.
    public static let maxDimension: Int64 = 16_383
    /// 2: browsers send up to three simulcast layers (RFC 8853 as used by libwebrtc; the
    /// router refuses more with `sfu_bad_layer_count`).
    public static let maxLayerIndex: Int64 = 2
    /// 64: a mid is an RFC 5888 identification-tag; browsers use short decimal numbers.
    public static let maxMidBytes = 64

    public init(publisher: DeviceKey, mid: String, maxWidth: Int64, maxHeight: Int64, maxLayer: Int64? = nil) {
        self.publisher = publisher
        self.mid = mid
        self.maxWidth = maxWidth
        self.maxHeight = maxHeight
        self.maxLayer = maxLayer
    }

    /// Why the values are out of range, if they are (checked before the media plane sees them).
    public var problem: SFUPreferencesError? {
        let sizes = 1...Self.maxDimension
        guard sizes.contains(maxWidth), sizes.contains(maxHeight) else { return .badSize }
        if let maxLayer, !(0...Self.maxLayerIndex).contains(maxLayer) { return .badLayer }
        return nil
    }

    /// The publisher's mid from an msid track id as the server writes it (`<n>-<mid>`, n the
    /// publisher's slot number); nil when `track` does not have that shape.
    public static func mid(fromTrackID track: String) -> String? {
        guard let dash = track.firstIndex(of: "-") else { return nil }
        let prefix = track[..<dash]
        let mid = track[track.index(after: dash)...]
        guard !prefix.isEmpty, prefix.allSatisfy(\.isASCII), prefix.allSatisfy(\.isNumber), isValidMid(mid) else { return nil }
        return String(mid)
    }

    /// 1–64 RFC 4566 token-chars (RFC 5888 §4: `identification-tag = token`).
    static func isValidMid<S: StringProtocol>(_ mid: S) -> Bool {
        let bytes = mid.utf8
        guard !bytes.isEmpty, bytes.count <= maxMidBytes else { return false }
        return bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                return true
            default:
                return "!#$%&'*+-.^_`{|}~".utf8.contains(byte)
            }
        }
    }
}

/// Refusals of `sfu.preferences`, with stable wire codes (docs/protocol.md §9). The first two
/// are decided by the hub from the values alone; the others by the room coordinator and the
/// media plane.
public enum SFUPreferencesError: Error, Equatable, Sendable {
    /// `maxWidth` or `maxHeight` outside 1…16383.
    case badSize
    /// `maxLayer` outside 0…2.
    case badLayer
    /// The device has not joined the room, or has no media session in it yet.
    case notInRoom
    /// `publisher` is not a member of the room (or is the device itself).
    case unknownPublisher
    /// The publisher sends this device no video track with that mid.
    case unknownTrack
    /// The server runs without a media plane.
    case mediaUnavailable

    public var code: String {
        switch self {
        case .badSize: return "badSize"
        case .badLayer: return "badLayer"
        case .notInRoom: return "notInRoom"
        case .unknownPublisher: return "unknownPublisher"
        case .unknownTrack: return "unknownTrack"
        case .mediaUnavailable: return "mediaUnavailable"
        }
    }

    public var message: String {
        switch self {
        case .badSize: return "maxWidth and maxHeight must be integers in 1…\(SFUPreferences.maxDimension)"
        case .badLayer: return "maxLayer must be an integer in 0…\(SFUPreferences.maxLayerIndex)"
        case .notInRoom: return "join the room and send sfu.offer first"
        case .unknownPublisher: return "publisher is not another member of this room"
        case .unknownTrack: return "this publisher sends you no video track with that mid"
        case .mediaUnavailable: return "this server runs without a media plane"
        }
    }
}

extension ClientMessage {
    /// The fields of `sfu.preferences`: shape and types here (a frame error, as for every
    /// command), value ranges in ``SFUPreferences/problem`` (a `result` refusal).
    static func preferences(_ raw: RawFrame) throws -> SFUPreferences {
        guard let publisherText = raw.publisher else { throw WireError.malformed("missing 'publisher'") }
        let parts = publisherText.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, WireIdentifier.isValid(String(parts[0])), WireIdentifier.isValid(String(parts[1])) else {
            throw WireError.invalidIdentifier(field: "publisher")
        }
        let mid: String
        switch (raw.mid, raw.track) {
        case (let given?, nil):
            guard SFUPreferences.isValidMid(given) else { throw WireError.malformed("'mid' must be 1-64 token characters") }
            mid = given
        case (nil, let track?):
            guard let parsed = SFUPreferences.mid(fromTrackID: track) else {
                throw WireError.malformed("'track' must be the msid track id of the server's offer")
            }
            mid = parsed
        case (nil, nil): throw WireError.malformed("missing 'mid' (or 'track')")
        case (_?, _?): throw WireError.malformed("give 'mid' or 'track', not both")
        }
        guard let maxWidth = raw.maxWidth else { throw WireError.malformed("missing 'maxWidth'") }
        guard let maxHeight = raw.maxHeight else { throw WireError.malformed("missing 'maxHeight'") }
        return SFUPreferences(publisher: DeviceKey(account: String(parts[0]), device: String(parts[1])), mid: mid,
                              maxWidth: maxWidth, maxHeight: maxHeight, maxLayer: raw.maxLayer)
    }
}
