@testable import Bench
import XCTest

/// The idle children's flags, the parent's `--idle-processes`, and the JSON-lines protocol.
final class IdleFleetProtocolTests: XCTestCase {
    func testIdleProcessesFlagAndDefault() throws {
        guard case .run(let o) = try BenchmarkOptions.parse(["--secret", "x", "--idle", "10000"]) else { return XCTFail("expected run") }
        XCTAssertNil(o.idleProcesses)
        XCTAssertEqual(o.resolvedIdleProcesses, 8)
        guard case .run(let zero) = try BenchmarkOptions.parse(["--secret", "x", "--idle-processes=0"]) else { return XCTFail("expected run") }
        XCTAssertEqual(zero.idleProcesses, 0)
        XCTAssertEqual(zero.resolvedIdleProcesses, 0)
        guard case .run(let few) = try BenchmarkOptions.parse(["--secret", "x", "--idle", "3", "--idle-processes", "8"]) else { return XCTFail("expected run") }
        XCTAssertEqual(few.resolvedIdleProcesses, 3, "never more children than idle devices")
        XCTAssertEqual(BenchmarkOptions.defaultIdleProcesses(idle: 0), 0)
        XCTAssertEqual(BenchmarkOptions.defaultIdleProcesses(idle: 1), 1)
        XCTAssertEqual(BenchmarkOptions.defaultIdleProcesses(idle: 1_250), 1)
        XCTAssertEqual(BenchmarkOptions.defaultIdleProcesses(idle: 1_251), 2)
        guard case .run(let none) = try BenchmarkOptions.parse(["--secret", "x", "--idle", "0"]) else { return XCTFail("expected run") }
        XCTAssertEqual(none.resolvedIdleProcesses, 0)
        XCTAssertEqual(none.idleClient, .lean, "default")
        guard case .run(let soup) = try BenchmarkOptions.parse(["--secret", "x", "--idle-client", "soup"]) else { return XCTFail("expected run") }
        XCTAssertEqual(soup.idleClient, .soup)
        XCTAssertThrowsError(try BenchmarkOptions.parse(["--secret", "x", "--idle-client", "nice"]))
    }

    func testIdleProcessesRejectsBadValues() {
        func error(_ args: [String]) -> BenchmarkOptionsError? {
            do { _ = try BenchmarkOptions.parse(args); return nil } catch { return error }
        }
        XCTAssertEqual(error(["--secret", "x", "--idle-processes", "65"]),
                       .invalidValue(flag: "--idle-processes", value: "65", expected: "an integer in 0...64"))
        XCTAssertEqual(error(["--secret", "x", "--idle-processes", "two"]),
                       .invalidValue(flag: "--idle-processes", value: "two", expected: "an integer in 0...64"))
        XCTAssertEqual(error(["--secret", "x", "--idle-processes"]), .missingValue("--idle-processes"))
    }

    func testChildFlags() throws {
        let o = try IdleFleetChildOptions.parse(["--url", "ws://127.0.0.1:9/v1/ws", "--count=250", "--offset", "500",
                                                 "--connect-rate", "400", "--in-flight", "2", "--client", "soup"])
        var expected = IdleFleetChildOptions()
        expected.client = .soup
        expected.url = "ws://127.0.0.1:9/v1/ws"
        expected.count = 250
        expected.offset = 500
        expected.connectRate = 400
        expected.maxInFlight = 2
        XCTAssertEqual(o, expected)
    }

    func testChildFlagsRejected() {
        func error(_ args: [String]) -> BenchmarkOptionsError? {
            do { _ = try IdleFleetChildOptions.parse(args); return nil } catch { return error }
        }
        let base = ["--url", "ws://127.0.0.1:9/v1/ws", "--count", "5", "--offset", "0"]
        XCTAssertNil(error(base))
        XCTAssertEqual(error(["--count", "5", "--offset", "0"]), .missingValue("--url"))
        XCTAssertEqual(error(["--url", "ws://h/v1/ws", "--offset", "0"]), .missingValue("--count"))
        XCTAssertEqual(error(["--url", "ws://h/v1/ws", "--count", "5"]), .missingValue("--offset"))
        XCTAssertEqual(error(base + ["--count", "0"]),
                       .invalidValue(flag: "--count", value: "0", expected: "an integer in 1...60000"))
        XCTAssertEqual(error(base + ["--offset", "-1"]),
                       .invalidValue(flag: "--offset", value: "-1", expected: "an integer in 0...60000"))
        XCTAssertEqual(try IdleFleetChildOptions.parse(base).client, .lean, "default")
        XCTAssertEqual(error(base + ["--client", "curl"]),
                       .invalidValue(flag: "--client", value: "curl", expected: "soup or lean"))
        XCTAssertEqual(error(base + ["--in-flight", "0"]),
                       .invalidValue(flag: "--in-flight", value: "0", expected: "an integer in 1...64"))
        XCTAssertEqual(error(base + ["--url", "http://h/"]),
                       .invalidValue(flag: "--url", value: "http://h/", expected: "a ws:// or wss:// URL"))
        XCTAssertEqual(error(base + ["--secret", "abc"]), .unknownFlag("--secret"))
        XCTAssertEqual(error(base + ["--connect-rate"]), .missingValue("--connect-rate"))
    }

