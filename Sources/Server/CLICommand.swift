/// A parsed command line. Produced by ``CLIParser/parse(_:)``; executed by ``SwitchboardCLI``.
public enum CLICommand: Equatable, Sendable {
    case serve(ServeOptions)
    case token(TokenOptions)
    case version
    case help(CLIHelpTopic)
    /// `bench signaling …`: the arguments after the benchmark's name, parsed by the benchmark.
    case benchSignaling([String])
    /// `bench idle-fleet …` (hidden): one child of `bench signaling --idle-processes K`.
    case benchIdleFleet([String])
}

/// Help pages: `switchboard help [topic]` or `<subcommand> --help`.
public enum CLIHelpTopic: String, Equatable, Sendable, CaseIterable {
    case general, serve, token, bench, version
}

/// A config key set by a command-line flag (the highest-precedence layer).
public struct CLIOverride: Equatable, Sendable {
    public var key: String
    public var value: String
    public var flag: String

    public init(key: String, value: String, flag: String) {
        self.key = key
        self.value = value
        self.flag = flag
    }
}

/// `switchboard serve` options. Values were validated at parse time against the same rules
/// as the config file.
public struct ServeOptions: Equatable, Sendable {
    /// `--config FILE`; nil = `SWITCHBOARD_CONFIG` or no file.
    public var configFile: String?
    /// `--host`, `--port`, `--db`, `--log-level`, in command-line order.
    public var overrides: [CLIOverride]

    public init(configFile: String? = nil, overrides: [CLIOverride] = []) {
        self.configFile = configFile
        self.overrides = overrides
    }
}

/// `switchboard token` options.
public struct TokenOptions: Equatable, Sendable {
    /// 24 h: a day-long development/test token; production clients get tokens from the server.
    public static let defaultTTL: Duration = .seconds(24 * 3600)
    /// 366 d: anything longer is a permanent credential in disguise.
    public static let maximumTTL: Duration = .seconds(366 * 86_400)

    public var account: String
    public var device: String
    public var ttl: Duration
    /// `--secret-file FILE`; nil = the configuration's token secret.
    public var secretFile: String?
    public var configFile: String?

    public init(account: String, device: String, ttl: Duration = TokenOptions.defaultTTL, secretFile: String? = nil, configFile: String? = nil) {
        self.account = account
        self.device = device
        self.ttl = ttl
        self.secretFile = secretFile
        self.configFile = configFile
    }
}
