import Foundation

/// Flags of `switchboard bench signaling` (see ``SignalingBenchmark``).
public struct BenchmarkOptions: Equatable, Sendable {
    /// WebSocket URL of the server's IM channel (docs/protocol.md §1).
    public var url = "ws://127.0.0.1:8080/v1/ws"
    /// File with the server's token secret (base64/base64url text, as `serve` creates it).
    public var secretFile: String?
    /// The token secret inline (base64url or base64).
    public var secret: String?
    /// Idle devices held connected during the run. 10,000: the target load.
    public var idle = 10_000
    /// Caller/callee pairs driving call setups in a closed loop (or at `--rate`). 200:
    /// enough outstanding work to keep a single-threaded server busy without client-side
    /// queueing dominating.
    public var pairs = 200
    /// Pairs per event loop (thread) of the benchmark process (``PairLoops``); nil = the
    /// client's default, ``defaultPairsPerLoop(client:)``.
    public var pairsPerLoop: Int?
    /// The loops the pairs run on: `--pairs-per-loop`, else the client's default.
    public var effectivePairsPerLoop: Int { pairsPerLoop ?? Self.defaultPairsPerLoop(client: client) }

    /// 256 for the lean client, so that the default 200 pairs share one loop (a run with
    /// thousands of pairs still gets several). The lean loop's wake-up costs O(ready
    /// sockets), so more pairs per loop only means fewer threads to wake and more frames
    /// handled per wake-up. History: 4 per loop, then 32 from 2026-11-30 20:10 (at 115
    /// pairs, 29 loops spent a fifth of the benchmark's samples in `finish_task_switch`;
    /// 32 per loop cut its CPU per setup by 22–30 %, docs/benchmarks.md "Fewer pair
    /// loops"), then 256: one loop instead of 7 cut it by another 22–29 % at 1,000
    /// setups/s, with the relay p99 at 200 setups/s no higher (section "One pair loop").
    /// 4 for libsoup's client, whose every iteration scans all of its loop's sockets
    /// (section "Benchmark CPU per setup").
    public static func defaultPairsPerLoop(client: PairClient) -> Int {
        switch client {
        case .lean: return 256
        case .soup: return 4
        }
    }
    /// The call pairs' WebSocket client (``PairClient``). Lean: the load generator should
    /// spend the host's CPU as little as it can (docs/benchmarks.md, "Lean pair client").
    public var client = PairClient.lean
    /// The idle devices' WebSocket client, in the child processes (`--idle-client`). Lean
    /// for the same reason: with libsoup each child's once-a-second wake-up ran 4–5 ms
    /// (GLib looks at every one of its 1,250 sockets), two or three children at once held
    /// both of this host's cores, and the server's threads waited for a CPU behind them
    /// (`perf sched`: up to 13 ms); real idle devices are not on the server's CPUs at all.
    /// The in-process fleet (`--idle-processes 0`) stays on libsoup.
    public var idleClient = PairClient.lean
    /// Devices per callee account (all ring, one answers). 3: phone + tablet + desktop.
    public var calleeDevices = 3
    /// Every pair starts its setups at the same moment, at exact intervals (``SetupPacing``):
    /// synchronized callers, a worst case. Off: each pair at a random phase, with gaps
    /// jittered around the interval, as independent callers are.
    public var alignedSetups = false
    /// Setups per second offered over all pairs (`--rate`): each pair starts one setup per
    /// `pairs / rate` seconds on average (``SetupPacing/intervalMs(pairs:offeredRate:minimumMs:)``),
    /// so the latencies are those at that rate, not at the rate the closed loop reaches. nil:
    /// every pair as fast as the server's command limit lets it (112 ms per setup at 50/s).
    public var offeredRate: Double?
    /// Measured seconds of call setups.
    public var durationSeconds = 20.0
    /// Seconds of setups before measuring starts (caches, SQLite page cache, allocator).
    public var warmupSeconds = 2.0
    /// New idle connections per second. 2,000/s: fast enough for 10k in seconds, slow
    /// enough that the server's accept backlog (libsoup default 10 on GSocketListener … our
    /// kernel somaxconn) does not overflow into SYN retries of 1 s.
    public var connectRate = 2_000
    /// Process whose VmRSS is read before/after the idle connections; nil = find the
    /// process listening on the URL's port.
    public var serverPID: Int32?
    /// Machine-readable report on stdout.
    public var json = false
    /// Per-setup watchdog: a setup not complete after this long counts as an error.
    /// 10 s: far above any healthy latency; below the server's 30 s connect timeout.
    public var setupTimeoutSeconds = 10.0
    /// Child processes holding the idle devices; 0 = all in this process (one GLib
    /// context iterating every idle socket, the behaviour before this flag); nil = the
    /// default, ``defaultIdleProcesses(idle:)``.
    public var idleProcesses: Int?
    /// The binary the idle children run (`bench idle-fleet`); nil = this process's own
    /// executable. Not a flag: tests point it at the built `switchboard`.
    public var idleChildExecutable: String?