    func testMessageRoundTrip() throws {
        let progress = IdleChildMessage(connected: 7, failed: 1, dropped: 2, settled: false, connectSeconds: nil,
                                        errors: ["idleClosed(1006)": 2])
        XCTAssertEqual(try IdleChildMessage.parse(progress.line(), count: 10), progress)
        XCTAssertFalse(progress.line().contains("\n"))
        let settled = IdleChildMessage(connected: 9, failed: 1, dropped: 0, settled: true, connectSeconds: 1.25, errors: [:])
        XCTAssertEqual(try IdleChildMessage.parse(settled.line(), count: 10), settled)
        let literal = #"{"connectSeconds":4.5,"connected":3,"dropped":0,"errors":{},"failed":0,"settled":true,"type":"progress"}"#
        XCTAssertEqual(try IdleChildMessage.parse(literal, count: 3).connectSeconds, 4.5)
    }

    func testMessageRejected() {
        func error(_ line: String, count: Int = 10) -> IdleChildProtocolError? {
            do { _ = try IdleChildMessage.parse(line, count: count); return nil } catch { return error }
        }
        func line(type: String = "progress", connected: Int = 1, failed: Int = 0, dropped: Int = 0,
                  settled: Bool = false, seconds: String = "null") -> String {
            #"{"type":"\#(type)","connected":\#(connected),"failed":\#(failed),"dropped":\#(dropped),"settled":\#(settled),"connectSeconds":\#(seconds),"errors":{}}"#
        }
        XCTAssertNil(error(line()))
        XCTAssertEqual(error("hello"), .notAMessage("hello"))
        XCTAssertEqual(error(#"{"type":"progress"}"#), .notAMessage(#"{"type":"progress"}"#))
        XCTAssertEqual(error(line(type: "ready")), .unknownType("ready"))
        XCTAssertEqual(error(line(failed: -1)), .negative("failed"))
        XCTAssertEqual(error(line(settled: true, seconds: "-2")), .negative("connectSeconds"))
        XCTAssertEqual(error(line(connected: 8, failed: 3)), .inconsistent("connected 8 + failed 3 of 10, dropped 0"))
        XCTAssertEqual(error(line(connected: 1, dropped: 2)), .inconsistent("connected 1 + failed 0 of 10, dropped 2"))
        XCTAssertEqual(error(line(settled: true)), .inconsistent("settled true with connectSeconds null"))
        XCTAssertEqual(error(line(settled: false, seconds: "1.0")), .inconsistent("settled false with connectSeconds 1.0"))
        XCTAssertEqual(error(line(connected: 4, settled: true, seconds: "1.0")), .inconsistent("settled with 4 of 10 devices"))
    }

    func testSharesAreContiguousAndDisjoint() {
        for (total, k) in [(40, 2), (10_000, 4), (10_001, 4), (3, 8), (1, 1)] {
            let shares = ChildProcessIdleDevices.shares(total: total, processes: k)
            XCTAssertEqual(shares.count, min(total, k))
            XCTAssertEqual(shares.map(\.count).reduce(0, +), total)
            var next = 0
            for share in shares {
                XCTAssertEqual(share.offset, next, "no gap, no overlap: device names stay unique")
                XCTAssertGreaterThan(share.count, 0)
                next += share.count
            }
            XCTAssertLessThanOrEqual((shares.map(\.count).max() ?? 0) - (shares.map(\.count).min() ?? 0), 1)
        }
    }
}
