/// `a=rid:<rid-id> <send|recv> [pt=<fmt>,...;<restriction>=<value>;...]` (RFC 8851 §10).
public struct RIDDescription: Sendable, Hashable {
    public enum RIDDirection: String, Sendable, Hashable {
        case send, recv
    }

    /// 1+ alphanumerics, `-` or `_` (RFC 8851 §10 `rid-id`).
    public var id: String
    public var direction: RIDDirection
    /// `pt=` list, empty when unrestricted.
    public var payloadTypes: [UInt8]
    /// Other restrictions (`max-width=1280`, ...), as written, in order.
    public var restrictions: [String]

    public init(id: String, direction: RIDDirection, payloadTypes: [UInt8] = [], restrictions: [String] = []) {
        self.id = id
        self.direction = direction
        self.payloadTypes = payloadTypes
        self.restrictions = restrictions
    }

    public init(attributeValue: String, line: Int? = nil) throws(SDPError) {
        let error = SDPError.invalidAttribute(line: line, name: "rid")
        let fields = attributeValue.split(separator: " ", maxSplits: 2)
        guard fields.count >= 2, RIDDescription.isValidID(fields[0]),
              let direction = RIDDirection(rawValue: String(fields[1]))
        else { throw error }
        var payloadTypes: [UInt8] = []
        var restrictions: [String] = []
        if fields.count == 3 {
            for token in fields[2].split(separator: ";") {
                if token.hasPrefix("pt=") {
                    for number in token.dropFirst(3).split(separator: ",") {
                        guard let payloadType = UInt8(number), payloadType < 128 else { throw error }
                        payloadTypes.append(payloadType)
                    }
                } else {
                    restrictions.append(String(token))
                }
            }
        }
        self.init(id: String(fields[0]), direction: direction, payloadTypes: payloadTypes, restrictions: restrictions)
    }

    static func isValidID(_ text: Substring) -> Bool {
        !text.isEmpty && text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
    }

    public var attributeValue: String {
        var params = restrictions
        if !payloadTypes.isEmpty { params.insert("pt=" + payloadTypes.map(String.init).joined(separator: ","), at: 0) }
        return id + " " + direction.rawValue + (params.isEmpty ? "" : " " + params.joined(separator: ";"))
    }
}

/// `a=simulcast:<send|recv> <streams> [<send|recv> <streams>]` (RFC 8853 §5.1): streams are
/// `;`-separated, each a `,`-separated list of alternative rids, `~` marking a paused rid.
public struct Simulcast: Sendable, Hashable {
    public struct Stream: Sendable, Hashable {
        public var rid: String
        public var paused: Bool

        public init(rid: String, paused: Bool = false) {
            self.rid = rid
            self.paused = paused
        }

        var text: String { (paused ? "~" : "") + rid }
    }

    /// Each element is one simulcast stream with its alternatives.
    public var send: [[Stream]]
    public var recv: [[Stream]]

    public init(send: [[Stream]] = [], recv: [[Stream]] = []) {
        self.send = send
        self.recv = recv
    }

    public init(attributeValue: String, line: Int? = nil) throws(SDPError) {
        let error = SDPError.invalidAttribute(line: line, name: "simulcast")
        let fields = attributeValue.split(separator: " ")
        guard fields.count == 2 || fields.count == 4 else { throw error }
        var send: [[Stream]]?
        var recv: [[Stream]]?
        for pairIndex in stride(from: 0, to: fields.count, by: 2) {
            var streams: [[Stream]] = []
            for group in fields[pairIndex + 1].split(separator: ";", omittingEmptySubsequences: false) {
                var alternatives: [Stream] = []
                for item in group.split(separator: ",", omittingEmptySubsequences: false) {
                    let paused = item.hasPrefix("~")
                    let rid = paused ? item.dropFirst() : item
                    guard RIDDescription.isValidID(rid) else { throw error }
                    alternatives.append(Stream(rid: String(rid), paused: paused))
                }
                streams.append(alternatives)
            }
            switch fields[pairIndex] {
            case "send" where send == nil: send = streams
            case "recv" where recv == nil: recv = streams
            default: throw error
            }
        }
        self.init(send: send ?? [], recv: recv ?? [])
    }

    /// All rids named on the send side, in order.
    public var sendRIDs: [String] { send.flatMap { $0.map(\.rid) } }
    /// All rids named on the receive side, in order.
    public var recvRIDs: [String] { recv.flatMap { $0.map(\.rid) } }

    public var attributeValue: String {
        func list(_ streams: [[Stream]]) -> String {
            streams.map { $0.map(\.text).joined(separator: ",") }.joined(separator: ";")
        }
        var parts: [String] = []
        if !send.isEmpty { parts += ["send", list(send)] }
        if !recv.isEmpty { parts += ["recv", list(recv)] }
        return parts.joined(separator: " ")
    }
}
