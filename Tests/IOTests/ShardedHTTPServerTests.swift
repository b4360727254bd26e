import Foundation
import IO
import XCTest

/// Delegate that records, per connection, the texts it saw and on which thread; answers
/// every text with "<text>#ack" from the server loop.
final class ThreadCheckingDelegate: WebSocketServerDelegate {
    let loop: EventLoop
    var offLoopCalls = 0
    var opened: [UInt64: WebSocketConnection] = [:]
    var texts: [UInt64: [String]] = [:]
    var closes: [UInt64: UInt16] = [:]
    /// Closed before opened, or text before opened / after closed (must stay 0).
    var orderViolations = 0

    init(loop: EventLoop) { self.loop = loop }

    private func check() { if !loop.isOnLoopThread { offLoopCalls += 1 } }

    func webSocketDidOpen(_ connection: WebSocketConnection, request: HTTPRequest) {
        check()
        opened[connection.id] = connection
    }

    func webSocket(_ connection: WebSocketConnection, didReceiveText text: String) {
        check()
        if opened[connection.id] == nil || closes[connection.id] != nil { orderViolations += 1 }
        texts[connection.id, default: []].append(text)
        connection.send(text: text + "#ack")
    }

    func webSocket(_ connection: WebSocketConnection, didReceiveBinary data: Data) { check() }

    func webSocketDidClose(_ connection: WebSocketConnection, code: UInt16, reason: String) {
        check()
        if opened[connection.id] == nil { orderViolations += 1 }
        closes[connection.id] = code
    }
}

/// An HTTPServer whose sockets live on 4 shard threads (SO_REUSEPORT) while routes and the
/// WebSocket delegate run on the server's own loop.
final class ShardedHTTPServerTests: XCTestCase {
    var loop: EventLoop!
    var clientLoop: EventLoop!
    var server: HTTPServer!
    var delegate: ThreadCheckingDelegate!
    let shards = 4

    override func setUpWithError() throws {
        loop = EventLoop(name: "sharded-test")
        loop.start()
        clientLoop = EventLoop(name: "sharded-client")
        clientLoop.start()
        server = try HTTPServer(loop: loop, host: "127.0.0.1", port: 0, shards: shards)
        delegate = ThreadCheckingDelegate(loop: loop)
        server.webSocket(path: "/ws", maxIncomingPayload: 4096, delegate: delegate)
        server.route("GET", "/where") { [loop] _ in
            .text(200, loop!.isOnLoopThread ? "hub loop" : "elsewhere")
        }
    }

    override func tearDown() {
        server.stop()
        clientLoop.stop()
        loop.stop()
    }

    private func onLoop<T>(_ body: @escaping () -> T) -> T {
        let done = DispatchSemaphore(value: 0)
        var value: T?
        loop.execute { value = body(); done.signal() }
        done.wait()
        return value!
    }