    public init() {}

    /// 1,250 idle devices per child, 8 for the 10,000: each child's client loop
    /// iterates all of its sockets on every wake-up (libsoup 3.2 gives no way around that,
    /// docs/benchmarks.md), so the children's total CPU falls roughly with the square of
    /// their count. Measured at 10,000 on this 2-core host: 4 children connected in 122–135 s
    /// and used 0.33–0.55 cores while idle; 8 children connected in 91 s and used 0.24 cores
    /// (docs/benchmarks.md, "Idle fleet in child processes"). More children would go below
    /// one handshake in flight each (the fleet's 8 are split over them).
    public static let idlePerProcess = 1_250
    /// 64: far above what 60,000 idle devices need at the default share.
    public static let maxIdleProcesses = 64

    public static func defaultIdleProcesses(idle: Int) -> Int {
        idle == 0 ? 0 : (idle + idlePerProcess - 1) / idlePerProcess
    }

    /// The child count this run uses (0 = in-process).
    public var resolvedIdleProcesses: Int {
        idle == 0 ? 0 : min(idleProcesses ?? Self.defaultIdleProcesses(idle: idle), idle)
    }

    /// Upper bounds that keep the run bounded (fd hard limit here is 20,000 per process).
    public static let maxIdle = 60_000
    public static let maxPairs = 5_000
    /// 100,000 setups/s: far above what one host serves; a typo, not a load, beyond it.
    public static let maxOfferedRate = 100_000.0
    /// 16: the server's default `limits.max_devices_per_account`.
    public static let maxCalleeDevices = 16
    public static let maxDurationSeconds = 3_600.0
}

/// A benchmark WebSocket client: the call pairs' (`--client`) and the idle children's
/// (`--idle-client`).
public enum PairClient: String, Equatable, Sendable, CaseIterable {
    /// Sources/IO `WebSocketClient` on the loop's `SoupSession` (GIO streams, GObject signals).
    case soup
    /// ``LeanWebSocket``: non-blocking sockets on one epoll set per pair loop, RFC 6455
    /// client framing in the benchmark (never in the server).
    case lean
}

/// Why the flags were refused (exit status 2).
public enum BenchmarkOptionsError: Error, Equatable, CustomStringConvertible {
    case unknownFlag(String)
    case missingValue(String)
    case invalidValue(flag: String, value: String, expected: String)
    case conflicting(String)

    public var description: String {
        switch self {
        case .unknownFlag(let flag): return "unknown flag \(flag) (see --help)"
        case .missingValue(let flag): return "\(flag) needs a value"
        case .invalidValue(let flag, let value, let expected): return "\(flag) \(value): expected \(expected)"
        case .conflicting(let message): return message
        }
    }
}

/// What the command line asks for.
public enum BenchmarkCommand: Equatable, Sendable {
    case run(BenchmarkOptions)
    case help
}

