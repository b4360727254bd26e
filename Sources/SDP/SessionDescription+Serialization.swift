extension SessionDescription {
    /// The description as SDP text: RFC 8866 §5 line order, CRLF after every line (§5).
    public var serialized: String {
        var out = ""
        func line(_ type: String, _ value: String) {
            out += type + "=" + value + "\r\n"
        }
        line("v", String(version))
        line("o", [origin.username, origin.sessionID, origin.sessionVersion, origin.networkType,
                   origin.addressType, origin.address].joined(separator: " "))
        line("s", sessionName)
        if let information { line("i", information) }
        if let uri { line("u", uri) }
        for email in emails { line("e", email) }
        for phone in phones { line("p", phone) }
        if let connection { line("c", connection.serialized) }
        for bandwidth in bandwidths { line("b", bandwidth.serialized) }
        for timing in timings {
            line("t", "\(timing.start) \(timing.stop)")
            for repeatLine in timing.repeats { line("r", repeatLine) }
        }
        if let timeZones { line("z", timeZones) }
        if let encryptionKey { line("k", encryptionKey) }
        for attribute in attributes { line("a", attribute.description) }
        for section in media {
            var port = String(section.port)
            if let count = section.numberOfPorts { port += "/" + String(count) }
            line("m", ([section.media, port, section.proto] + section.formats).joined(separator: " "))
            if let information = section.information { line("i", information) }
            for connection in section.connections { line("c", connection.serialized) }
            for bandwidth in section.bandwidths { line("b", bandwidth.serialized) }
            if let key = section.encryptionKey { line("k", key) }
            for attribute in section.attributes { line("a", attribute.description) }
        }
        return out
    }
}

extension Connection {
    /// The text after `c=`.
    public var serialized: String { networkType + " " + addressType + " " + address }
}

extension Bandwidth {
    /// The text after `b=`.
    public var serialized: String { type + ":" + String(value) }
}
