import Foundation
import Logging
import XCTest
@testable import Server

final class ServerConfigTests: XCTestCase {
    private var temp: TempDirectory!

    override func setUpWithError() throws { temp = try TempDirectory() }
    override func tearDown() { temp.remove() }

    func testDefaults() throws {
        let config = try ServerConfig.load(configFile: nil, environment: [:])
        XCTAssertEqual(config.http.host, "0.0.0.0")
        XCTAssertEqual(config.http.port, 8080)
        XCTAssertEqual(config.database.path, "./data/switchboard.sqlite")
        XCTAssertEqual(config.database.synchronous, .normal)
        XCTAssertNil(config.token.secret)
        XCTAssertEqual(config.token.secretFile, "./data/token-secret")
        XCTAssertEqual(config.turn.ttl, .seconds(3600))
        XCTAssertNil(config.push.webhookURL)
        XCTAssertEqual(config.push.attempts, 5)
        XCTAssertEqual(config.push.backoff, .seconds(1))
        XCTAssertEqual(config.push.backoffCap, .seconds(60))
        XCTAssertEqual(config.calls.ring, .seconds(60))
        XCTAssertEqual(config.calls.inviteLifetime, .seconds(90))
        XCTAssertEqual(config.calls.connect, .seconds(30))
        XCTAssertEqual(config.calls.reconnect, .seconds(30))
        XCTAssertEqual(config.calls.deliveryGrace, .seconds(5))
        XCTAssertEqual(config.calls.tombstoneRetention, .seconds(86_400))
        XCTAssertEqual(config.limits.maxMessageBytes, 65536)
        XCTAssertEqual(config.limits.maxCandidatesPerCallAndDevice, 30)
        XCTAssertEqual(config.limits.commandsPerSecond, 50)
        XCTAssertEqual(config.limits.commandBurst, 100)
        XCTAssertEqual(config.limits.heartbeatInterval, .seconds(15))
        XCTAssertEqual(config.limits.idleTimeout, .seconds(45))
        XCTAssertEqual(config.limits.maxDevicesPerAccount, 16)
        XCTAssertEqual(config.logLevel, .info)
    }

    func testFileEnvironmentAndFlagsLayerInOrder() throws {
        let file = try temp.write("a.conf", """
        # comment
          # indented comment

        http.port = 9000
        http.host=127.0.0.1
        database.synchronous = FULL
        turn.secret = coturn secret with spaces
        turn.uris = turn:a.example:3478?transport=udp , turns:a.example:5349?transport=tcp,
        call.delivery_grace = 500ms
        limits.max_message_bytes = 128KiB
        log.level = debug
        push.webhook_url = https://push.example/hook#frag
        """)
        let config = try ServerConfig.load(
            configFile: file,
            environment: ["SWITCHBOARD_HTTP_PORT": "9001", "SWITCHBOARD_CALL_RING_TIMEOUT": "45s", "PATH": "/bin",
                          "SWITCHBOARD_CONFIG": "ignored-here"],
            overrides: [(key: "http.port", value: "9002", flag: "--port")])
        XCTAssertEqual(config.http.port, 9002, "flag beats environment beats file")
        XCTAssertEqual(config.http.host, "127.0.0.1")
        XCTAssertEqual(config.database.synchronous, .full)
        XCTAssertEqual(config.turn.secret, "coturn secret with spaces")
        XCTAssertEqual(config.turn.uris, ["turn:a.example:3478?transport=udp", "turns:a.example:5349?transport=tcp"])
        XCTAssertEqual(config.calls.deliveryGrace, .milliseconds(500))
        XCTAssertEqual(config.calls.ring, .seconds(45))
        XCTAssertEqual(config.limits.maxMessageBytes, 131_072)
        XCTAssertEqual(config.logLevel, .debug)
        XCTAssertEqual(config.push.webhookURL, "https://push.example/hook#frag")
        let issuer = try XCTUnwrap(config.makeTURNCredentialIssuer())
        XCTAssertEqual(issuer.ttl, 3600)
    }

