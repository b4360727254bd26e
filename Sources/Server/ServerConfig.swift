import Logging

/// Everything the server can be configured with. Every default here is documented (with its
/// reason) in ``ConfigKey/all`` and in `deploy/switchboard.conf`.
///
/// Layering (later wins): built-in defaults → config file (`key = value`) → environment
/// (`SWITCHBOARD_<KEY>`, dots → underscores) → command-line flags. See ``load(configFile:environment:overrides:)``.
public struct ServerConfig: Sendable, Equatable {
    public struct HTTP: Sendable, Equatable {
        /// `0.0.0.0` (all interfaces): clients connect directly by default. Use `127.0.0.1`
        /// behind a reverse proxy on the same host.
        public var host = "0.0.0.0"
        /// 8080: unprivileged, conventional for an app server behind a TLS proxy. 0 = any free port.
        public var port: UInt16 = 8080
        /// Threads that poll the HTTP/WebSocket sockets (SO_REUSEPORT listeners, one GLib
        /// context each); the hub stays on its own loop. 1 = one loop for everything. 2 by
        /// default: with 10,000 idle devices on a 2-core host, 2 shards gave 378–414 complete
        /// setups/s against 315–331 with 1 (the hub thread no longer reads and writes the
        /// sockets), once sends reach each shard as one batch (docs/benchmarks.md, "Batched
        /// sends to shards" and "after the pcache, hubswift and shardsend merges"); 3 on 2
        /// cores cost more CPU per setup and were no faster. On a single core use 1.
        public var shards = 2
    }

    /// SQLite `PRAGMA synchronous` (https://sqlite.org/pragma.html#pragma_synchronous).
    public enum SQLiteSynchronous: String, Sendable, Equatable, CaseIterable {
        /// WAL + NORMAL: durable against application crashes, may lose the last transactions on
        /// power loss; far fewer fsyncs.
        case normal
        /// FULL: fsync at every commit; durable against power loss.
        case full
    }

    public struct Database: Sendable, Equatable {
        public var path = "./data/switchboard.sqlite"
        public var synchronous = SQLiteSynchronous.normal
    }

    public struct Token: Sendable, Equatable {
        /// Inline HS256 secret (base64/base64url of ≥ 32 bytes). Discouraged: prefer the file.
        public var secret: String?
        /// Where the secret lives; created with mode 0600 on first run when absent.
        public var secretFile = "./data/token-secret"
    }

    public struct TURN: Sendable, Equatable {
        /// coturn `static-auth-secret`; nil disables TURN credential issuing.
        public var secret: String?
        /// RFC 7065 URIs handed to clients, e.g. `turn:turn.example.org:3478?transport=udp`.
        public var uris: [String] = []
        /// 3600 s: see ``TURNCredentialIssuer/defaultTTL``.
        public var ttl: Duration = .seconds(3600)
    }

    public struct Push: Sendable, Equatable {
        /// http(s) URL POSTed when a device must be woken; nil disables push.
        public var webhookURL: String?
        /// 5 attempts: with 1 s doubling backoff that spans ~15 s, inside the 60 s ring timeout.
        public var attempts = 5
        /// 1 s first retry delay, doubling each attempt.
        public var backoff: Duration = .seconds(1)
        /// 60 s cap on a single retry delay.
        public var backoffCap: Duration = .seconds(60)
    }

    public struct CallTimeouts: Sendable, Equatable {
        /// 60 s: ring timeout of RingRTC and matrix-js-sdk.
        public var ring: Duration = .seconds(60)
        /// 90 s: an invite outlives ringing by 30 s so late answers get a clean "ended".
        public var inviteLifetime: Duration = .seconds(90)
        /// 30 s from answer to media flowing (ICE + DTLS) before the call fails.
        public var connect: Duration = .seconds(30)
        /// 30 s for a dropped participant to reconnect (ICE restart) before the call ends.
        public var reconnect: Duration = .seconds(30)
        /// 5 s to wait for a delivery acknowledgement before falling back to push.
        public var deliveryGrace: Duration = .seconds(5)
        /// 24 h: ended-call tombstones kept so late or duplicate messages get a definite answer.
        public var tombstoneRetention: Duration = .seconds(24 * 3600)
    }

    public struct Limits: Sendable, Equatable {
        /// 64 KiB: an SDP offer with many codecs and simulcast stays under ~20 KiB.
        public var maxMessageBytes = 64 * 1024
        /// 30: a device with several interfaces and TURN relays rarely gathers more than ~15.
        public var maxCandidatesPerCallAndDevice = 30
        /// 50 commands/s sustained per device, burst 100: far above a real client's rate,
        /// low enough to stop a flood.
        public var commandsPerSecond = 50
        public var commandBurst = 100
        /// 15 s heartbeat, 45 s idle timeout: three missed heartbeats mark a device gone, and
        /// 15 s stays under common NAT/proxy idle timeouts (30–60 s).
        public var heartbeatInterval: Duration = .seconds(15)
        public var idleTimeout: Duration = .seconds(45)
        /// 16 devices per account: phones, tablets, desktops and browsers with headroom.
        public var maxDevicesPerAccount = 16
    }

    /// Development-only authentication shortcuts.
    public struct DevAuth: Sendable, Equatable {
        /// `POST /v1/dev/token` mints a token for any account and device to anyone who asks.
        /// false: it lets anyone be anyone; enable only on a development machine.
        public var devTokens = false
    }

    /// The SFU media plane: ICE-lite, DTLS-SRTP and forwarding on one UDP port.
    public struct Media: Sendable, Equatable {
        /// false: rooms work for membership and ringing, negotiation gets `mediaUnavailable`.
        public var enabled = true
        public var host = "0.0.0.0"
        /// 10000: unprivileged, below Linux's ephemeral range (32768–60999) so it never
        /// collides with outgoing connections; mediasoup's default first RTC port.
        public var port: UInt16 = 10000
        /// The address clients must send to, put in the SDP candidate: set it behind NAT or
        /// in a container ("203.0.113.7" or "203.0.113.7:10000"). Unset = the bound address.
        public var announcedAddress: String?
        /// PEM certificate and key for DTLS; unset = a fresh ECDSA P-256 certificate per start.
        public var certificateFile: String?
        public var keyFile: String?
        /// A member whose ICE consent checks stop for this long is removed (RFC 7675 §5.1:
        /// 30 s; browsers check every ~5 s, so six checks must be lost). Shorter only in tests.
        public var consentTimeout: Duration = .seconds(30)
        /// Media worker threads (`SFUWorkerPool`), each with its own socket on `port`
        /// (SO_REUSEPORT) and its own rooms. nil = one per online CPU.
        public var workers: Int?
    }

    /// Where 1:1 calls' media flows: `client` (the caller picks with `media`, default p2p),
    /// `p2p` or `sfu` (server policy for every call).
    public enum CallMediaPolicy: String, Sendable, Equatable, CaseIterable {
        case client, p2p, sfu
    }

    public var http = HTTP()
    public var media = Media()
    public var callMediaPolicy = CallMediaPolicy.client
    public var auth = DevAuth()
    public var database = Database()
    public var token = Token()
    public var turn = TURN()
    public var push = Push()
    public var calls = CallTimeouts()
    public var limits = Limits()
    /// `info`: one line per connection and call event; `debug` adds per-message lines.
    public var logLevel = LogLevel.info

    public init() {}
}

extension ServerConfig {
    /// A logger at the configured level (JSON lines, stderr by default).
    public func makeLogger(subsystem: String, sink: LogSink = .stderr) -> Logger {
        Logger(subsystem: subsystem, sink: sink, minimumLevel: logLevel)
    }
}
