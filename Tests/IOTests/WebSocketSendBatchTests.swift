import Foundation
@testable import IO
import XCTest

/// ``WebSocketSendBatch`` on a server with 2 shard threads: one job per shard per batch, run
/// on the shard thread with corking there, frames in order per connection, nothing written
/// before `submit()`.
final class WebSocketSendBatchTests: XCTestCase {
    private var loop: EventLoop!
    private var clientLoop: EventLoop!
    private var server: HTTPServer!
    private var delegate: EchoDelegate!

    /// Records the numbers in the frames a client receives ("7:…" → 7) and its close code.
    private final class Recorder {
        let lock = NSLock()
        var numbers: [Int] = []
        var closeCode: UInt16?
        func add(_ text: String) { lock.lock(); numbers.append(Int(text.split(separator: ":")[0]) ?? -1); lock.unlock() }
        func closed(_ code: UInt16) { lock.lock(); closeCode = code; lock.unlock() }
        var received: [Int] { lock.lock(); defer { lock.unlock() }; return numbers }
        var code: UInt16? { lock.lock(); defer { lock.unlock() }; return closeCode }
    }

    override func setUpWithError() throws {
        loop = EventLoop(name: "batch-hub")
        loop.start()
        clientLoop = EventLoop(name: "batch-client")
        clientLoop.start()
        server = try HTTPServer(loop: loop, host: "127.0.0.1", port: 0, shards: 2)
        delegate = EchoDelegate()
        server.webSocket(path: "/ws", maxIncomingPayload: 1 << 16, delegate: delegate)
    }

    override func tearDown() {
        server.stop()
        clientLoop.stop()
        loop.stop()
    }

