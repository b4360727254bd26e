/// An ICE candidate attribute (RFC 8839 §5.1):
/// `candidate:<foundation> <component> <transport> <priority> <address> <port> typ <type>
/// [raddr <addr>] [rport <port>] *(<extension-name> <extension-value>)`.
public struct ICECandidate: Sendable, Equatable {
    public enum CandidateType: String, Sendable, Hashable {
        case host, srflx, prflx, relay
    }

    /// 1 to 32 ice-chars (RFC 8839 §5.1).
    public var foundation: String
    /// 1 = RTP, 2 = RTCP.
    public var component: UInt16
    /// `udp` (RFC 8445), `tcp` (RFC 6544); kept as written, compared case-insensitively.
    public var transport: String
    public var priority: UInt32
    /// IP address or, for mDNS-obfuscated candidates, a `.local` host name.
    public var address: String
    public var port: UInt16
    public var type: CandidateType
    public var relatedAddress: String?
    public var relatedPort: UInt16?
    /// Extension pairs in order, e.g. `generation 0`, `network-id 1`, `tcptype active`.
    public var extensions: [(name: String, value: String)]

    public init(
        foundation: String, component: UInt16 = 1, transport: String = "udp", priority: UInt32,
        address: String, port: UInt16, type: CandidateType, relatedAddress: String? = nil,
        relatedPort: UInt16? = nil, extensions: [(name: String, value: String)] = []
    ) {
        self.foundation = foundation
        self.component = component
        self.transport = transport
        self.priority = priority
        self.address = address
        self.port = port
        self.type = type
        self.relatedAddress = relatedAddress
        self.relatedPort = relatedPort
        self.extensions = extensions
    }

    /// Parses the value of `a=candidate:` (also accepts a leading `candidate:` as trickled in
    /// JSON by browsers).
    public init(attributeValue: String, line: Int? = nil) throws(SDPError) {
        var text = Substring(attributeValue)
        if text.hasPrefix("candidate:") { text = text.dropFirst("candidate:".count) }
        let fields = text.split(separator: " ")
        let error = SDPError.invalidAttribute(line: line, name: "candidate")
        guard fields.count >= 8, fields[6] == "typ",
              (1...32).contains(fields[0].count),
              let component = UInt16(fields[1]), (1...256).contains(component),
              let priority = UInt32(fields[3]), let port = UInt16(fields[5]),
              let type = CandidateType(rawValue: String(fields[7]))
        else { throw error }
        var candidate = ICECandidate(
            foundation: String(fields[0]), component: component, transport: String(fields[2]),
            priority: priority, address: String(fields[4]), port: port, type: type)
        var index = 8
        while index < fields.count {
            guard index + 1 < fields.count else { throw error }
            let name = fields[index], value = fields[index + 1]
            switch name {
            case "raddr": candidate.relatedAddress = String(value)
            case "rport":
                guard let relatedPort = UInt16(value) else { throw error }
                candidate.relatedPort = relatedPort
            default: candidate.extensions.append((String(name), String(value)))
            }
            index += 2
        }
        self = candidate
    }

    /// The value after `a=candidate:`.
    public var attributeValue: String {
        var parts = [foundation, String(component), transport, String(priority), address, String(port),
                     "typ", type.rawValue]
        if let relatedAddress { parts += ["raddr", relatedAddress] }
        if let relatedPort { parts += ["rport", String(relatedPort)] }
        for pair in extensions { parts += [pair.name, pair.value] }
        return parts.joined(separator: " ")
    }

    /// RFC 8445 §5.1.2.1 priority: 2^24·type preference + 2^8·local preference + (256 − component).
    /// Type preference 126 for host (the RFC's recommended value).
    public static func priority(typePreference: UInt32 = 126, localPreference: UInt32 = 65535, component: UInt16 = 1) -> UInt32 {
        (typePreference << 24) + (localPreference << 8) + (256 - UInt32(min(component, 256)))
    }

    /// A host UDP candidate for the SFU's single port.
    public static func host(address: String, port: UInt16, foundation: String = "1", localPreference: UInt32 = 65535) -> ICECandidate {
        ICECandidate(foundation: foundation, priority: priority(localPreference: localPreference),
                     address: address, port: port, type: .host)
    }

    public static func == (lhs: ICECandidate, rhs: ICECandidate) -> Bool {
        lhs.attributeValue == rhs.attributeValue
    }
}