    func testFileErrorsCarryFileAndLine() throws {
        func expect(_ text: String, _ expected: ConfigError, file: StaticString = #filePath, line: UInt = #line) throws {
            let path = try temp.write("bad.conf", text)
            XCTAssertThrowsError(try ServerConfig.load(configFile: path, environment: [:]), file: file, line: line) {
                XCTAssertEqual($0 as? ConfigError, expected, file: file, line: line)
            }
        }
        let path = temp.file("bad.conf")
        try expect("http.port = 1\nhttp.prot = 2\n", .unknownKey("http.prot", .file(path: path, line: 2)))
        try expect("# c\n\nhttp.port 8080\n", .syntax(.file(path: path, line: 3)))
        try expect(" = 8080\n", .syntax(.file(path: path, line: 1)))
        try expect("http.port = 1\nhttp.port = 2\n", .duplicateKey("http.port", .file(path: path, line: 2)))
        try expect("http.port = 70000\n", .invalidValue(key: "http.port", value: "70000", reason: "expected an integer from 0 to 65535", .file(path: path, line: 1)))
        try expect("http.port = 8080 # inline\n", .invalidValue(key: "http.port", value: "8080 # inline", reason: "expected an integer from 0 to 65535", .file(path: path, line: 1)))
        try expect("call.ring_timeout = 60\n", .invalidValue(key: "call.ring_timeout", value: "60",
                                                          reason: "expected a duration like 500ms, 60s, 15m, 24h or 7d", .file(path: path, line: 1)))
        try expect("call.ring_timeout = 0s\n", .invalidValue(key: "call.ring_timeout", value: "0s", reason: "must be greater than zero", .file(path: path, line: 1)))
        try expect("database.synchronous = off\n", .invalidValue(key: "database.synchronous", value: "off", reason: "expected normal or full", .file(path: path, line: 1)))
        try expect("turn.uris = http://x\n", .invalidValue(key: "turn.uris", value: "http://x",
                                                          reason: "'http://x' is not a turn:, turns:, stun: or stuns: URI (RFC 7064/7065)", .file(path: path, line: 1)))
        try expect("push.webhook_url = ftp://x\n", .invalidValue(key: "push.webhook_url", value: "ftp://x", reason: "expected an http:// or https:// URL", .file(path: path, line: 1)))
        try expect("log.level = loud\n", .invalidValue(key: "log.level", value: "loud", reason: "expected debug, info, warning or error", .file(path: path, line: 1)))
    }

    func testErrorDescriptionNamesFileAndLine() {
        let error = ConfigError.unknownKey("http.prot", .file(path: "/etc/switchboard.conf", line: 7))
        XCTAssertEqual(error.description, "/etc/switchboard.conf:7: unknown key 'http.prot'")
    }

    func testUnreadableFile() {
        XCTAssertThrowsError(try ServerConfig.load(configFile: temp.file("missing.conf"), environment: [:])) {
            guard case .unreadableFile(let path, _)? = $0 as? ConfigError else { return XCTFail("\($0)") }
            XCTAssertEqual(path, self.temp.file("missing.conf"))
        }
    }

    func testSecretValuesNeverAppearInErrors() throws {
        // turn.secret accepts any text, so force an error via token.secret in the file being fine
        // but the resolve step failing, and check the inline value is not echoed.
        let config = try ServerConfig.load(configFile: nil, environment: ["SWITCHBOARD_TOKEN_SECRET": "tooshort-hunter2"])
        XCTAssertThrowsError(try config.resolveTokenSecret()) {
            XCTAssertFalse("\($0)".contains("hunter2"))
        }
        XCTAssertEqual(ConfigKey.named("turn.secret")?.renderedValue(config), "")
        var withSecret = config
        withSecret.turn.secret = "hunter2"
        XCTAssertEqual(ConfigKey.named("turn.secret")?.renderedValue(withSecret), "[redacted]")
    }

    func testEnvironmentMappingAndUnknownVariables() throws {
        XCTAssertEqual(ConfigKey.named("limits.max_devices_per_account")?.environmentName, "SWITCHBOARD_LIMITS_MAX_DEVICES_PER_ACCOUNT")
        let config = try ServerConfig.load(configFile: nil, environment: ["SWITCHBOARD_LIMITS_MAX_DEVICES_PER_ACCOUNT": "4"])
        XCTAssertEqual(config.limits.maxDevicesPerAccount, 4)
        XCTAssertThrowsError(try ServerConfig.load(configFile: nil, environment: ["SWITCHBOARD_HTTP_PROT": "1"])) {
            XCTAssertEqual($0 as? ConfigError, .unknownKey("SWITCHBOARD_HTTP_PROT", .environment("SWITCHBOARD_HTTP_PROT")))
        }
        XCTAssertThrowsError(try ServerConfig.load(configFile: nil, environment: ["SWITCHBOARD_HTTP_PORT": "x"])) {
            XCTAssertEqual($0 as? ConfigError, .invalidValue(key: "http.port", value: "x", reason: "expected an integer from 0 to 65535",
                                                             .environment("SWITCHBOARD_HTTP_PORT")))
        }
    }