    private func eventually(_ seconds: Double = 20, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            usleep(5_000)
        }
        return condition()
    }

    private func connect(_ n: Int) throws -> ([WebSocketClient], [Recorder], [WebSocketConnection]) {
        var clients: [WebSocketClient] = []
        var recorders: [Recorder] = []
        for _ in 0 ..< n {
            let recorder = Recorder()
            clients.append(try WebSocketClient.connectBlocking(loop: clientLoop, url: "ws://127.0.0.1:\(server.boundPort)/ws",
                                                               onText: { recorder.add($0) },
                                                               onClose: { code, _ in recorder.closed(code) }))
            recorders.append(recorder)
        }
        XCTAssertTrue(eventually { loop.sync { delegate.opened.count } == n })
        // In open order, not the clients' order: the tests send every connection the same
        // sequence, so they need no matching.
        let conns = loop.sync { delegate.opened.map(\.0) }
        return (clients, recorders, conns)
    }

    private func stats(_ loops: [EventLoop]) -> (batches: Int, corks: Int) {
        loops.reduce((0, 0)) { sum, loop in
            let s = loop.webSocketDispatchStats
            return (sum.0 + s.sendBatches, sum.1 + s.batchCorks)
        }
    }

    /// 20 batches from the hub loop, each with 3 frames for each of 16 connections spread
    /// over both shards, and after each batch one plain `send` per connection: every client
    /// gets 0, 1, 2, … in order, each shard ran one job per batch, and every connection was
    /// corked once per batch.
    func testBatchesKeepPerConnectionOrderAcrossTwoShardsWithOneJobPerShard() throws {
        let n = 16, rounds = 20
        let (clients, recorders, conns) = try connect(n)
        let shardLoops = Set(conns.map { ObjectIdentifier($0.loop) })
        XCTAssertFalse(shardLoops.contains(ObjectIdentifier(loop)))
        XCTAssertEqual(shardLoops.count, 2, "16 connections all hashed to one shard")
        let before = stats(server.shardLoops)
        loop.sync {
            for r in 0 ..< rounds {
                var batch = WebSocketSendBatch()
                for i in 0 ..< 3 { for conn in conns { batch.send(text: "\(4 * r + i):x", to: conn) } }
                batch.submit()
                XCTAssertTrue(batch.isEmpty)
                for conn in conns { conn.send(text: "\(4 * r + 3):y") }
            }
        }
        for recorder in recorders {
            XCTAssertTrue(eventually { recorder.received.count == 4 * rounds })
            XCTAssertEqual(recorder.received, Array(0 ..< 4 * rounds))
        }
        let after = stats(server.shardLoops)
        XCTAssertEqual(after.batches - before.batches, 2 * rounds)
        XCTAssertEqual(after.corks - before.corks, n * rounds)
        for client in clients { client.close(code: 1000, reason: "") }
        XCTAssertTrue(eventually { server.openWebSocketCount == 0 })
    }

    /// Nothing is written before `submit()` (the shard's socket has sent no segment after a
    /// round trip through its loop), and the 10 corked frames of one batch leave in at most
    /// two TCP segments (one when the cork holds them all) instead of one each; a close in
    /// a batch comes after the frames queued before it, and a send after it is dropped.
    func testNothingLeavesBeforeSubmitAndCorkedFramesShareASegment() throws {
        let (_, recorders, conns) = try connect(1)
        let conn = conns[0], shard = conn.loop
        XCTAssertFalse(shard === loop)
        let segmentsBefore = try XCTUnwrap(shard.sync { conn.segmentsSent })
        let before = stats([shard])
        var batch = WebSocketSendBatch()
        for i in 0 ..< 10 { batch.send(text: "\(i):z", to: conn) }
        // A round trip through the shard's queue: anything handed to it has run by now.
        XCTAssertEqual(shard.sync { conn.segmentsSent }, segmentsBefore)
        XCTAssertEqual(stats([shard]).batches, before.batches)
        batch.submit()
        XCTAssertTrue(eventually { recorders[0].received.count == 10 })
        XCTAssertEqual(recorders[0].received, Array(0 ..< 10))
        let segments = try XCTUnwrap(shard.sync { conn.segmentsSent }) - segmentsBefore
        XCTAssertGreaterThanOrEqual(segments, 1)
        XCTAssertLessThanOrEqual(segments, 2, "10 corked frames took \(segments) segments")
        let after = stats([shard])
        XCTAssertEqual(after.batches - before.batches, 1)
        XCTAssertEqual(after.corks - before.corks, 1)

        batch.send(text: "10:z", to: conn)
        batch.close(conn, code: 4000, reason: "done")
        batch.send(text: "99:after close", to: conn)
        batch.submit()
        XCTAssertTrue(eventually { recorders[0].code != nil })
        XCTAssertEqual(recorders[0].received, Array(0 ..< 11))
        XCTAssertEqual(recorders[0].code, 4000)
    }

    /// Frames given as UTF-8 bytes (``WebSocketSendBatch/send(utf8:to:)``, the hub's path, and
    /// ``WebSocketConnection/send(utf8:)``) arrive as exactly their text, in order with text
    /// frames, and count for corking like them.
    func testUTF8FramesArriveAsTheirTextInOrderWithTextFrames() throws {
        final class Texts {
            let lock = NSLock()
            var all: [String] = []
            func add(_ text: String) { lock.lock(); all.append(text); lock.unlock() }
            var received: [String] { lock.lock(); defer { lock.unlock() }; return all }
        }
        let texts = Texts()
        let client = try WebSocketClient.connectBlocking(loop: clientLoop, url: "ws://127.0.0.1:\(server.boundPort)/ws",
                                                         onText: { texts.add($0) }, onClose: { _, _ in })
        XCTAssertTrue(eventually { loop.sync { delegate.opened.count } == 1 })
        let conn = try XCTUnwrap(loop.sync { delegate.opened.first?.0 })
        let shard = conn.loop
        let before = stats([shard])
        let sent = ["{\"v\":1,\"sdp\":\"v=0\\r\\ns=caf\u{e9} \u{1F600}\"}", "plain", "", String(repeating: "x\u{e9}", count: 40_000)]
        loop.sync {
            var batch = WebSocketSendBatch()
            batch.send(utf8: Array(sent[0].utf8), to: conn)
            batch.send(text: sent[1], to: conn)
            batch.send(utf8: Array(sent[2].utf8), to: conn)
            batch.submit()
            conn.send(utf8: Array(sent[3].utf8))
        }
        XCTAssertTrue(eventually { texts.received.count == sent.count })
        XCTAssertEqual(texts.received, sent)
        XCTAssertEqual(stats([shard]).corks - before.corks, 1, "three sends to one connection: corked once")
        client.close(code: 1000, reason: "")
        XCTAssertTrue(eventually { server.openWebSocketCount == 0 })
    }

    /// Cork selection: once per connection with ≥ minimum sends, closes not counted.
    func testCorksOnlyConnectionsWithSeveralFrames() {
        let items: [(id: Int, isSend: Bool)] = [(1, true), (2, true), (3, false), (3, true), (2, true), (4, true),
                                                (2, true), (4, true), (1, true)]
        let key: ((id: Int, isSend: Bool)) -> Int? = { $0.isSend ? $0.id : nil }
        XCTAssertEqual(WebSocketSendBatch.itemsToCork(items, minimum: 2, sendKey: key).map(\.id), [2, 4, 1])
        XCTAssertEqual(WebSocketSendBatch.itemsToCork(items, minimum: 3, sendKey: key).map(\.id), [2])
        XCTAssertEqual(WebSocketSendBatch.itemsToCork([(1, true), (1, false)], minimum: 2, sendKey: key).map(\.id), [])
    }
}
