import XCTest
@testable import Server

final class CLIParserTests: XCTestCase {
    private func parse(_ args: String) throws -> CLICommand {
        try CLIParser.parse(args.split(separator: " ").map(String.init))
    }

    private func assertError(_ args: [String], _ expected: CLIError, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try CLIParser.parse(args), file: file, line: line) {
            XCTAssertEqual($0 as? CLIError, expected, file: file, line: line)
        }
    }

    func testServeWithAllFlagsInBothForms() throws {
        XCTAssertEqual(try parse("serve --config /etc/s.conf --host 127.0.0.1 --port=9000 --db /var/lib/s.db --log-level=debug"),
                       .serve(ServeOptions(configFile: "/etc/s.conf", overrides: [
                           CLIOverride(key: "http.host", value: "127.0.0.1", flag: "--host"),
                           CLIOverride(key: "http.port", value: "9000", flag: "--port"),
                           CLIOverride(key: "database.path", value: "/var/lib/s.db", flag: "--db"),
                           CLIOverride(key: "log.level", value: "debug", flag: "--log-level"),
                       ])))
        XCTAssertEqual(try parse("serve"), .serve(ServeOptions()))
    }

    func testServeRejectsBadInput() {
        assertError(["serve", "--port", "http"], .invalidValue(flag: "--port", value: "http", reason: "expected an integer from 0 to 65535"))
        assertError(["serve", "--port", "65536"], .invalidValue(flag: "--port", value: "65536", reason: "expected an integer from 0 to 65535"))
        assertError(["serve", "--log-level", "loud"], .invalidValue(flag: "--log-level", value: "loud", reason: "expected debug, info, warning or error"))
        assertError(["serve", "--port"], .missingValue(flag: "--port"))
        assertError(["serve", "--port", "--host", "x"], .missingValue(flag: "--port"))
        assertError(["serve", "--bogus", "1"], .unknownFlag("--bogus", subcommand: "serve"))
        assertError(["serve", "--bogus=1"], .unknownFlag("--bogus", subcommand: "serve"))
        assertError(["serve", "extra"], .unexpectedArgument("extra", subcommand: "serve"))
        assertError(["serve", "-p", "1"], .unexpectedArgument("-p", subcommand: "serve"))
        assertError(["serve", "--port", "1", "--port", "2"], .duplicateFlag("--port"))
        assertError(["serve", "--config="], .invalidValue(flag: "--config", value: "", reason: "expected a file path"))
        assertError(["serve", "--host", "a b"], .invalidValue(flag: "--host", value: "a b", reason: "expected an IP address or host name"))
    }

    func testToken() throws {
        XCTAssertEqual(try parse("token --account alice --device phone-1"),
                       .token(TokenOptions(account: "alice", device: "phone-1", ttl: .seconds(86_400))))
        XCTAssertEqual(try parse("token --device d --account a --ttl 30m --secret-file /s --config /c"),
                       .token(TokenOptions(account: "a", device: "d", ttl: .seconds(1800), secretFile: "/s", configFile: "/c")))
    }

    func testTokenRejectsBadInput() {
        assertError(["token", "--device", "d"], .missingRequiredFlag("--account", subcommand: "token"))
        assertError(["token", "--account", "a"], .missingRequiredFlag("--device", subcommand: "token"))
        assertError(["token", "--account", "a:b", "--device", "d"],
                    .invalidValue(flag: "--account", value: "a:b", reason: "expected 1-64 characters of A-Z a-z 0-9 . _ -"))
        assertError(["token", "--account", "a", "--device", "d", "--ttl", "24"],
                    .invalidValue(flag: "--ttl", value: "24", reason: "expected a duration like 500ms, 60s, 15m, 24h or 7d"))
        assertError(["token", "--account", "a", "--device", "d", "--ttl", "0s"],
                    .invalidValue(flag: "--ttl", value: "0s", reason: "must be greater than zero and at most 366d"))
        assertError(["token", "--account", "a", "--device", "d", "--ttl", "400d"],
                    .invalidValue(flag: "--ttl", value: "400d", reason: "must be greater than zero and at most 366d"))
        assertError(["token", "--account", "a", "--device", "d", "--port", "1"], .unknownFlag("--port", subcommand: "token"))
    }

    func testHelpVersionAndSubcommands() throws {
        XCTAssertEqual(try parse("help"), .help(.general))
        XCTAssertEqual(try parse("--help"), .help(.general))
        XCTAssertEqual(try parse("-h"), .help(.general))
        XCTAssertEqual(try parse("help token"), .help(.token))
        XCTAssertEqual(try parse("serve --help"), .help(.serve))
        XCTAssertEqual(try parse("serve --port 1 -h"), .help(.serve))
        XCTAssertEqual(try parse("token --help"), .help(.token))
        XCTAssertEqual(try parse("version --help"), .help(.version))
        XCTAssertEqual(try parse("version"), .version)
        XCTAssertEqual(try parse("--version"), .version)
        assertError([], .missingSubcommand)
        XCTAssertEqual(try parse("bench"), .help(.bench))
        XCTAssertEqual(try parse("help bench"), .help(.bench))
        XCTAssertEqual(try parse("bench signaling --pairs 5 --idle=0"), .benchSignaling(["--pairs", "5", "--idle=0"]))
        assertError(["bench", "teleport"], .unknownSubcommand("bench teleport"))
        XCTAssertEqual(try parse("bench idle-fleet --count 5"), .benchIdleFleet(["--count", "5"]))
        assertError(["help", "general"], .unknownSubcommand("general"))
        assertError(["version", "x"], .unexpectedArgument("x", subcommand: "version"))
    }
}
