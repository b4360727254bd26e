@testable import Bench
import XCTest

final class BenchmarkOptionsTests: XCTestCase {
    func testDefaultsNeedOnlyTheSecret() throws {
        guard case .run(let o) = try BenchmarkOptions.parse(["--secret-file", "/tmp/s"]) else { return XCTFail("expected run") }
        XCTAssertEqual(o.url, "ws://127.0.0.1:8080/v1/ws")
        XCTAssertEqual(o.secretFile, "/tmp/s")
        XCTAssertEqual(o.idle, 10_000)
        XCTAssertEqual(o.pairs, 200)
        XCTAssertEqual(o.calleeDevices, 3)
        XCTAssertEqual(o.durationSeconds, 20)
        XCTAssertFalse(o.json)
        XCTAssertFalse(o.alignedSetups)
        XCTAssertNil(o.offeredRate)
    }

    func testEveryFlag() throws {
        let args = ["--url", "ws://127.0.0.1:18555/v1/ws", "--secret", "c2VjcmV0", "--idle=500", "--pairs", "7",
                    "--callee-devices", "5", "--duration", "3.5", "--warmup", "0", "--connect-rate", "300",
                    "--setup-timeout", "4", "--server-pid", "1234", "--json", "--aligned-setups",
                    "--rate", "1000"]
        guard case .run(let o) = try BenchmarkOptions.parse(args) else { return XCTFail("expected run") }
        var expected = BenchmarkOptions()
        expected.url = "ws://127.0.0.1:18555/v1/ws"
        expected.secret = "c2VjcmV0"
        expected.idle = 500
        expected.pairs = 7
        expected.calleeDevices = 5
        expected.durationSeconds = 3.5
        expected.warmupSeconds = 0
        expected.connectRate = 300
        expected.setupTimeoutSeconds = 4
        expected.serverPID = 1234
        expected.json = true
        expected.alignedSetups = true
        expected.offeredRate = 1000
        XCTAssertEqual(o, expected)
    }

    /// `--rate` takes a decimal setups/s; zero, negative, non-finite and absurd rates are
    /// typed errors naming the flag.
    func testRateFlag() throws {
        guard case .run(let o) = try BenchmarkOptions.parse(["--secret", "x", "--rate=12.5"]) else { return XCTFail("expected run") }
        XCTAssertEqual(o.offeredRate, 12.5)
        for bad in ["0", "-5", "nan", "inf", "fast", "100001"] {
            XCTAssertThrowsError(try BenchmarkOptions.parse(["--secret", "x", "--rate", bad]), bad) {
                XCTAssertEqual($0 as? BenchmarkOptionsError,
                               .invalidValue(flag: "--rate", value: bad, expected: "setups/s in 0.1...100000.0"))
            }
        }
        XCTAssertThrowsError(try BenchmarkOptions.parse(["--secret", "x", "--rate"])) {
            XCTAssertEqual($0 as? BenchmarkOptionsError, .missingValue("--rate"))
        }
        XCTAssertTrue(BenchmarkOptions.usage.contains("--rate N"))
    }

    /// `--client soup|lean` picks the pairs' WebSocket client; lean is the default.
    func testClientFlag() throws {
        guard case .run(let d) = try BenchmarkOptions.parse(["--secret", "x"]) else { return XCTFail("expected run") }
        XCTAssertEqual(d.client, .lean)
        guard case .run(let s) = try BenchmarkOptions.parse(["--secret", "x", "--client", "soup"]) else { return XCTFail("expected run") }
        XCTAssertEqual(s.client, .soup)
        guard case .run(let l) = try BenchmarkOptions.parse(["--secret", "x", "--client=lean"]) else { return XCTFail("expected run") }
        XCTAssertEqual(l.client, .lean)
        XCTAssertThrowsError(try BenchmarkOptions.parse(["--secret", "x", "--client", "nio"])) {
            XCTAssertEqual($0 as? BenchmarkOptionsError, .invalidValue(flag: "--client", value: "nio", expected: "soup or lean"))
        }
        XCTAssertTrue(BenchmarkOptions.usage.contains("--client soup|lean"))
    }

    func testHelpWinsOverMissingSecret() throws {
        XCTAssertEqual(try BenchmarkOptions.parse(["--help"]), .help)
        XCTAssertEqual(try BenchmarkOptions.parse(["--idle", "3", "-h"]), .help)
    }

    func testBadFlagsAreTypedErrors() {
        func error(_ args: [String]) -> BenchmarkOptionsError? {
            do { _ = try BenchmarkOptions.parse(args); return nil } catch { return error }
        }
        XCTAssertEqual(error(["--secret", "x", "--bogus"]), .unknownFlag("--bogus"))
        XCTAssertEqual(error(["--secret", "x", "--idle"]), .missingValue("--idle"))
        XCTAssertEqual(error(["--secret", "x", "--idle", "-5"]),
                       .invalidValue(flag: "--idle", value: "-5", expected: "an integer in 0...60000"))
        XCTAssertEqual(error(["--secret", "x", "--pairs", "ten"]),
                       .invalidValue(flag: "--pairs", value: "ten", expected: "an integer in 0...5000"))
        XCTAssertEqual(error(["--secret", "x", "--callee-devices", "17"]),
                       .invalidValue(flag: "--callee-devices", value: "17", expected: "an integer in 1...16"))
        XCTAssertEqual(error(["--secret", "x", "--duration", "nan"]),
                       .invalidValue(flag: "--duration", value: "nan", expected: "seconds in 0.1...3600.0"))
        XCTAssertEqual(error(["--secret", "x", "--url", "http://127.0.0.1/v1/ws"]),
                       .invalidValue(flag: "--url", value: "http://127.0.0.1/v1/ws", expected: "a ws:// or wss:// URL"))
        XCTAssertEqual(error(["--secret", "x", "--json=yes"]), .invalidValue(flag: "--json", value: "yes", expected: "no value"))
        XCTAssertEqual(error(["--secret", "x", "--aligned-setups=1"]),
                       .invalidValue(flag: "--aligned-setups", value: "1", expected: "no value"))
        XCTAssertEqual(error(["--idle", "3"]),
                       .conflicting("the server's token secret is needed: --secret-file PATH or --secret TEXT"))
        XCTAssertEqual(error(["--secret", "x", "--secret-file", "/tmp/s"]),
                       .conflicting("give either --secret or --secret-file, not both"))
    }

    func testMainExitsTwoOnBadFlagsAndZeroOnHelp() {
        XCTAssertEqual(SignalingBenchmark.main(["--nope"]), 2)
        XCTAssertEqual(SignalingBenchmark.main(["--help"]), 0)
    }

    func testSecretAcceptsBase64urlAndBase64() {
        // 0xFB 0xFF 0xBF: "-_-_" in base64url, "+/+/" in base64 (RFC 4648 §4/§5 alphabets).
        XCTAssertEqual(BenchmarkSecret.decode("-_-_\n"), [0xFB, 0xFF, 0xBF])
        XCTAssertEqual(BenchmarkSecret.decode("+/+/"), BenchmarkSecret.decode("-_-_"))
        XCTAssertEqual(BenchmarkSecret.decode("YWI="), Array("ab".utf8))
        XCTAssertNil(BenchmarkSecret.decode("not base64!"))
        XCTAssertNil(BenchmarkSecret.decode("  "))
    }
}
