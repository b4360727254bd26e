/// Types holding key material print and reflect without it, so `print(signer)`, `dump` or a
/// debugger never reveal secrets.
extension TokenSigner: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "TokenSigner(secret: [redacted])" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}

extension TURNCredentialIssuer: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "TURNCredentialIssuer(secret: [redacted], ttl: \(ttl), uris: \(uris))" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["ttl": ttl, "uris": uris]) }
}
