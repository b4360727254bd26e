/// The union of every field a v1 frame can carry (docs/protocol.md §3–§4); decoded first,
/// then validated per type by ``ClientMessage/parse(_:)``.
struct RawFrame: Decodable, Equatable {
    var v: Int?
    var type: String?
    var eventID: String?
    var callID: String?
    var callee: String?
    var revision: Int64?
    var generation: Int64?
    var sdp: String?
    var candidate: String?
    var sdpMid: String?
    var sdpMLineIndex: Int?
    var ufrag: String?
    var room: String?
    var media: String?
    var invitees: [String]?
    var token: String?
    var cursor: String?
    // sfu.preferences (§9)
    var publisher: String?
    var mid: String?
    var track: String?
    var maxWidth: Int64?
    var maxHeight: Int64?
    var maxLayer: Int64?
}