extension BenchmarkOptions {
    public static let usage = """
    usage: switchboard bench signaling [flags]

    Drives a running Switchboard server over its IM channel (docs/protocol.md): holds idle
    devices connected and runs complete call setups in a closed loop (or at --rate), then
    prints figures.

      --url URL              WebSocket URL (default ws://127.0.0.1:8080/v1/ws)
      --secret-file PATH     file with the server's token secret (e.g. ./data/token-secret)
      --secret TEXT          the token secret inline (base64url or base64)
      --idle N               idle connected devices (default 10000)
      --pairs N              concurrent caller/callee pairs (default 200)
      --callee-devices N     devices per callee account, 1-16 (default 3)
      --pairs-per-loop N     pairs per event loop (thread) of this process (default 256;
                             4 with --client soup)
      --client soup|lean     the pairs' WebSocket client: lean = epoll + RFC 6455 framing in
                             the benchmark, soup = libsoup's client (default lean)
      --idle-client soup|lean  the idle devices' client in the child processes (default lean)
      --aligned-setups       every pair starts its setups at once, at exact intervals
                             (synchronized callers; default: random phases, jittered gaps)
      --rate N               setups/s offered over all pairs, 0.1-100000: each pair starts
                             one per pairs/N s (default: each pair as often as the server's
                             command limit allows, one per 112 ms at 50 commands/s)
      --duration SECONDS     measured time (default 20)
      --warmup SECONDS       unmeasured setups first (default 2)
      --connect-rate N       idle connections opened per second (default 2000)
      --idle-processes K     child processes holding the idle devices, 0-64; 0 = all in
                             this process on one event loop (default: one per 1250 idle,
                             8 for 10000; each child is `switchboard bench idle-fleet`)
      --setup-timeout SECONDS  a setup slower than this is an error (default 10)
      --server-pid PID       process whose VmRSS is reported (default: the listener of the port)
      --json                 machine-readable report
      --help                 this text
    """

    /// Parses flags (`--flag value` or `--flag=value`). Pure: reads no files.
    public static func parse(_ args: [String]) throws(BenchmarkOptionsError) -> BenchmarkCommand {
        var options = BenchmarkOptions()
        var reader = FlagReader(args)
        while reader.next() {
            let flag = reader.flag
            switch flag {
            case "--help", "-h":
                return .help
            case "--url":
                options.url = try reader.webSocketURL()
            case "--secret-file":
                let text = try reader.value()
                guard !text.isEmpty else { throw .invalidValue(flag: flag, value: text, expected: "a path") }
                options.secretFile = text
            case "--secret":
                let text = try reader.value()
                guard !text.isEmpty else { throw .invalidValue(flag: flag, value: "(empty)", expected: "base64url text") }
                options.secret = text
            case "--idle": options.idle = try reader.integer(0 ... maxIdle)
            case "--pairs": options.pairs = try reader.integer(0 ... maxPairs)
            case "--callee-devices": options.calleeDevices = try reader.integer(1 ... maxCalleeDevices)
            case "--pairs-per-loop": options.pairsPerLoop = try reader.integer(1 ... maxPairs)
            case "--client": options.client = try reader.client()
            case "--idle-client": options.idleClient = try reader.client()
            case "--duration": options.durationSeconds = try reader.seconds(0.1 ... maxDurationSeconds)
            case "--warmup": options.warmupSeconds = try reader.seconds(0 ... maxDurationSeconds)
            case "--connect-rate": options.connectRate = try reader.integer(1 ... 100_000)
            case "--idle-processes": options.idleProcesses = try reader.integer(0 ... maxIdleProcesses)
            case "--rate": options.offeredRate = try reader.rate(0.1 ... maxOfferedRate)
            case "--setup-timeout": options.setupTimeoutSeconds = try reader.seconds(0.1 ... 600)
            case "--server-pid": options.serverPID = Int32(try reader.integer(1 ... Int(Int32.max)))
            case "--json":
                if let inline = reader.inline { throw .invalidValue(flag: flag, value: inline, expected: "no value") }
                options.json = true
            case "--aligned-setups":
                if let inline = reader.inline { throw .invalidValue(flag: flag, value: inline, expected: "no value") }
                options.alignedSetups = true
            default:
                throw .unknownFlag(flag)
            }
        }
        if options.secret != nil && options.secretFile != nil {
            throw .conflicting("give either --secret or --secret-file, not both")
        }
        if options.secret == nil && options.secretFile == nil {
            throw .conflicting("the server's token secret is needed: --secret-file PATH or --secret TEXT")
        }
        return .run(options)
    }
}
