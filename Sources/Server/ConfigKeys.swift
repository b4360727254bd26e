import Logging

/// One configuration key: its name, meaning, how to parse it and how to render its value.
/// ``all`` is the single source of truth for the file parser, the environment mapping and
/// the documented sample (`deploy/switchboard.conf`, checked by a test).
public struct ConfigKey {
    /// Dotted name used in the config file, e.g. `http.port`.
    public let name: String
    /// What it means and why the default is what it is.
    public let summary: String
    /// Values of secret keys never appear in errors or the sample.
    public let isSecret: Bool
    let apply: (inout ServerConfig, String) throws(ConfigValueProblem) -> Void
    let render: (ServerConfig) -> String

    /// `SWITCHBOARD_` + name uppercased with dots replaced by underscores.
    public var environmentName: String {
        "SWITCHBOARD_" + name.uppercased().replacingOccurrences(of: ".", with: "_")
    }

    /// The value `config` has for this key, in config-file syntax ("" when unset; secrets
    /// render as `[redacted]` when set).
    public func renderedValue(_ config: ServerConfig) -> String {
        let value = render(config)
        return isSecret && !value.isEmpty ? "[redacted]" : value
    }

    public static func named(_ name: String) -> ConfigKey? { all.first { $0.name == name } }

    // MARK: Builders

    private static func duration(_ name: String, _ path: WritableKeyPath<ServerConfig, Duration>, allowZero: Bool = false,
                                 max: Duration = .seconds(30 * 86_400), _ summary: String) -> ConfigKey {
        ConfigKey(name: name, summary: summary, isSecret: false, apply: { (config: inout ServerConfig, text: String) throws(ConfigValueProblem) in
            let value = try ConfigValues.duration(text)
            if !allowZero, value == .zero { throw ConfigValueProblem(reason: "must be greater than zero") }
            if value > max { throw ConfigValueProblem(reason: "must be at most \(ConfigValues.render(max))") }
            config[keyPath: path] = value
        }, render: { ConfigValues.render($0[keyPath: path]) })
    }

    private static func integer(_ name: String, _ path: WritableKeyPath<ServerConfig, Int>, _ range: ClosedRange<Int>, _ summary: String) -> ConfigKey {
        ConfigKey(name: name, summary: summary, isSecret: false, apply: { (config: inout ServerConfig, text: String) throws(ConfigValueProblem) in
            config[keyPath: path] = try ConfigValues.integer(text, in: range)
        }, render: { String($0[keyPath: path]) })
    }

    private static func optionalSecret(_ name: String, _ path: WritableKeyPath<ServerConfig, String?>, _ summary: String) -> ConfigKey {
        ConfigKey(name: name, summary: summary, isSecret: true, apply: { (config: inout ServerConfig, text: String) throws(ConfigValueProblem) in
            config[keyPath: path] = text.isEmpty ? nil : text
        }, render: { $0[keyPath: path] ?? "" })
    }

    private static func path(_ name: String, _ path: WritableKeyPath<ServerConfig, String>, _ summary: String) -> ConfigKey {
        ConfigKey(name: name, summary: summary, isSecret: false, apply: { (config: inout ServerConfig, text: String) throws(ConfigValueProblem) in
            guard !text.isEmpty, !text.contains("\0") else { throw ConfigValueProblem(reason: "expected a file path") }
            config[keyPath: path] = text
        }, render: { $0[keyPath: path] })
    }

    // MARK: The table

