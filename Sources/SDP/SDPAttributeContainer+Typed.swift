extension SDPAttributeContainer {
    /// Every attribute named `name` parsed with `parse`, which receives the value and the source
    /// line; a value attribute written without a value is an error too.
    func parsedAttributes<T>(
        named name: String, _ parse: (String, Int?) throws(SDPError) -> T
    ) throws(SDPError) -> [T] {
        var result: [T] = []
        for attribute in attributes where attribute.name == name {
            guard let value = attribute.value else { throw .invalidAttribute(line: attribute.line, name: name) }
            result.append(try parse(value, attribute.line))
        }
        return result
    }

    /// `a=ice-ufrag` (RFC 8839 §5.4).
    public var iceUfrag: String? { attribute(named: "ice-ufrag")?.value }
    /// `a=ice-pwd` (RFC 8839 §5.4).
    public var icePwd: String? { attribute(named: "ice-pwd")?.value }
    /// `a=ice-options` tokens (RFC 8839 §5.6), e.g. `trickle` (RFC 8838), `ice2` (RFC 8445).
    public var iceOptions: [String] {
        attributes(named: "ice-options").flatMap { ($0.value ?? "").split(separator: " ").map(String.init) }
    }

    /// `a=fingerprint` lines (RFC 8122 §5); several hash functions may be offered.
    public func fingerprints() throws(SDPError) -> [Fingerprint] {
        try parsedAttributes(named: "fingerprint") { (value, line) throws(SDPError) in
            try Fingerprint(attributeValue: value, line: line)
        }
    }

    /// `a=setup` (RFC 4145 §4); nil when absent.
    public func setup() throws(SDPError) -> DTLSSetup? {
        guard let attribute = attribute(named: "setup") else { return nil }
        guard let value = attribute.value, let setup = DTLSSetup(rawValue: value) else {
            throw .invalidAttribute(line: attribute.line, name: "setup")
        }
        return setup
    }

    /// `a=extmap` lines (RFC 8285 §8), allowed at session or media level.
    public func headerExtensions() throws(SDPError) -> [HeaderExtension] {
        try parsedAttributes(named: "extmap") { (value, line) throws(SDPError) in
            try HeaderExtension(attributeValue: value, line: line)
        }
    }

    /// `a=extmap-allow-mixed` (RFC 8285 §6): one- and two-byte headers may be mixed.
    public var extmapAllowMixed: Bool { hasAttribute("extmap-allow-mixed") }
}