    func testCrossFieldValidation() {
        let cases: [[String: String]] = [
            ["SWITCHBOARD_CALL_INVITE_LIFETIME": "30s"],
            ["SWITCHBOARD_LIMITS_IDLE_TIMEOUT": "15s"],
            ["SWITCHBOARD_PUSH_BACKOFF": "2m"],
            ["SWITCHBOARD_TURN_SECRET": "s"],
        ]
        for environment in cases {
            XCTAssertThrowsError(try ServerConfig.load(configFile: nil, environment: environment), "\(environment)") {
                guard case .inconsistent = $0 as? ConfigError else { return XCTFail("\($0)") }
            }
        }
    }

    func testDurationAndSizeSyntax() throws {
        XCTAssertEqual(try ConfigValues.duration("500ms"), .milliseconds(500))
        XCTAssertEqual(try ConfigValues.duration("60s"), .seconds(60))
        XCTAssertEqual(try ConfigValues.duration("15m"), .seconds(900))
        XCTAssertEqual(try ConfigValues.duration("24h"), .seconds(86_400))
        XCTAssertEqual(try ConfigValues.duration("7d"), .seconds(604_800))
        for bad in ["", "s", "60", "-5s", "1.5s", "5 s", "5sec", "ms", "99999999999999999999d", "９s"] {
            XCTAssertThrowsError(try ConfigValues.duration(bad), bad)
        }
        XCTAssertEqual(ConfigValues.render(.seconds(86_400)), "24h")
        XCTAssertEqual(ConfigValues.render(.seconds(3600)), "3600s")
        XCTAssertEqual(ConfigValues.render(.seconds(90)), "90s")
        XCTAssertEqual(ConfigValues.render(.milliseconds(1500)), "1500ms")
        XCTAssertEqual(try ConfigValues.size("64KiB", in: 1 ... 1 << 30), 65536)
        XCTAssertEqual(try ConfigValues.size("1MiB", in: 1 ... 1 << 30), 1 << 20)
        XCTAssertThrowsError(try ConfigValues.size("64KB", in: 1 ... 1 << 30))
    }

    /// Every key renders its default in a form its own parser accepts and maps back to the
    /// same configuration.
    func testEveryKeyRoundTripsItsDefault() throws {
        let defaults = ServerConfig()
        var rebuilt = ServerConfig()
        for key in ConfigKey.all {
            let text = key.renderedValue(defaults)
            if text.isEmpty { continue }  // unset optional
            try rebuilt.set(key.name, text, source: .commandLine("test"))
        }
        XCTAssertEqual(rebuilt, defaults)
        XCTAssertEqual(Set(ConfigKey.all.map(\.name)).count, ConfigKey.all.count, "duplicate key names")
    }

    /// deploy/switchboard.conf is the generated sample, so it lists every key with its real
    /// default. Regenerate with: UPDATE_SAMPLE_CONFIG=1 swift test --filter testDeploySampleConfigIsCurrent
    func testDeploySampleConfigIsCurrent() throws {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let path = repository.appendingPathComponent("deploy/switchboard.conf").path
        let sample = ServerConfig.sampleFile()
        if ProcessInfo.processInfo.environment["UPDATE_SAMPLE_CONFIG"] == "1" {
            try sample.write(toFile: path, atomically: true, encoding: .utf8)
        }
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), sample)
        for key in ConfigKey.all { XCTAssertTrue(sample.contains("# \(key.name) ="), key.name) }
        // The sample, uncommented, parses back to the defaults.
        let uncommented = sample.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("# "), let key = line.dropFirst(2).split(separator: " ").first,
                  ConfigKey.named(String(key)) != nil, line.contains(" =") else { return nil }
            return String(line.dropFirst(2))
        }.joined(separator: "\n")
        var parsed = ServerConfig()
        try parsed.apply(fileText: uncommented, path: "sample")
        XCTAssertEqual(parsed, ServerConfig())
    }
}

final class ServerConfigDescriptionTests: XCTestCase {
    func testPrintingNeverShowsSecrets() {
        var config = ServerConfig()
        config.token.secret = "inline-token-secret-value"
        config.turn.secret = "turn-shared-secret-value"
        config.turn.uris = ["turn:t.example:3478"]
        var dumped = ""
        dump(config, to: &dumped)
        for text in [config.description, "\(config)", String(reflecting: config), "\(config.token)", "\(config.turn)", dumped] {
            XCTAssertFalse(text.contains("secret-value"), text)
        }
        XCTAssertTrue(config.description.contains("turn.secret = [redacted]"))
        XCTAssertTrue(config.description.contains("http.port = 8080"))
    }
}
