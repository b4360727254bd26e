/// Printing a configuration (string interpolation, `print`, `dump`, debugger) never shows
/// secrets: descriptions go through ``ConfigKey/renderedValue(_:)`` and the secret-holding
/// parts hide their fields from reflection.
extension ServerConfig: CustomStringConvertible, CustomDebugStringConvertible {
    /// One `key = value` per line, in config-file syntax, secrets shown as `[redacted]`.
    public var description: String {
        ConfigKey.all.map { "\($0.name) = \($0.renderedValue(self))" }.joined(separator: "\n")
    }

    public var debugDescription: String { description }
}

extension ServerConfig.Token: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String {
        "Token(secret: \(secret == nil ? "nil" : "[redacted]"), secretFile: \(secretFile))"
    }

    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }
}

extension ServerConfig.TURN: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String {
        "TURN(secret: \(secret == nil ? "nil" : "[redacted]"), uris: \(uris), ttl: \(ConfigValues.render(ttl)))"
    }

    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }
}
