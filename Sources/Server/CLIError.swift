/// Command-line mistakes. All exit with status 2 (the usage-error convention of BSD
/// sysexits' EX_USAGE predecessors and of most CLIs), with the message on stderr.
public enum CLIError: Error, Equatable, Sendable, CustomStringConvertible {
    case missingSubcommand
    case unknownSubcommand(String)
    case unknownFlag(String, subcommand: String)
    case missingValue(flag: String)
    case invalidValue(flag: String, value: String, reason: String)
    case missingRequiredFlag(String, subcommand: String)
    case duplicateFlag(String)
    case unexpectedArgument(String, subcommand: String)

    /// Stable code for scripts and tests.
    public var code: String {
        switch self {
        case .missingSubcommand: "missing_subcommand"
        case .unknownSubcommand: "unknown_subcommand"
        case .unknownFlag: "unknown_flag"
        case .missingValue: "missing_value"
        case .invalidValue: "invalid_value"
        case .missingRequiredFlag: "missing_required_flag"
        case .duplicateFlag: "duplicate_flag"
        case .unexpectedArgument: "unexpected_argument"
        }
    }

    /// The subcommand whose help to point at, if any.
    public var subcommand: String? {
        switch self {
        case .unknownFlag(_, let subcommand), .missingRequiredFlag(_, let subcommand), .unexpectedArgument(_, let subcommand):
            subcommand
        case .missingSubcommand, .unknownSubcommand, .missingValue, .invalidValue, .duplicateFlag:
            nil
        }
    }

    public var description: String {
        switch self {
        case .missingSubcommand: "no subcommand given"
        case .unknownSubcommand(let name): "unknown subcommand '\(name)'"
        case .unknownFlag(let flag, let subcommand): "unknown flag '\(flag)' for '\(subcommand)'"
        case .missingValue(let flag): "flag \(flag) needs a value"
        case .invalidValue(let flag, let value, let reason): "bad value '\(value)' for \(flag): \(reason)"
        case .missingRequiredFlag(let flag, let subcommand): "'\(subcommand)' requires \(flag)"
        case .duplicateFlag(let flag): "flag \(flag) given more than once"
        case .unexpectedArgument(let argument, let subcommand): "unexpected argument '\(argument)' for '\(subcommand)'"
        }
    }
}
