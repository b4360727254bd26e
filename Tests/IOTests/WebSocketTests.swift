import Foundation
import IO
import XCTest

/// Echo server delegate recording what it saw. Runs on the loop thread only; tests read it
/// through `onLoop`.
final class EchoDelegate: WebSocketServerDelegate {
    var opened: [(WebSocketConnection, HTTPRequest)] = []
    var closes: [(UInt16, String)] = []
    var binaries: [Data] = []
    var closeOnText: (code: UInt16, reason: String)?

    func webSocketDidOpen(_ connection: WebSocketConnection, request: HTTPRequest) {
        opened.append((connection, request))
    }

    func webSocket(_ connection: WebSocketConnection, didReceiveText text: String) {
        if let c = closeOnText {
            connection.close(code: c.code, reason: c.reason)
            return
        }
        connection.send(text: text)
    }

    func webSocket(_ connection: WebSocketConnection, didReceiveBinary data: Data) {
        binaries.append(data)
        connection.send(binary: data)
    }

    func webSocketDidClose(_ connection: WebSocketConnection, code: UInt16, reason: String) {
        closes.append((code, reason))
    }
}

final class WebSocketTests: XCTestCase {
    var loop: EventLoop!
    var server: HTTPServer!
    var delegate: EchoDelegate!
    /// 1 KiB: small enough to trip with a test message, large enough for the echo tests.
    let limit = 1024
    var url: String { "ws://127.0.0.1:\(server.boundPort)/ws" }

    override func setUpWithError() throws {
        loop = EventLoop(name: "ws-test")
        loop.start()
        server = try HTTPServer(loop: loop, host: "127.0.0.1", port: 0)
        delegate = EchoDelegate()
        server.webSocket(path: "/ws", maxIncomingPayload: limit, protocols: ["sb.v1"], delegate: delegate)
    }

    override func tearDown() {
        server.stop()
        loop.stop()
    }

    /// Reads loop-owned state on the loop thread.
    private func onLoop<T>(_ body: @escaping () -> T) -> T {
        let done = DispatchSemaphore(value: 0)
        var value: T?
        loop.execute { value = body(); done.signal() }
        done.wait()
        return value!
    }

