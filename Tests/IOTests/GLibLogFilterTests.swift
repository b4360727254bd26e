import CGLibLog
import CSoup
import Foundation
import IO
import XCTest

/// Messages a handler saw (GLib calls it on the logging thread; the tests log from theirs).
private let seenLock = NSLock()
nonisolated(unsafe) private var seen: [String] = []

/// Switchboard's `g_log` (Sources/CGLibLog/GLibLog.c) in place of GLib's: debug and info
/// messages that GLib's default writer would drop are dropped before formatting; all else
/// reaches GLib as before.
final class GLibLogFilterTests: XCTestCase {
    private let domain = "sb-glib-log-test"

    override func setUpWithError() throws {
        try XCTSkipIf(ProcessInfo.processInfo.environment["G_MESSAGES_DEBUG"] != nil,
                      "G_MESSAGES_DEBUG is set: GLib shows debug messages, nothing is dropped")
        seenLock.lock(); seen = []; seenLock.unlock()
    }

    private func seenMessages() -> [String] {
        seenLock.lock(); defer { seenLock.unlock() }
        return seen
    }

    /// The real libsoup, linked as the server links it: its per-frame `g_debug` calls come
    /// through the interposed `g_log` (without the interposition the counter stays at 0).
    func testLibsoupDebugMessagesAreDroppedBeforeFormatting() throws {
        let loop = EventLoop(name: "glib-log-test")
        loop.start()
        defer { loop.stop() }
        let server = try HTTPServer(loop: loop, host: "127.0.0.1", port: 0)
        defer { server.stop() }
        let delegate = EchoDelegate()
        server.webSocket(path: "/ws", maxIncomingPayload: 1024, protocols: ["sb.v1"], delegate: delegate)
        let before = GLibLogFilter.dropped
        let got = expectation(description: "echoes")
        var received = 0
        let count = 50
        let client = try WebSocketClient.connectBlocking(loop: loop, url: "ws://127.0.0.1:\(server.boundPort)/ws", onText: { _ in
            received += 1
            if received == count { got.fulfill() }
        })
        defer { client.close(code: 1000, reason: "") }
        for i in 0..<count { client.send(text: "message \(i)") }
        wait(for: [got], timeout: 20)
        let dropped = GLibLogFilter.dropped - before
        // Each frame is sent by one side and received by the other, and libsoup logs both.
        XCTAssertGreaterThanOrEqual(dropped, UInt64(2 * count), "libsoup's debug messages went around the filter")
    }

    func testWarningsAndRequestedDebugMessagesStillReachGLib() {
        let handler = g_log_set_handler(domain, G_LOG_LEVEL_MASK, { _, _, message, _ in
            seenLock.lock(); defer { seenLock.unlock() }
            seen.append(message.map { String(cString: $0) } ?? "")
        }, nil)
        defer { g_log_remove_handler(domain, handler) }

        let before = GLibLogFilter.dropped
        sb_glib_log_message(domain, Int32(G_LOG_LEVEL_WARNING.rawValue), "a warning, 100% kept")
        sb_glib_log_message(domain, Int32(G_LOG_LEVEL_MESSAGE.rawValue), "a message")
        sb_glib_log_message(domain, Int32(G_LOG_LEVEL_DEBUG.rawValue), "a debug message nobody asked for")
        sb_glib_log_message(domain, Int32(G_LOG_LEVEL_INFO.rawValue), "an info message nobody asked for")
        XCTAssertEqual(seenMessages(), ["a warning, 100% kept", "a message"])
        XCTAssertEqual(GLibLogFilter.dropped - before, 2)

        // Asked for (as G_MESSAGES_DEBUG=all does), debug messages reach the handler again.
        g_log_set_debug_enabled(1)
        defer { g_log_set_debug_enabled(0) }
        sb_glib_log_message(domain, Int32(G_LOG_LEVEL_DEBUG.rawValue), "a debug message asked for")
        XCTAssertEqual(seenMessages(), ["a warning, 100% kept", "a message", "a debug message asked for"])
        XCTAssertEqual(GLibLogFilter.dropped - before, 2)
    }
}
