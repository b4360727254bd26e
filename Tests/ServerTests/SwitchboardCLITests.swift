import Auth
import Foundation
import XCTest
@testable import Server

/// Runs the CLI end to end with captured output, real temp files and a fixed clock.
final class SwitchboardCLITests: XCTestCase {
    private var temp: TempDirectory!

    override func setUpWithError() throws { temp = try TempDirectory() }
    override func tearDown() { temp.remove() }

    private final class Capture {
        var out: [String] = []
        var err: [String] = []
        var output: SwitchboardCLI.Output {
            SwitchboardCLI.Output(standardOutput: { self.out.append($0) }, standardError: { self.err.append($0) })
        }
    }

    private func run(_ args: [String], environment: [String: String] = [:], now: Int64 = 1_700_000_000,
                     serve: ((ServerConfig) -> Int32)? = nil) -> (Int32, Capture) {
        let capture = Capture()
        let status = SwitchboardCLI.run(args, environment: environment, output: capture.output, now: now, serve: serve)
        return (status, capture)
    }

    func testUsageErrorsExit2WithMessageOnStderr() {
        for args in [["frobnicate"], ["serve", "--port", "x"], ["serve", "--nope", "1"], ["token"], ["serve", "--db"], []] {
            let (status, capture) = run(args)
            XCTAssertEqual(status, 2, "\(args)")
            XCTAssertTrue(capture.out.isEmpty)
            XCTAssertTrue(capture.err.first?.hasPrefix("switchboard: ") ?? false, "\(args): \(capture.err)")
            XCTAssertTrue(capture.err.last?.contains("--help") ?? false || capture.err.last?.contains("switchboard help") ?? false)
        }
        let (_, capture) = run(["serve", "--nope", "1"])
        XCTAssertEqual(capture.err, ["switchboard: unknown flag '--nope' for 'serve'", "Run 'switchboard serve --help' for usage."])
        let (_, valueCapture) = run(["token", "--account", "a", "--device", "d", "--ttl"])
        XCTAssertEqual(valueCapture.err, ["switchboard: flag --ttl needs a value", "Run 'switchboard token --help' for usage."])
        let (_, bareCapture) = run(["bogus"])
        XCTAssertEqual(bareCapture.err, ["switchboard: unknown subcommand 'bogus'", "Run 'switchboard help' for usage."])
    }

    func testHelpAndVersionExit0OnStdout() {
        for args in [["help"], ["serve", "--help"], ["token", "--help"], ["help", "serve"], ["version", "--help"]] {
            let (status, capture) = run(args)
            XCTAssertEqual(status, 0, "\(args)")
            XCTAssertTrue(capture.out.first?.contains("Usage: switchboard") ?? false, "\(args)")
            XCTAssertTrue(capture.err.isEmpty)
        }
        let (status, capture) = run(["version"])
        XCTAssertEqual(status, 0)
        XCTAssertEqual(capture.out, ["switchboard \(SwitchboardCLI.version)"])
    }

    func testServePassesLayeredConfigToHandler() throws {
        let file = try temp.write("s.conf", "http.port = 9000\nlog.level = warning\n")
        var received: ServerConfig?
        let (status, capture) = run(["serve", "--port", "9100", "--db", temp.file("db.sqlite")],
                                    environment: ["SWITCHBOARD_CONFIG": file, "SWITCHBOARD_HTTP_HOST": "127.0.0.1"],
                                    serve: { received = $0; return 7 })
        XCTAssertEqual(status, 7, "handler's status is the exit status: \(capture.err)")
        XCTAssertEqual(received?.http.port, 9100)
        XCTAssertEqual(received?.http.host, "127.0.0.1")
        XCTAssertEqual(received?.logLevel, .warning)
        XCTAssertEqual(received?.database.path, temp.file("db.sqlite"))
    }

    func testServeConfigErrorExits78AndSkipsHandler() throws {
        let file = try temp.write("bad.conf", "http.port = 1\nnope = 2\n")
        var called = false
        let (status, capture) = run(["serve", "--config", file], serve: { _ in called = true; return 0 })
        XCTAssertEqual(status, 78)
        XCTAssertFalse(called)
        XCTAssertEqual(capture.err, ["switchboard: \(file):2: unknown key 'nope'"])
    }

    func testServeWithoutHandlerFails() {
        let (status, capture) = run(["serve"])
        XCTAssertEqual(status, 1)
        XCTAssertFalse(capture.err.isEmpty)
    }

    /// The printed token verifies with the secret file's key and carries the requested claims.
    func testTokenMintsVerifiableJWT() throws {
        let secret = [UInt8](repeating: 0x5A, count: 32)
        let secretFile = try temp.write("token-secret", Base64URL.encode(secret) + "\n")
        let (status, capture) = run(["token", "--account", "alice", "--device", "phone", "--ttl", "2h", "--secret-file", secretFile])
        XCTAssertEqual(status, 0, "\(capture.err)")
        XCTAssertEqual(capture.out.count, 1)
        let claims = try TokenSigner(secret: secret).verify(capture.out[0], now: 1_700_000_000)
        XCTAssertEqual(claims, try TokenClaims(account: "alice", device: "phone", issuedAt: 1_700_000_000, expiresAt: 1_700_007_200))
    }

    func testTokenUsesConfiguredSecretFileAndNeverCreatesIt() throws {
        let missing = temp.file("absent-secret")
        let (status, capture) = run(["token", "--account", "a", "--device", "d"],
                                    environment: ["SWITCHBOARD_TOKEN_SECRET_FILE": missing])
        XCTAssertEqual(status, 78)
        XCTAssertTrue(capture.out.isEmpty)
        XCTAssertFalse(FileManager.default.fileExists(atPath: missing))

        let secret = [UInt8](repeating: 1, count: 48)
        let file = try temp.write("s.conf", "token.secret_file = \(try temp.write("k", Base64URL.encode(secret)))\n")
        let (okStatus, okCapture) = run(["token", "--account", "a", "--device", "d", "--config", file])
        XCTAssertEqual(okStatus, 0, "\(okCapture.err)")
        XCTAssertNoThrow(try TokenSigner(secret: secret).verify(okCapture.out.first ?? "", now: 1_700_000_000))
    }
}
