/// Flags of the hidden `switchboard bench idle-fleet` subcommand: one child process of
/// `bench signaling --idle-processes K` (``IdleChildProcess`` builds this command line).
/// The token secret is not a flag: it arrives as the first line of stdin (base64url), so it
/// never shows in `ps` or /proc/<pid>/cmdline.
public struct IdleFleetChildOptions: Equatable, Sendable {
    public var url = ""
    /// Devices this child holds.
    public var count = 0
    /// Index of this child's first device: accounts are `bench-i-<offset + k>`, unique
    /// across children and equal to the in-process fleet's names.
    public var offset = 0
    /// New connections per second from this child.
    public var connectRate = 500
    /// Handshakes in flight from this child (the parent splits the server's listen backlog).
    public var maxInFlight = ConnectThrottle.defaultMaxInFlight

    public init() {}

    public static let usage = """
    usage: switchboard bench idle-fleet --url URL --count N --offset M [--connect-rate R] [--in-flight F]
    (internal: started by `bench signaling --idle-processes K`; reads the token secret from
    the first line of stdin, exits when stdin closes; progress as JSON lines on stdout)
    """

    /// Parses `--flag value` / `--flag=value`. Pure.
    public static func parse(_ args: [String]) throws(BenchmarkOptionsError) -> IdleFleetChildOptions {
        var options = IdleFleetChildOptions()
        var seen: Set<String> = []
        var index = 0
        while index < args.count {
            var flag = args[index]
            var inline: String?
            if flag.hasPrefix("--"), let eq = flag.firstIndex(of: "=") {
                inline = String(flag[flag.index(after: eq)...])
                flag = String(flag[..<eq])
            }
            index += 1
            func value() throws(BenchmarkOptionsError) -> String {
                if let inline { return inline }
                guard index < args.count else { throw .missingValue(flag) }
                defer { index += 1 }
                return args[index]
            }
            func integer(_ range: ClosedRange<Int>) throws(BenchmarkOptionsError) -> Int {
                let text = try value()
                guard let n = Int(text), range.contains(n) else {
                    throw .invalidValue(flag: flag, value: text, expected: "an integer in \(range.lowerBound)...\(range.upperBound)")
                }
                return n
            }
            switch flag {
            case "--url":
                let text = try value()
                guard text.hasPrefix("ws://") || text.hasPrefix("wss://"), text.count > 6 else {
                    throw .invalidValue(flag: flag, value: text, expected: "a ws:// or wss:// URL")
                }
                options.url = text
            case "--count": options.count = try integer(1 ... BenchmarkOptions.maxIdle)
            case "--offset": options.offset = try integer(0 ... BenchmarkOptions.maxIdle)
            case "--connect-rate": options.connectRate = try integer(1 ... 100_000)
            case "--in-flight": options.maxInFlight = try integer(1 ... 64)
            default: throw .unknownFlag(flag)
            }
            seen.insert(flag)
        }
        for required in ["--url", "--count", "--offset"] where !seen.contains(required) {
            throw .missingValue(required)
        }
        return options
    }
}
