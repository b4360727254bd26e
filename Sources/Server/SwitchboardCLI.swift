import Auth
import Bench
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Entry point of the `switchboard` executable.
///
/// **Serve hook.** The server runner lives outside this file: set ``serveHandler`` before
/// calling ``main(_:)`` (the executable's `main.swift` does), or call
/// ``run(_:environment:output:now:serve:)`` with the runner directly. The handler receives
/// the fully layered, validated ``ServerConfig`` and returns the process exit status; it is
/// expected to call ``ServerConfig/resolveTokenSecret(createIfMissing:)`` itself.
public enum SwitchboardCLI {
    public static let version = "0.1.0"

    /// Exit status for usage errors.
    public static let usageExitCode: Int32 = 2
    /// Exit status for configuration errors: sysexits.h `EX_CONFIG`; the systemd unit lists it
    /// in `RestartPreventExitStatus` so a broken config does not restart-loop.
    public static let configExitCode: Int32 = 78

    /// Runs the server for `serve`. Set once at startup, before ``main(_:)``.
    public nonisolated(unsafe) static var serveHandler: ((ServerConfig) -> Int32)?

    /// Where the CLI writes; tests capture it.
    public struct Output {
        public var standardOutput: (String) -> Void
        public var standardError: (String) -> Void

        public init(standardOutput: @escaping (String) -> Void, standardError: @escaping (String) -> Void) {
            self.standardOutput = standardOutput
            self.standardError = standardError
        }

        /// Writes to the process's stdout and stderr, each call a whole line.
        public static let process = Output(
            standardOutput: { text in FileHandle.standardOutput.write(Data((text + "\n").utf8)) },
            standardError: { text in FileHandle.standardError.write(Data((text + "\n").utf8)) })
    }

    /// `args` excludes the program name.
    public static func main(_ args: [String]) -> Int32 {
        run(args, environment: ProcessInfo.processInfo.environment, output: .process,
            now: Int64(Date().timeIntervalSince1970), serve: serveHandler)
    }

    /// Parses and executes. `now` is seconds since the Unix epoch (used by `token`).
    public static func run(_ args: [String], environment: [String: String], output: Output, now: Int64,
                           serve: ((ServerConfig) -> Int32)?) -> Int32 {
        let command: CLICommand
        do {
            command = try CLIParser.parse(args)
        } catch {
            output.standardError("switchboard: \(error.description)")
            let named = args.first.flatMap { CLIHelpTopic(rawValue: $0) }.map(\.rawValue)
            if let subcommand = error.subcommand ?? named, subcommand != CLIHelpTopic.general.rawValue {
                output.standardError("Run 'switchboard \(subcommand) --help' for usage.")
            } else {
                output.standardError("Run 'switchboard help' for usage.")
            }
            return usageExitCode
        }

        switch command {
        case .help(let topic):
            output.standardOutput(CLIHelp.text(topic))
            return 0
        case .version:
            output.standardOutput("switchboard \(version)")
            return 0
        case .benchSignaling(let arguments):
            return SignalingBenchmark.main(arguments)
        case .benchIdleFleet(let arguments):
            return IdleFleetChild.main(arguments)
        case .serve(let options):
            let config: ServerConfig
            do {
                config = try ServerConfig.load(
                    configFile: options.configFile ?? environment[ServerConfig.configFileEnvironmentName],
                    environment: environment,
                    overrides: options.overrides.map { ($0.key, $0.value, $0.flag) })
            } catch {
                output.standardError("switchboard: \(error.description)")
                return configExitCode
            }
            guard let serve else {
                output.standardError("switchboard: this build has no server runner linked")
                return 1
            }
            return serve(config)
        case .token(let options):
            return mintToken(options, environment: environment, output: output, now: now)
        }
    }

    static func mintToken(_ options: TokenOptions, environment: [String: String], output: Output, now: Int64) -> Int32 {
        do {
            var config = try ServerConfig.load(
                configFile: options.configFile ?? environment[ServerConfig.configFileEnvironmentName],
                environment: environment)
            if let secretFile = options.secretFile {
                config.token.secret = nil
                config.token.secretFile = secretFile
            }
            let secret = try config.resolveTokenSecret(createIfMissing: false)
            let ttlSeconds = ConfigValues.milliseconds(options.ttl) / 1000
            // Identifiers were validated by the parser; this cannot fail for parsed options.
            let claims = try TokenClaims(account: options.account, device: options.device,
                                         issuedAt: now, expiresAt: now + ttlSeconds)
            output.standardOutput(TokenSigner(secret: secret).mint(claims))
            return 0
        } catch let error as ConfigError {
            output.standardError("switchboard: \(error.description)")
            return configExitCode
        } catch {
            output.standardError("switchboard: \(error)")
            return usageExitCode
        }
    }
}
