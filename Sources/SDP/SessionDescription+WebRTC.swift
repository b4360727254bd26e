/// WebRTC accessors over a whole description (JSEP, RFC 8829).
extension SessionDescription {
    /// `a=group` lines (RFC 5888 §5).
    public func groups() throws(SDPError) -> [MediaGroup] {
        try parsedAttributes(named: "group") { (value, line) throws(SDPError) in
            try MediaGroup(attributeValue: value, line: line)
        }
    }

    /// The first BUNDLE group (RFC 9143 §7.1); JSEP offers use one.
    public func bundleGroup() throws(SDPError) -> MediaGroup? {
        try groups().first { $0.semantics == "BUNDLE" }
    }

    /// `a=ice-lite` at session level (RFC 8839 §5.3).
    public var iceLite: Bool { hasAttribute("ice-lite") }

    /// The ice-ufrag for a section: media level wins over session level (RFC 8839 §5.4).
    public func iceUfrag(for section: MediaDescription) -> String? { section.iceUfrag ?? iceUfrag }

    /// The ice-pwd for a section: media level wins over session level.
    public func icePwd(for section: MediaDescription) -> String? { section.icePwd ?? icePwd }

    /// ice-options for a section: media level wins over session level.
    public func iceOptions(for section: MediaDescription) -> [String] {
        let local = section.iceOptions
        return local.isEmpty ? iceOptions : local
    }

    /// Fingerprints for a section; Firefox writes them at session level (RFC 8122 §5).
    public func fingerprints(for section: MediaDescription) throws(SDPError) -> [Fingerprint] {
        let local = try section.fingerprints()
        if !local.isEmpty { return local }
        return try fingerprints()
    }

    /// DTLS role for a section, media level over session level.
    public func setup(for section: MediaDescription) throws(SDPError) -> DTLSSetup? {
        if let local = try section.setup() { return local }
        return try setup()
    }

    /// Header extensions for a section: media level plus session-level lines (RFC 8285 §8).
    public func headerExtensions(for section: MediaDescription) throws(SDPError) -> [HeaderExtension] {
        try headerExtensions() + section.headerExtensions()
    }

    /// Checks every typed attribute the SFU reads, so a bad line is reported with its number
    /// up front instead of at first use.
    public func validateWebRTCAttributes() throws(SDPError) {
        _ = try groups()
        _ = try fingerprints()
        _ = try setup()
        _ = try headerExtensions()
        for section in media {
            _ = try section.msids()
            _ = try section.candidates()
            _ = try section.fingerprints()
            _ = try section.setup()
            _ = try section.payloadFormats()
            _ = try section.ssrcAttributes()
            _ = try section.ssrcGroups()
            _ = try section.rids()
            _ = try section.simulcast()
            _ = try section.headerExtensions()
        }
    }
}
