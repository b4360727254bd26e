import Auth

/// Pure command-line parser: arguments (without the program name) in, ``CLICommand`` or
/// ``CLIError`` out. No I/O, no environment, no clock.
///
/// Flags take their value as the next argument (`--port 8080`) or after `=` (`--port=8080`).
/// A value may not start with `--` (so a forgotten value is reported, not swallowed).
public enum CLIParser {
    public static func parse(_ args: [String]) throws(CLIError) -> CLICommand {
        guard let first = args.first else { throw .missingSubcommand }
        let rest = Array(args.dropFirst())
        switch first {
        case "serve": return try parseServe(rest)
        case "token": return try parseToken(rest)
        case "bench":
            guard let which = rest.first else { return .help(.bench) }
            if isHelp([which]) { return .help(.bench) }
            switch which {
            case "signaling": return .benchSignaling(Array(rest.dropFirst()))
            case "idle-fleet": return .benchIdleFleet(Array(rest.dropFirst()))
            default: throw .unknownSubcommand("bench \(which)")
            }
        case "version", "--version":
            if isHelp(rest) { return .help(.version) }
            if let extra = rest.first { throw .unexpectedArgument(extra, subcommand: "version") }
            return .version
        case "help", "--help", "-h":
            guard let topicName = rest.first else { return .help(.general) }
            if rest.count > 1 { throw .unexpectedArgument(rest[1], subcommand: "help") }
            guard let topic = CLIHelpTopic(rawValue: topicName), topic != .general else { throw .unknownSubcommand(topicName) }
            return .help(topic)
        default:
            throw .unknownSubcommand(first)
        }
    }

    // MARK: serve

    /// Flag → config key. Values are validated by the config key's own parser.
    static let serveFlags: [String: String] = [
        "--host": "http.host",
        "--port": "http.port",
        "--db": "database.path",
        "--log-level": "log.level",
    ]

    static func parseServe(_ args: [String]) throws(CLIError) -> CLICommand {
        if isHelp(args) { return .help(.serve) }
        var options = ServeOptions()
        var scratch = ServerConfig()
        for (flag, value) in try flagPairs(args, subcommand: "serve", known: Set(serveFlags.keys).union(["--config"])) {
            if flag == "--config" {
                guard !value.isEmpty else { throw .invalidValue(flag: flag, value: value, reason: "expected a file path") }
                options.configFile = value
                continue
            }
            guard let key = serveFlags[flag] else { throw .unknownFlag(flag, subcommand: "serve") }
            do {
                try scratch.set(key, value, source: .commandLine(flag))
            } catch {
                if case .invalidValue(_, _, let reason, _) = error {
                    throw .invalidValue(flag: flag, value: value, reason: reason)
                }
                throw .invalidValue(flag: flag, value: value, reason: error.description)
            }
            options.overrides.append(CLIOverride(key: key, value: value, flag: flag))
        }
        return .serve(options)
    }

    // MARK: token

    static func parseToken(_ args: [String]) throws(CLIError) -> CLICommand {
        if isHelp(args) { return .help(.token) }
        var account: String?
        var device: String?
        var ttl = TokenOptions.defaultTTL
        var secretFile: String?
        var configFile: String?
        let known: Set<String> = ["--account", "--device", "--ttl", "--secret-file", "--config"]
        for (flag, value) in try flagPairs(args, subcommand: "token", known: known) {
            switch flag {
            case "--account", "--device":
                guard Identifier.isValid(value) else {
                    throw .invalidValue(flag: flag, value: value, reason: "expected 1-\(Identifier.maximumLength) characters of A-Z a-z 0-9 . _ -")
                }
                if flag == "--account" { account = value } else { device = value }
            case "--ttl":
                do {
                    ttl = try ConfigValues.duration(value)
                } catch {
                    throw .invalidValue(flag: flag, value: value, reason: error.reason)
                }
                guard ttl > .zero, ttl <= TokenOptions.maximumTTL else {
                    throw .invalidValue(flag: flag, value: value, reason: "must be greater than zero and at most 366d")
                }
            case "--secret-file", "--config":
                guard !value.isEmpty else { throw .invalidValue(flag: flag, value: value, reason: "expected a file path") }
                if flag == "--config" { configFile = value } else { secretFile = value }
            default:
                throw .unknownFlag(flag, subcommand: "token")
            }
        }
        guard let account else { throw .missingRequiredFlag("--account", subcommand: "token") }
        guard let device else { throw .missingRequiredFlag("--device", subcommand: "token") }
        return .token(TokenOptions(account: account, device: device, ttl: ttl, secretFile: secretFile, configFile: configFile))
    }

    // MARK: Shared

    static func isHelp(_ args: [String]) -> Bool {
        args.contains("--help") || args.contains("-h")
    }

    /// Splits `args` into (flag, value) pairs in order; every flag takes a value.
    static func flagPairs(_ args: [String], subcommand: String, known: Set<String>) throws(CLIError) -> [(String, String)] {
        var pairs: [(String, String)] = []
        var seen = Set<String>()
        var index = 0
        while index < args.count {
            let argument = args[index]
            guard argument.hasPrefix("--"), argument.count > 2 else {
                throw .unexpectedArgument(argument, subcommand: subcommand)
            }
            let flag: String
            let value: String
            if let equals = argument.firstIndex(of: "=") {
                flag = String(argument[..<equals])
                value = String(argument[argument.index(after: equals)...])
                guard known.contains(flag) else { throw .unknownFlag(flag, subcommand: subcommand) }
                index += 1
            } else {
                flag = argument
                guard known.contains(flag) else { throw .unknownFlag(flag, subcommand: subcommand) }
                guard index + 1 < args.count, !args[index + 1].hasPrefix("--") else { throw .missingValue(flag: flag) }
                value = args[index + 1]
                index += 2
            }
            guard seen.insert(flag).inserted else { throw .duplicateFlag(flag) }
            pairs.append((flag, value))
        }
        return pairs
    }
}
