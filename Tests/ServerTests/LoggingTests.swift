import Foundation
import XCTest
@testable import Logging

/// Logging has no test target of its own; Server depends on it, so its tests live here.
final class LoggingTests: XCTestCase {
    /// A real-shaped HS256 token (RFC 7515 A.1 example) that must never appear in output.
    private let jwt = "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ.dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"

    private func makeLogger(level: LogLevel = .debug) -> (Logger, LogSink) {
        let sink = LogSink.collecting()
        // 2026-11-29T18:06:49.123Z
        let logger = Logger(subsystem: "test", sink: sink, minimumLevel: level,
                            clock: { Date(timeIntervalSince1970: 1_795_975_609.123) })
        return (logger, sink)
    }

    private func parse(_ line: String) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    func testLineShape() throws {
        let (logger, sink) = makeLogger()
        logger.info("call started", ["call": "c1", "participants": 2, "video": true, "ratio": 0.5, "none": nil])
        XCTAssertEqual(sink.lines.count, 1)
        let object = try parse(sink.lines[0])
        XCTAssertEqual(object["ts"] as? String, "2026-11-29T18:06:49.123Z")
        XCTAssertEqual(object["level"] as? String, "info")
        XCTAssertEqual(object["subsystem"] as? String, "test")
        XCTAssertEqual(object["msg"] as? String, "call started")
        let fields = try XCTUnwrap(object["fields"] as? [String: Any])
        XCTAssertEqual(fields["call"] as? String, "c1")
        XCTAssertEqual(fields["participants"] as? Int, 2)
        XCTAssertEqual(fields["video"] as? Bool, true)
        XCTAssertEqual(fields["ratio"] as? Double, 0.5)
        XCTAssertTrue(fields["none"] is NSNull)
        XCTAssertFalse(sink.lines[0].contains("\n"))
    }

    func testSensitiveKeysAreRedactedCaseInsensitively() throws {
        let (logger, sink) = makeLogger()
        logger.warning("auth", [
            "token": "abc", "accessToken": "abc", "password": "hunter2", "TURN_PASSWORD": "x",
            "secret": "s3", "ice-pwd": "p", "icePwd": "p", "Authorization": "Bearer abc",
            "remoteSDP": "v=0", "sdp": "v=0", "account": "alice",
            "nested": ["clientSecret": "zzz", "device": "d1"],
        ])
        let line = sink.lines[0]
        for leaked in ["abc", "hunter2", "s3", "\"p\"", "v=0", "zzz", "\"x\""] {
            XCTAssertFalse(line.contains(leaked), "leaked \(leaked): \(line)")
        }
        let fields = try XCTUnwrap(parse(line)["fields"] as? [String: Any])
        for key in ["token", "accessToken", "password", "TURN_PASSWORD", "secret", "ice-pwd", "icePwd", "Authorization", "remoteSDP", "sdp"] {
            XCTAssertEqual(fields[key] as? String, "[redacted]", key)
        }
        XCTAssertEqual(fields["account"] as? String, "alice")
        let nested = try XCTUnwrap(fields["nested"] as? [String: Any])
        XCTAssertEqual(nested["clientSecret"] as? String, "[redacted]")
        XCTAssertEqual(nested["device"] as? String, "d1")
    }

    func testJWTValuesAndMessagesAreRedacted() throws {
        let (logger, sink) = makeLogger()
        logger.error("rejected Bearer \(jwt) from client", ["header": "Bearer \(jwt)", "list": [.string(jwt), "ok"],
                                                           "unsigned": "eyJhbGciOiJub25lIn0.eyJzdWIiOiJhIn0."])
        let line = sink.lines[0]
        XCTAssertFalse(line.contains("eyJ"), line)
        let object = try parse(line)
        XCTAssertEqual(object["msg"] as? String, "rejected Bearer [redacted] from client")
        let fields = try XCTUnwrap(object["fields"] as? [String: Any])
        XCTAssertEqual(fields["header"] as? String, "[redacted]")
        XCTAssertEqual(fields["list"] as? [String], ["[redacted]", "ok"])
        XCTAssertEqual(fields["unsigned"] as? String, "[redacted]")
    }

    func testSDPBodiesUnderInnocentKeysAreRedacted() throws {
        let (logger, sink) = makeLogger()
        logger.info("offer", ["body": "v=0\r\na=ice-ufrag:abcd\r\na=ice-pwd:verysecretpassword1234\r\n"])
        XCTAssertFalse(sink.lines[0].contains("verysecretpassword"))
    }

    func testNonJWTTextIsKept() {
        XCTAssertEqual(Redaction.scrubMessage("eyJ alone, a.b.c, eyJhbGci."), "eyJ alone, a.b.c, eyJhbGci.")
        XCTAssertEqual(Redaction.redact("hello.world.x"), "hello.world.x")
    }

    func testMinimumLevelFilters() {
        let (logger, sink) = makeLogger(level: .warning)
        logger.debug("d")
        logger.info("i")
        logger.warning("w")
        logger.error("e")
        XCTAssertEqual(sink.lines.count, 2)
        XCTAssertEqual(LogLevel(parsing: "WARN"), .warning)
        XCTAssertNil(LogLevel(parsing: "loud"))
    }

    func testEscapingProducesValidJSON() throws {
        let (logger, sink) = makeLogger()
        logger.info("quote \" backslash \\ newline \n tab \t bell \u{07} é 👍", ["k\"ey": "v\u{0}"])
        let object = try parse(sink.lines[0])
        XCTAssertEqual(object["msg"] as? String, "quote \" backslash \\ newline \n tab \t bell \u{07} é 👍")
        XCTAssertEqual((object["fields"] as? [String: Any])?["k\"ey"] as? String, "v\u{0}")
    }

    func testRFC3339Formatting() {
        XCTAssertEqual(RFC3339.format(Date(timeIntervalSince1970: 0)), "1970-01-01T00:00:00.000Z")
        XCTAssertEqual(RFC3339.format(Date(timeIntervalSince1970: 951_782_400.5)), "2000-02-29T00:00:00.500Z")
        XCTAssertEqual(RFC3339.format(Date(timeIntervalSince1970: -0.001)), "1969-12-31T23:59:59.999Z")
    }

    /// Concurrent writers never interleave or lose lines.
    func testConcurrentWritesKeepWholeLines() throws {
        let (logger, sink) = makeLogger()
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for index in 0 ..< 200 { logger.info("line", ["worker": .integer(worker), "index": .integer(index)]) }
        }
        XCTAssertEqual(sink.lines.count, 1600)
        for line in sink.lines { XCTAssertNoThrow(try parse(line)) }
    }

    /// File-descriptor sink writes real bytes through write(2).
    func testFileDescriptorSinkWritesLines() throws {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        defer { close(fds[0]) }
        let logger = Logger(subsystem: "fd", sink: LogSink(fileDescriptor: fds[1]))
        logger.info("hello", ["token": "t0ps3cret"])
        close(fds[1])
        let data = FileHandle(fileDescriptor: fds[0], closeOnDealloc: false).readDataToEndOfFile()
        let text = String(decoding: data, as: UTF8.self)
        XCTAssertTrue(text.hasSuffix("}\n"))
        XCTAssertTrue(text.contains("\"msg\":\"hello\""))
        XCTAssertFalse(text.contains("t0ps3cret"))
    }
}