    /// Polls `condition` on the loop thread until true or `seconds` elapse.
    private func eventually(_ seconds: Double = 10, _ condition: @escaping () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if onLoop(condition) { return true }
            usleep(2_000)
        }
        return onLoop(condition)
    }

    func testEchoTextManyMessagesInOrder() throws {
        let got = expectation(description: "all echoes")
        var received: [String] = []
        let count = 2_000
        let client = try WebSocketClient.connectBlocking(loop: loop, url: url, onText: { text in
            received.append(text)
            if received.count == count { got.fulfill() }
        })
        for i in 0..<count { client.send(text: "msg \(i) ✓") }
        wait(for: [got], timeout: 20)
        XCTAssertEqual(onLoop { received }, (0..<count).map { "msg \($0) ✓" })
        client.close(code: 1000, reason: "bye")
        XCTAssertTrue(eventually { self.delegate.closes.count == 1 })
        XCTAssertEqual(onLoop { self.delegate.closes.first?.0 }, 1000)
        XCTAssertEqual(onLoop { self.delegate.closes.first?.1 }, "bye")
    }

    func testOpenSeesHeadersProtocolAndRemoteAddress() throws {
        let client = try WebSocketClient.connectBlocking(
            loop: loop, url: url + "?room=r1", headers: ["Authorization": "Bearer abc"], protocols: ["sb.v1"])
        defer { client.close(code: 1000, reason: "") }
        XCTAssertEqual(client.connection.negotiatedProtocol, "sb.v1")
        XCTAssertTrue(eventually { self.delegate.opened.count == 1 })
        let (conn, request) = onLoop { self.delegate.opened[0] }
        XCTAssertEqual(request.path, "/ws")
        XCTAssertEqual(request.query["room"], "r1")
        XCTAssertEqual(request.headers["authorization"], "Bearer abc")
        XCTAssertEqual(request.headers["sec-websocket-protocol"], "sb.v1")
        XCTAssertEqual(request.remoteAddress, "127.0.0.1")
        XCTAssertEqual(request.method, "GET")
        XCTAssertEqual(conn.negotiatedProtocol, "sb.v1")
        XCTAssertTrue(onLoop { conn.isOpen })
        XCTAssertEqual(onLoop { conn.bufferedAmount }, 0)
        XCTAssertEqual(onLoop { self.server.openWebSocketCount }, 1)
    }

    func testBinaryEcho() throws {
        let got = expectation(description: "binary echo")
        let payload = Data((0..<200).map { UInt8($0) })
        let client = try WebSocketClient.connectBlocking(loop: loop, url: url)
        loop.execute {
            client.onBinary = { data in
                XCTAssertEqual(data, payload)
                got.fulfill()
            }
            client.send(binary: payload)
        }
        wait(for: [got], timeout: 10)
        client.close(code: 1000, reason: "")
    }

    /// libsoup 3.2 drops the socket on an over-limit frame without sending a close frame
    /// (soup-websocket-connection.c: too_big_error_and_close closes "with prejudice"), so the
    /// client sees 1006; the server side reports libsoup's error code 1009 to its delegate.
    func testOverLimitMessageClosesConnection1009OnServer1006OnClient() throws {
        let closed = expectation(description: "closed")
        var closeInfo: (UInt16, String)?
        var texts: [String] = []
        let client = try WebSocketClient.connectBlocking(loop: loop, url: url, onText: { texts.append($0) }, onClose: { code, reason in
            closeInfo = (code, reason)
            closed.fulfill()
        })
        // libsoup rejects payloads >= the limit (soup-websocket-connection.c, process_frame:
        // "payload_len >= max_incoming_payload_size"); limit - 1 passes.
        client.send(text: String(repeating: "a", count: limit - 1))
        client.send(text: String(repeating: "b", count: limit + 1))
        wait(for: [closed], timeout: 10)
        XCTAssertEqual(onLoop { closeInfo?.0 }, 1006)
        XCTAssertEqual(onLoop { texts }, [String(repeating: "a", count: limit - 1)])
        XCTAssertTrue(eventually { self.delegate.closes.count == 1 })
        XCTAssertEqual(onLoop { self.delegate.closes[0].0 }, 1009)
        XCTAssertTrue(eventually { self.server.openWebSocketCount == 0 })
    }

    func testServerCloseCodeAndReasonReachClient() throws {
        let closed = expectation(description: "closed")
        var closeInfo: (UInt16, String)?
        onLoop { self.delegate.closeOnText = (4001, "token expired") }
        let client = try WebSocketClient.connectBlocking(loop: loop, url: url, onClose: { code, reason in
            closeInfo = (code, reason)
            closed.fulfill()
        })
        client.send(text: "hello")
        wait(for: [closed], timeout: 10)
        XCTAssertEqual(onLoop { closeInfo?.0 }, 4001)
        XCTAssertEqual(onLoop { closeInfo?.1 }, "token expired")
        XCTAssertFalse(onLoop { client.isOpen })
        XCTAssertTrue(eventually { self.server.openWebSocketCount == 0 })
    }

    func testUpgradeToUnknownPathFailsWithHTTPStatus() {
        XCTAssertThrowsError(try WebSocketClient.connectBlocking(loop: loop, url: "ws://127.0.0.1:\(server.boundPort)/nope")) { error in
            guard case IOError.httpStatus(let status) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(status, 404)
        }
    }

    func testAuthorizeRefusesUpgradeBeforeHandshake() throws {
        let gated = EchoDelegate()
        server.webSocket(path: "/gated", maxIncomingPayload: limit, delegate: gated) { request in
            request.headers["authorization"] == "Bearer good" ? nil : .json(401, Data("{\"error\":\"unauthorized\"}".utf8))
        }
        let gatedURL = "ws://127.0.0.1:\(server.boundPort)/gated"
        XCTAssertThrowsError(try WebSocketClient.connectBlocking(loop: loop, url: gatedURL,
                                                                 headers: ["Authorization": "Bearer bad"])) { error in
            XCTAssertEqual(error as? IOError, .httpStatus(401))
        }
        XCTAssertEqual(onLoop { gated.opened.count }, 0)
        let client = try WebSocketClient.connectBlocking(loop: loop, url: gatedURL, headers: ["Authorization": "Bearer good"])
        XCTAssertTrue(eventually { gated.opened.count == 1 })
        client.close(code: 1000, reason: "")
    }

    func testConnectToClosedPortFails() throws {
        let other = try HTTPServer(loop: loop, host: "127.0.0.1", port: 0)
        let port = other.boundPort
        other.stop()
        XCTAssertThrowsError(try WebSocketClient.connectBlocking(loop: loop, url: "ws://127.0.0.1:\(port)/ws")) { error in
            guard case IOError.connectFailed = error else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try WebSocketClient.connectBlocking(loop: loop, url: "http://x/ws")) { error in
            XCTAssertEqual(error as? IOError, .invalidURL("http://x/ws"))
        }
    }

    func testSendFromAnotherThreadIsDelivered() throws {
        let got = expectation(description: "echo")
        let client = try WebSocketClient.connectBlocking(loop: loop, url: url, onText: { text in
            if text == "from thread" { got.fulfill() }
        })
        DispatchQueue.global().async { client.send(text: "from thread") }
        wait(for: [got], timeout: 10)
        client.close(code: 1000, reason: "")
    }

    func testTwoThousandConnectCloseCyclesLeaveNoConnections() throws {
        // Warm-up: GLib creates a few process-lifetime fds (resolver, worker wakeups) on first use.
        try WebSocketClient.connectBlocking(loop: loop, url: url).close(code: 1000, reason: "warm-up")
        XCTAssertTrue(eventually { self.delegate.closes.count == 1 })
        onLoop { self.delegate.closes.removeAll(); self.delegate.opened.removeAll() }
        let baseline = WebSocketConnection.attachedCount
        let baselineObjects = WebSocketConnection.libsoupConnectionsAlive
        let baselineFDs = Self.openFileDescriptors()
        for i in 0..<2_000 {
            let client = try WebSocketClient.connectBlocking(loop: loop, url: url)
            if i % 2 == 0 {
                client.close(code: 1000, reason: "cycle")
            } else {
                // Half of them leave it to the server to close.
                let conn = onLoop { self.delegate.opened.last!.0 }
                conn.close(code: 1001, reason: "server cycle")
            }
        }
        XCTAssertTrue(eventually(30) { self.delegate.closes.count == 2_000 })
        XCTAssertTrue(eventually { self.server.openWebSocketCount == 0 })
        onLoop { self.delegate.opened.removeAll() }
        // Every libsoup connection (client and server side) detached and was unreferenced.
        XCTAssertTrue(eventually { WebSocketConnection.attachedCount == baseline },
                      "attached: \(WebSocketConnection.attachedCount), baseline \(baseline)")
        XCTAssertEqual(onLoop { self.delegate.closes.filter { $0.0 == 1000 }.count }, 1_000)
        // libsoup finalized every connection object and closed every socket.
        XCTAssertTrue(eventually { WebSocketConnection.libsoupConnectionsAlive == baselineObjects },
                      "alive: \(WebSocketConnection.libsoupConnectionsAlive), baseline \(baselineObjects)")
        XCTAssertTrue(eventually { Self.openFileDescriptors() <= baselineFDs },
                      "fds: \(Self.openFileDescriptors()), baseline \(baselineFDs)")
    }

    func testServerStopClosesOpenSockets() throws {
        let closed = expectation(description: "closed")
        var code: UInt16?
        _ = try WebSocketClient.connectBlocking(loop: loop, url: url, onClose: { c, _ in
            code = c
            closed.fulfill()
        })
        XCTAssertTrue(eventually { self.server.openWebSocketCount == 1 })
        server.stop()
        wait(for: [closed], timeout: 10)
        XCTAssertEqual(onLoop { code }, 1001)
    }

    static func openFileDescriptors() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
    }

    /// Prints echo round trips per second (one message in flight); no assertion on speed.
    func testMeasureEchoRoundTrips() throws {
        let rounds = 5_000
        let done = expectation(description: "rounds")
        var n = 0
        var client: WebSocketClient!
        client = try WebSocketClient.connectBlocking(loop: loop, url: url, onText: { _ in
            n += 1
            if n == rounds { done.fulfill() } else { client.send(text: "ping \(n)") }
        })
        let start = Date()
        client.send(text: "ping 0")
        wait(for: [done], timeout: 60)
        let elapsed = Date().timeIntervalSince(start)
        print(String(format: "WebSocket echo: %d round trips in %.3f s = %.0f/s (one in flight, same loop for client and server)",
                     rounds, elapsed, Double(rounds) / elapsed))
        XCTAssertEqual(onLoop { n }, rounds)
        client.close(code: 1000, reason: "")
    }
}