    private func eventually(_ seconds: Double = 10, _ condition: @escaping () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if onLoop(condition) { return true }
            usleep(2_000)
        }
        return onLoop(condition)
    }

    func testShardLoopsAreSeparateThreads() {
        XCTAssertEqual(server.shardLoops.count, shards)
        XCTAssertFalse(server.shardLoops.contains { $0 === loop })
        XCTAssertNotEqual(server.boundPort, 0)
    }

    func testRoutesRunOnTheServerLoopAndAnswerThroughTheShard() throws {
        let client = HTTPClient(loop: clientLoop)
        // Several requests: new connections are spread over the shards by the kernel.
        for _ in 0 ..< 8 {
            let done = expectation(description: "GET")
            var outcome: Result<HTTPClientResponse, IOError>?
            client.send(method: "GET", url: "http://127.0.0.1:\(server.boundPort)/where", headers: ["Connection": "close"],
                        body: nil, timeoutSeconds: 5) { outcome = $0; done.fulfill() }
            wait(for: [done], timeout: 10)
            let response = try XCTUnwrap(outcome).get()
            XCTAssertEqual(response.status, 200)
            XCTAssertEqual(String(decoding: response.body, as: UTF8.self), "hub loop")
        }
    }

    func testManyConnectionsSpreadOverShardsKeepPerConnectionOrderOnTheServerLoop() throws {
        let connections = 32
        let messages = 50
        var replies = [[String]](repeating: [], count: connections)
        let allReplied = expectation(description: "every reply")
        allReplied.expectedFulfillmentCount = connections
        var clients: [WebSocketClient] = []
        for c in 0 ..< connections {
            let client = try WebSocketClient.connectBlocking(loop: clientLoop, url: "ws://127.0.0.1:\(server.boundPort)/ws",
                                                             onText: { text in
                replies[c].append(text)
                if replies[c].count == messages { allReplied.fulfill() }
            })
            clients.append(client)
        }
        // The client sees its handshake complete before the server's shard has reported the
        // connection to the hub loop: wait (bounded) for the last registrations.
        let registered = Date().addingTimeInterval(5)
        while server.openWebSocketCount < connections, Date() < registered { usleep(1_000) }
        XCTAssertEqual(server.openWebSocketCount, connections)
        for (c, client) in clients.enumerated() {
            for m in 0 ..< messages { client.send(text: "c\(c) m\(m)") }
        }
        wait(for: [allReplied], timeout: 30)
        let expected = (0 ..< connections).map { c in (0 ..< messages).map { "c\(c) m\($0)#ack" } }
        let sawReplies = DispatchSemaphore(value: 0)
        var seen: [[String]] = []
        clientLoop.execute { seen = replies; sawReplies.signal() }
        sawReplies.wait()
        XCTAssertEqual(seen, expected)
        // The server saw each connection's texts in order, on its own loop.
        let texts = onLoop { self.delegate.texts.values.sorted { $0.first ?? "" < $1.first ?? "" } }
        XCTAssertEqual(texts.count, connections)
        for list in texts { XCTAssertEqual(list.count, messages) }
        // The connections really live on shard loops, and more than one shard got some.
        let shardNames = onLoop { Set(self.delegate.opened.values.map(\.loop.name)) }
        XCTAssertFalse(shardNames.contains(loop.name))
        XCTAssertGreaterThan(shardNames.count, 1, "32 connections all hashed to one shard: \(shardNames)")

        for client in clients { client.close(code: 1000, reason: "bye") }
        XCTAssertTrue(eventually { self.delegate.closes.count == connections })
        XCTAssertEqual(onLoop { Set(self.delegate.closes.values) }, [1000])
        XCTAssertEqual(onLoop { self.delegate.offLoopCalls }, 0)
        XCTAssertEqual(onLoop { self.delegate.orderViolations }, 0)
        XCTAssertTrue(eventually { self.server.openWebSocketCount == 0 })
    }

    func testStopClosesSocketsOnEveryShardWith1001() throws {
        var codes: [UInt16] = []
        let closed = expectation(description: "all closed")
        closed.expectedFulfillmentCount = 8
        for _ in 0 ..< 8 {
            _ = try WebSocketClient.connectBlocking(loop: clientLoop, url: "ws://127.0.0.1:\(server.boundPort)/ws",
                                                    onClose: { code, _ in codes.append(code); closed.fulfill() })
        }
        XCTAssertTrue(eventually { self.server.openWebSocketCount == 8 })
        server.stop()
        wait(for: [closed], timeout: 10)
        let done = DispatchSemaphore(value: 0)
        var seen: [UInt16] = []
        clientLoop.execute { seen = codes; done.signal() }
        done.wait()
        XCTAssertEqual(seen, [UInt16](repeating: 1001, count: 8))
    }

    func testTwoShardedServersCannotShareAPortWithASingleOne() throws {
        // The single-context form keeps the exclusive bind: it fails on a port in use.
        XCTAssertThrowsError(try HTTPServer(loop: loop, host: "127.0.0.1", port: server.boundPort))
    }
}