    public static let all: [ConfigKey] = [
        ConfigKey(name: "http.host", summary: "Address the HTTP/WebSocket listener binds. 0.0.0.0 = all interfaces (clients connect directly); use 127.0.0.1 behind a local reverse proxy.",
                  isSecret: false, apply: { (config: inout ServerConfig, text: String) throws(ConfigValueProblem) in
                      guard !text.isEmpty, !ConfigValues.hasWhitespaceOrControl(text), !text.contains("/") else {
                          throw ConfigValueProblem(reason: "expected an IP address or host name")
                      }
                      config.http.host = text
                  }, render: { $0.http.host }),
        ConfigKey(name: "http.port", summary: "TCP port of the HTTP/WebSocket listener. 8080: unprivileged; put a TLS proxy in front. 0 = any free port. A port where any process listens makes serve exit (its shards' SO_REUSEPORT never joins another server).",
                  isSecret: false, apply: { (config: inout ServerConfig, text: String) throws(ConfigValueProblem) in
                      config.http.port = UInt16(try ConfigValues.integer(text, in: 0 ... 65535))
                  }, render: { String($0.http.port) }),
        path("database.path", \.database.path, "SQLite database file; its directory must exist and be writable (WAL files live next to it)."),
        ConfigKey(name: "database.synchronous", summary: "SQLite PRAGMA synchronous: normal (WAL; may lose the last commits on power loss, far fewer fsyncs) or full (fsync every commit).",
                  isSecret: false, apply: { (config: inout ServerConfig, text: String) throws(ConfigValueProblem) in
                      guard let value = ServerConfig.SQLiteSynchronous(rawValue: text.lowercased()) else {
                          throw ConfigValueProblem(reason: "expected normal or full")
                      }
                      config.database.synchronous = value
                  }, render: { $0.database.synchronous.rawValue }),
        optionalSecret("token.secret", \.token.secret, "Inline access-token (HS256) secret: base64 or base64url of at least 32 random bytes. Unset = use token.secret_file (preferred: keeps the secret out of this file)."),
        path("token.secret_file", \.token.secretFile, "File holding the access-token secret (base64url text). Created with mode 0600 and 32 random bytes on first run if missing; must not be readable by other users."),
        ConfigKey(name: "auth.dev_tokens", summary: "DEVELOPMENT ONLY, NEVER IN PRODUCTION: true enables POST /v1/dev/token, which hands a valid 12h token for ANY account and device to ANYONE who can reach the port, with no password: it lets anyone be anyone. It exists so the browser client at / can sign in on a developer machine. false: the route answers 404.",
                  isSecret: false, apply: { (config: inout ServerConfig, text: String) throws(ConfigValueProblem) in
                      switch text.lowercased() {
                      case "true", "yes", "on", "1": config.auth.devTokens = true
                      case "false", "no", "off", "0": config.auth.devTokens = false
                      default: throw ConfigValueProblem(reason: "expected true or false")
                      }
                  }, render: { $0.auth.devTokens ? "true" : "false" }),
        optionalSecret("turn.secret", \.turn.secret, "coturn static-auth-secret (use-auth-secret). Unset = no TURN credentials are issued."),
        ConfigKey(name: "turn.uris", summary: "Comma-separated TURN/STUN URIs given to clients with credentials, e.g. turn:turn.example.org:3478?transport=udp,turns:turn.example.org:5349?transport=tcp.",
                  isSecret: false, apply: { (config: inout ServerConfig, text: String) throws(ConfigValueProblem) in
                      let uris = ConfigValues.list(text)
                      for uri in uris where !(uri.hasPrefix("turn:") || uri.hasPrefix("turns:") || uri.hasPrefix("stun:") || uri.hasPrefix("stuns:")) || ConfigValues.hasWhitespaceOrControl(uri) {
                          throw ConfigValueProblem(reason: "'\(uri)' is not a turn:, turns:, stun: or stuns: URI (RFC 7064/7065)")
                      }
                      config.turn.uris = uris
                  }, render: { $0.turn.uris.joined(separator: ",") }),
        duration("turn.ttl", \.turn.ttl, max: .seconds(86_400), "Lifetime of issued TURN credentials. 1h: covers nearly every call while bounding a leaked credential (the TURN REST draft suggests at most a day)."),
        ConfigKey(name: "http.shards", summary: "Threads that poll the HTTP/WebSocket sockets (each with its own SO_REUSEPORT listener on http.port); the signaling hub stays on its own thread. 2 (default) took the socket work off the hub's thread: +14–31 % setups/s with 10,000 idle devices on 2 cores (docs/benchmarks.md); 1 = one event loop for everything (use it on a single core).",
                  isSecret: false, apply: { (config: inout ServerConfig, text: String) throws(ConfigValueProblem) in
                      config.http.shards = try ConfigValues.integer(text, in: 1 ... 64)
                  }, render: { String($0.http.shards) }),
        ConfigKey(name: "media.enabled", summary: "true: run the SFU media plane (rooms, SFU-routed calls). false: signaling only; sfu.offer gets mediaUnavailable.",
                  isSecret: false, apply: { (config: inout ServerConfig, text: String) throws(ConfigValueProblem) in
                      switch text.lowercased() {
                      case "true", "yes", "on", "1": config.media.enabled = true
                      case "false", "no", "off", "0": config.media.enabled = false
                      default: throw ConfigValueProblem(reason: "expected true or false")
                      }
                  }, render: { $0.media.enabled ? "true" : "false" }),
        ConfigKey(name: "media.host", summary: "Address the media UDP socket binds (IPv4/IPv6 literal). 0.0.0.0 = all interfaces.",
                  isSecret: false, apply: { (config: inout ServerConfig, text: String) throws(ConfigValueProblem) in
                      guard !text.isEmpty, !ConfigValues.hasWhitespaceOrControl(text) else { throw ConfigValueProblem(reason: "expected an IP address") }
                      config.media.host = text
                  }, render: { $0.media.host }),
        ConfigKey(name: "media.port", summary: "The ONE UDP port all media uses (ICE-lite, DTLS, SRTP for every participant). 10000: below the ephemeral range. 0 = any free port. A port any socket holds makes serve exit (its workers' SO_REUSEPORT never joins another server).",
                  isSecret: false, apply: { (config: inout ServerConfig, text: String) throws(ConfigValueProblem) in
                      config.media.port = UInt16(try ConfigValues.integer(text, in: 0 ... 65535))
                  }, render: { String($0.media.port) }),
        ConfigKey(name: "media.announced_address", summary: "Address (host or host:port) put in the SDP candidate when clients must reach the server through NAT or a container port mapping. Unset = the bound address.",
                  isSecret: false, apply: { (config: inout ServerConfig, text: String) throws(ConfigValueProblem) in
                      if text.isEmpty { config.media.announcedAddress = nil; return }
                      guard !ConfigValues.hasWhitespaceOrControl(text) else { throw ConfigValueProblem(reason: "expected host or host:port") }
                      config.media.announcedAddress = text
                  }, render: { $0.media.announcedAddress ?? "" }),
        ConfigKey(name: "media.certificate_file", summary: "PEM certificate for DTLS (with media.key_file). Unset = a fresh ECDSA P-256 certificate each start.",
                  isSecret: false, apply: { (config: inout ServerConfig, text: String) throws(ConfigValueProblem) in
                      config.media.certificateFile = text.isEmpty ? nil : text
                  }, render: { $0.media.certificateFile ?? "" }),
        ConfigKey(name: "media.key_file", summary: "PEM private key of media.certificate_file.",
                  isSecret: false, apply: { (config: inout ServerConfig, text: String) throws(ConfigValueProblem) in
                      config.media.keyFile = text.isEmpty ? nil : text
                  }, render: { $0.media.keyFile ?? "" }),
        ConfigKey(name: "media.workers", summary: "Media worker threads, all on media.port (SO_REUSEPORT): each room lives on one worker (the one with the fewest members when the room starts), datagrams the kernel gives to another worker are handed over. auto = one per online CPU; 1 = a single media thread.",
                  isSecret: false, apply: { (config: inout ServerConfig, text: String) throws(ConfigValueProblem) in
                      if text.lowercased() == "auto" { config.media.workers = nil; return }
                      guard let count = Int(text), (1 ... 256).contains(count) else {
                          throw ConfigValueProblem(reason: "expected auto or an integer from 1 to 256 (SFUWorkerPool.maxWorkers)")
                      }
                      config.media.workers = count
                  }, render: { $0.media.workers.map(String.init) ?? "auto" }),
        duration("media.consent_timeout", \.media.consentTimeout, max: .seconds(3600), "A member whose ICE consent checks stop this long is removed from its room (reason consentExpired) and its media stops. 30s: RFC 7675 §5.1. Clients check every 5s ± 20%, so below ~10s live members expire too."),
        ConfigKey(name: "call.media_policy", summary: "Where 1:1 call media flows: client (the caller chooses with media=p2p|sfu, default p2p), p2p (always peer to peer / TURN), sfu (always through this server's SFU).",
                  isSecret: false, apply: { (config: inout ServerConfig, text: String) throws(ConfigValueProblem) in
                      guard let policy = ServerConfig.CallMediaPolicy(rawValue: text) else { throw ConfigValueProblem(reason: "expected client, p2p or sfu") }
                      config.callMediaPolicy = policy
                  }, render: { $0.callMediaPolicy.rawValue }),
        ConfigKey(name: "push.webhook_url", summary: "http(s) URL that receives a POST when an offline device must be woken. Unset = push disabled.",
                  isSecret: false, apply: { (config: inout ServerConfig, text: String) throws(ConfigValueProblem) in
                      if text.isEmpty { config.push.webhookURL = nil; return }
                      guard text.hasPrefix("https://") || text.hasPrefix("http://"), text.count > 8, !ConfigValues.hasWhitespaceOrControl(text) else {
                          throw ConfigValueProblem(reason: "expected an http:// or https:// URL")
                      }
                      config.push.webhookURL = text
                  }, render: { $0.push.webhookURL ?? "" }),
        integer("push.attempts", \.push.attempts, 1 ... 20, "Delivery attempts per push before giving up. 5: with 1s doubling backoff that spans ~15s, inside the ring timeout."),
        duration("push.backoff", \.push.backoff, "Delay before the first push retry; doubles per attempt."),
        duration("push.backoff_cap", \.push.backoffCap, "Upper bound on one push retry delay."),
        duration("call.ring_timeout", \.calls.ring, "How long a call rings unanswered. 60s: the ring timeout of RingRTC and matrix-js-sdk."),
        duration("call.invite_lifetime", \.calls.inviteLifetime, "How long an invite stays answerable; must be >= call.ring_timeout. 90s leaves 30s for late answers to get a clean 'ended'."),
        duration("call.connect_timeout", \.calls.connect, "From answer to media flowing (ICE + DTLS) before the call fails."),
        duration("call.reconnect_timeout", \.calls.reconnect, "How long a dropped participant may take to reconnect (ICE restart) before the call ends."),
        duration("call.delivery_grace", \.calls.deliveryGrace, allowZero: true, "Wait for a delivery acknowledgement before falling back to push. 0 = push immediately."),
        duration("call.tombstone_retention", \.calls.tombstoneRetention, "How long ended calls are remembered so late or duplicate messages get a definite answer."),
        ConfigKey(name: "limits.max_message_bytes", summary: "Largest accepted signaling message (bytes, or with KiB/MiB). 64KiB: a rich SDP offer stays under ~20KiB.",
                  isSecret: false, apply: { (config: inout ServerConfig, text: String) throws(ConfigValueProblem) in
                      config.limits.maxMessageBytes = try ConfigValues.size(text, in: 1024 ... 16 * 1024 * 1024)
                  }, render: { ConfigValues.renderSize($0.limits.maxMessageBytes) }),
        integer("limits.max_candidates", \.limits.maxCandidatesPerCallAndDevice, 1 ... 1000, "ICE candidates accepted per call and device. 30: real devices rarely gather more than ~15."),
        integer("limits.commands_per_second", \.limits.commandsPerSecond, 1 ... 100_000, "Sustained commands per second per device (token bucket rate)."),
        integer("limits.command_burst", \.limits.commandBurst, 1 ... 1_000_000, "Token bucket size: commands a device may send at once."),
        duration("limits.heartbeat_interval", \.limits.heartbeatInterval, "Interval between heartbeats. 15s stays under common NAT and proxy idle timeouts."),
        duration("limits.idle_timeout", \.limits.idleTimeout, "A device silent this long is disconnected; must exceed limits.heartbeat_interval. 45s = three missed heartbeats."),
        integer("limits.max_devices_per_account", \.limits.maxDevicesPerAccount, 1 ... 1000, "Devices one account may register."),
        ConfigKey(name: "log.level", summary: "Minimum log level: debug, info, warning or error. Logs are JSON lines on stderr; secrets are redacted.",
                  isSecret: false, apply: { (config: inout ServerConfig, text: String) throws(ConfigValueProblem) in
                      guard let level = LogLevel(parsing: text) else { throw ConfigValueProblem(reason: "expected debug, info, warning or error") }
                      config.logLevel = level
                  }, render: { $0.logLevel.rawValue }),
    ]
}
