/// One `a=` line (RFC 8866 §5.13): a property attribute (`a=rtcp-mux`) has no value, a value
/// attribute (`a=mid:0`) has everything after the first colon, kept verbatim.
public struct SDPAttribute: Sendable, Hashable, CustomStringConvertible {
    public var name: String
    public var value: String?
    /// 1-based line of the parsed text this attribute came from; nil when built in code.
    /// Not part of equality: a re-parsed attribute equals the original.
    public var line: Int?

    public init(_ name: String, _ value: String? = nil, line: Int? = nil) {
        self.name = name
        self.value = value
        self.line = line
    }

    /// Parses the text after `a=`.
    init(parsing text: Substring, line: Int) {
        if let colon = text.firstIndex(of: ":") {
            self.init(String(text[..<colon]), String(text[text.index(after: colon)...]), line: line)
        } else {
            self.init(String(text), nil, line: line)
        }
    }

    /// The text after `a=`.
    public var description: String {
        guard let value else { return name }
        return name + ":" + value
    }

    public static func == (lhs: SDPAttribute, rhs: SDPAttribute) -> Bool {
        lhs.name == rhs.name && lhs.value == rhs.value
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(value)
    }
}

/// Ordered attribute lists with lookup helpers, shared by session and media levels.
public protocol SDPAttributeContainer {
    var attributes: [SDPAttribute] { get set }
}

extension SDPAttributeContainer {
    /// All attributes named `name`, in order.
    public func attributes(named name: String) -> [SDPAttribute] {
        attributes.filter { $0.name == name }
    }

    /// The first attribute named `name`.
    public func attribute(named name: String) -> SDPAttribute? {
        attributes.first { $0.name == name }
    }

    /// Whether a property or value attribute named `name` is present.
    public func hasAttribute(_ name: String) -> Bool {
        attributes.contains { $0.name == name }
    }

    /// Appends an attribute.
    public mutating func addAttribute(_ name: String, _ value: String? = nil) {
        attributes.append(SDPAttribute(name, value))
    }

    /// Removes every attribute named `name`.
    public mutating func removeAttributes(named name: String) {
        attributes.removeAll { $0.name == name }
    }
}
