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
    /// The devices' WebSocket client (``BenchmarkOptions/idleClient``).
    public var client = PairClient.lean

    public init() {}

    public static let usage = """
    usage: switchboard bench idle-fleet --url URL --count N --offset M [--connect-rate R] [--in-flight F]
                                        [--client soup|lean]
    (internal: started by `bench signaling --idle-processes K`; reads the token secret from
    the first line of stdin, exits when stdin closes; progress as JSON lines on stdout)
    """

    /// Parses `--flag value` / `--flag=value`. Pure.
    public static func parse(_ args: [String]) throws(BenchmarkOptionsError) -> IdleFleetChildOptions {
        var options = IdleFleetChildOptions()
        var seen: Set<String> = []
        var reader = FlagReader(args)
        while reader.next() {
            switch reader.flag {
            case "--url": options.url = try reader.webSocketURL()
            case "--count": options.count = try reader.integer(1 ... BenchmarkOptions.maxIdle)
            case "--offset": options.offset = try reader.integer(0 ... BenchmarkOptions.maxIdle)
            case "--connect-rate": options.connectRate = try reader.integer(1 ... 100_000)
            case "--in-flight": options.maxInFlight = try reader.integer(1 ... 64)
            case "--client": options.client = try reader.client()
            default: throw .unknownFlag(reader.flag)
            }
            seen.insert(reader.flag)
        }
        for required in ["--url", "--count", "--offset"] where !seen.contains(required) {
            throw .missingValue(required)
        }
        return options
    }
}
