import Foundation
import IO
import XCTest

/// An endpoint's `prepare` runs on the loop that read the frame — a shard thread when the
/// server has shards — and its result reaches the delegate, on the server's loop, with
/// that frame.
final class WebSocketPrepareTests: XCTestCase {
    /// What `prepare` returns: the text it saw, and whether it ran on a shard's loop.
    struct Prepared: Sendable, Equatable {
        let text: String
        let onShard: Bool
    }

    final class PreparedDelegate: WebSocketServerDelegate {
        var received: [(text: String, prepared: Prepared?)] = []
        var plainCalls = 0
        var offLoopCalls = 0
        let loop: EventLoop
        init(loop: EventLoop) { self.loop = loop }

        func webSocketDidOpen(_ connection: WebSocketConnection, request: HTTPRequest) {}
        func webSocket(_ connection: WebSocketConnection, didReceiveText text: String) { plainCalls += 1 }
        func webSocket(_ connection: WebSocketConnection, didReceiveText text: String, prepared: (any Sendable)?,
                       readAtMicros: Int64) {
            if !loop.isOnLoopThread { offLoopCalls += 1 }
            received.append((text, prepared as? Prepared))
            connection.send(text: "ok")
        }
        func webSocket(_ connection: WebSocketConnection, didReceiveBinary data: Data) {}
        func webSocketDidClose(_ connection: WebSocketConnection, code: UInt16, reason: String) {}
    }

    /// A delegate that implements only the plain method still gets every frame.
    final class PlainDelegate: WebSocketServerDelegate {
        var texts: [String] = []
        func webSocketDidOpen(_ connection: WebSocketConnection, request: HTTPRequest) {}
        func webSocket(_ connection: WebSocketConnection, didReceiveText text: String) {
            texts.append(text)
            connection.send(text: "ok")
        }
        func webSocket(_ connection: WebSocketConnection, didReceiveBinary data: Data) {}
        func webSocketDidClose(_ connection: WebSocketConnection, code: UInt16, reason: String) {}
    }

    func testPrepareRunsOnTheReadingShardAndItsResultComesWithTheFrame() throws {
        try check(shards: 2)
    }

    func testWithOneShardPrepareRunsOnTheServerLoop() throws {
        try check(shards: 1)
    }

    func testADelegateWithoutThePreparedMethodGetsTheFrames() throws {
        let loop = EventLoop(name: "prepare-plain"), clientLoop = EventLoop(name: "prepare-plain-client")
        loop.start(); clientLoop.start()
        defer { clientLoop.stop(); loop.stop() }
        let server = try HTTPServer(loop: loop, host: "127.0.0.1", port: 0, shards: 2)
        defer { server.stop() }
        let delegate = PlainDelegate()
        server.webSocket(path: "/ws", maxIncomingPayload: 4096, delegate: delegate, prepare: { $0.count })
        try exchange(port: server.boundPort, clientLoop: clientLoop, texts: ["a", "bb", "ccc"])
        XCTAssertEqual(onLoop(loop) { delegate.texts }, ["a", "bb", "ccc"])
    }

    /// `prepare` must run on one of `server.shardLoops`: the shard threads, or with one shard
    /// the server's own loop.
    private func check(shards: Int) throws {
        let loop = EventLoop(name: "prepare-\(shards)"), clientLoop = EventLoop(name: "prepare-client-\(shards)")
        loop.start(); clientLoop.start()
        defer { clientLoop.stop(); loop.stop() }
        let server = try HTTPServer(loop: loop, host: "127.0.0.1", port: 0, shards: shards)
        defer { server.stop() }
        let shardLoops = server.shardLoops
        let delegate = PreparedDelegate(loop: loop)
        server.webSocket(path: "/ws", maxIncomingPayload: 4096, delegate: delegate, prepare: { text in
            Prepared(text: text, onShard: shardLoops.contains { $0.isOnLoopThread })
        })
        let texts = (0 ..< 20).map { "frame \($0)" }
        try exchange(port: server.boundPort, clientLoop: clientLoop, texts: texts)
        let received = onLoop(loop) { delegate.received }
        XCTAssertEqual(received.map(\.text), texts)
        XCTAssertEqual(received.map(\.prepared), texts.map { Prepared(text: $0, onShard: true) })
        XCTAssertEqual(onLoop(loop) { delegate.offLoopCalls }, 0)
        XCTAssertEqual(onLoop(loop) { delegate.plainCalls }, 0)
        if shards > 1 { XCTAssertFalse(shardLoops.contains { $0 === loop }) }
    }

    /// Sends `texts` on one connection and waits for one reply per text.
    private func exchange(port: UInt16, clientLoop: EventLoop, texts: [String]) throws {
        let replies = expectation(description: "replies")
        replies.expectedFulfillmentCount = texts.count
        let client = try WebSocketClient.connectBlocking(loop: clientLoop, url: "ws://127.0.0.1:\(port)/ws",
                                                         onText: { _ in replies.fulfill() })
        for text in texts { client.send(text: text) }
        wait(for: [replies], timeout: 10)
        client.close(code: 1000, reason: "done")
    }

    private func onLoop<T>(_ loop: EventLoop, _ body: @escaping () -> T) -> T {
        let done = DispatchSemaphore(value: 0)
        var value: T?
        loop.execute { value = body(); done.signal() }
        done.wait()
        return value!
    }
}
