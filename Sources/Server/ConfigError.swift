/// Where a configuration value came from, for error messages.
public enum ConfigSource: Sendable, Equatable, CustomStringConvertible {
    case file(path: String, line: Int)
    case environment(String)
    case commandLine(String)

    public var description: String {
        switch self {
        case .file(let path, let line): "\(path):\(line)"
        case .environment(let name): "environment variable \(name)"
        case .commandLine(let flag): "command-line flag \(flag)"
        }
    }
}

/// Configuration problems. Messages never echo values of secret keys.
public enum ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The config file could not be read.
    case unreadableFile(path: String, reason: String)
    /// A line that is neither blank, a `#` comment, nor `key = value`.
    case syntax(ConfigSource)
    case unknownKey(String, ConfigSource)
    /// The same key twice in one file (almost always an editing mistake).
    case duplicateKey(String, ConfigSource)
    /// `value` is `[redacted]` for secret keys.
    case invalidValue(key: String, value: String, reason: String, ConfigSource)
    /// Individually valid values that contradict each other.
    case inconsistent(String)
    /// The token secret could not be read, created or used.
    case tokenSecret(path: String, reason: String)

    public var description: String {
        switch self {
        case .unreadableFile(let path, let reason): "cannot read config file \(path): \(reason)"
        case .syntax(let source): "\(source): expected 'key = value' or a '#' comment"
        case .unknownKey(let key, let source): "\(source): unknown key '\(key)'"
        case .duplicateKey(let key, let source): "\(source): key '\(key)' is set twice"
        case .invalidValue(let key, let value, let reason, let source): "\(source): bad value '\(value)' for \(key): \(reason)"
        case .inconsistent(let reason): "inconsistent configuration: \(reason)"
        case .tokenSecret(let path, let reason): "token secret \(path): \(reason)"
        }
    }
}
