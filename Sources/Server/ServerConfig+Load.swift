import Foundation

extension ServerConfig {
    /// Environment variable naming the config file when `--config` is not given.
    public static let configFileEnvironmentName = "SWITCHBOARD_CONFIG"

    /// Builds a configuration: defaults, then `configFile` (if any), then `SWITCHBOARD_*`
    /// variables from `environment`, then `overrides` (config key → value, from command-line
    /// flags, each tagged with the flag that set it), then cross-field validation.
    /// Unknown `SWITCHBOARD_*` variables are errors (they are almost always typos), except
    /// `SWITCHBOARD_CONFIG`.
    public static func load(configFile: String?, environment: [String: String],
                            overrides: [(key: String, value: String, flag: String)] = []) throws(ConfigError) -> ServerConfig {
        var config = ServerConfig()
        if let configFile {
            let text: String
            do {
                text = try String(contentsOfFile: configFile, encoding: .utf8)
            } catch let error {
                throw .unreadableFile(path: configFile, reason: Self.describe(error))
            }
            try config.apply(fileText: text, path: configFile)
        }
        try config.apply(environment: environment)
        for override in overrides {
            try config.set(override.key, override.value, source: .commandLine(override.flag))
        }
        try config.validate()
        return config
    }

    /// Applies a `key = value` file. Blank lines and lines whose first non-blank character is
    /// `#` are ignored; there are no inline comments (a `#` may be part of a value). Values are
    /// trimmed of surrounding blanks. A key may appear once.
    public mutating func apply(fileText: String, path: String) throws(ConfigError) {
        var seen = Set<String>()
        var lineNumber = 0
        for rawLine in fileText.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            let line = ConfigValues.trim(String(rawLine))
            if line.isEmpty || line.hasPrefix("#") { continue }
            let source = ConfigSource.file(path: path, line: lineNumber)
            guard let equals = line.firstIndex(of: "=") else { throw .syntax(source) }
            let key = ConfigValues.trim(String(line[..<equals]))
            let value = ConfigValues.trim(String(line[line.index(after: equals)...]))
            guard !key.isEmpty else { throw .syntax(source) }
            guard seen.insert(key).inserted else { throw .duplicateKey(key, source) }
            try set(key, value, source: source)
        }
    }

    /// Applies `SWITCHBOARD_*` variables.
    public mutating func apply(environment: [String: String]) throws(ConfigError) {
        let byName = Dictionary(uniqueKeysWithValues: ConfigKey.all.map { ($0.environmentName, $0) })
        for name in environment.keys.sorted() where name.hasPrefix("SWITCHBOARD_") && name != Self.configFileEnvironmentName {
            guard let key = byName[name] else { throw .unknownKey(name, .environment(name)) }
            try set(key.name, ConfigValues.trim(environment[name] ?? ""), source: .environment(name))
        }
    }

    /// Sets one key from its textual value.
    public mutating func set(_ keyName: String, _ value: String, source: ConfigSource) throws(ConfigError) {
        guard let key = ConfigKey.named(keyName) else { throw .unknownKey(keyName, source) }
        do {
            try key.apply(&self, value)
        } catch {
            throw .invalidValue(key: keyName, value: key.isSecret ? "[redacted]" : value, reason: error.reason, source)
        }
    }

    /// Cross-field rules.
    public func validate() throws(ConfigError) {
        if calls.inviteLifetime < calls.ring {
            throw .inconsistent("call.invite_lifetime must be >= call.ring_timeout (an invite must outlive its ringing)")
        }
        if limits.idleTimeout <= limits.heartbeatInterval {
            throw .inconsistent("limits.idle_timeout must exceed limits.heartbeat_interval (else healthy devices are dropped between heartbeats)")
        }
        if push.backoffCap < push.backoff {
            throw .inconsistent("push.backoff_cap must be >= push.backoff")
        }
        if (media.certificateFile == nil) != (media.keyFile == nil) {
            throw .inconsistent("media.certificate_file and media.key_file go together")
        }
        if callMediaPolicy == .sfu, !media.enabled {
            throw .inconsistent("call.media_policy = sfu needs media.enabled = true")
        }
        if turn.secret != nil, turn.uris.isEmpty {
            throw .inconsistent("turn.secret is set but turn.uris is empty (credentials would be useless)")
        }
    }

    static func describe(_ error: Error) -> String {
        let nsError = error as NSError
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(underlying.code)))
        }
        if nsError.domain == NSCocoaErrorDomain, nsError.code == NSFileReadNoSuchFileError { return "no such file" }
        if nsError.domain == NSCocoaErrorDomain, nsError.code == NSFileReadNoPermissionError { return "permission denied" }
        return nsError.localizedDescription
    }
}
