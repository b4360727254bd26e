import Foundation
@testable import IO
import XCTest

/// The O(ready) WebSocket path (ReadyDispatcher + ContextCell): server connections keep
/// their libsoup sources in private contexts, epoll picks the ready ones. These tests count
/// the dispatcher's work instead of timing it.
final class ReadyDispatchTests: EchoServerCase {
    var savedPerContext = 4

    override func setUp() {
        savedPerContext = WebSocketConnection.connectionsPerContext
        _ = raiseFileDescriptorLimit()
        super.setUp()
    }

    override func tearDown() {
        super.tearDown()
        WebSocketConnection.connectionsPerContext = savedPerContext
    }

    /// `idle` idle sockets plus one echo socket on one server loop: each echo runs at most a
    /// few context rounds (the frame in; a deferred completion), never one per idle socket,
    /// and re-arming the input source after each read costs no epoll_ctl.
    private func checkEchoWorkIndependentOfIdleCount(idle: Int, perContext: Int) throws {
        WebSocketConnection.connectionsPerContext = perContext
        try startServer()
        let baselineAttached = WebSocketConnection.attachedCount
        var idlers: [WebSocketClient] = []
        for _ in 0 ..< idle { idlers.append(try WebSocketClient.connectBlocking(loop: clientLoop, url: url)) }
        let echoed = DispatchSemaphore(value: 0)
        let active = try WebSocketClient.connectBlocking(loop: clientLoop, url: url, onText: { _ in echoed.signal() })
        XCTAssertTrue(eventually { server.openWebSocketCount == idle + 1 })
        // Let the last handshakes' deferred rounds settle before counting.
        active.send(text: "warm-up")
        XCTAssertEqual(echoed.wait(timeout: .now() + 10), .success)
        let before = serverLoop.webSocketDispatchStats
        XCTAssertEqual(before.connections, idle + 1)
        XCTAssertEqual(before.registeredFDs, idle + 1, "one epoll registration per socket")
        XCTAssertEqual(before.contexts, (idle + 1 + perContext - 1) / perContext)
        let echoes = 200
        for i in 0 ..< echoes {
            active.send(text: "echo \(i)")
            XCTAssertEqual(echoed.wait(timeout: .now() + 10), .success)
        }
        let after = serverLoop.webSocketDispatchStats
        let roundsPerEcho = Double(after.rounds - before.rounds) / Double(echoes)
        print("ReadyDispatch idle=\(idle) perContext=\(perContext): \(roundsPerEcho) rounds/echo, "
              + "\(after.epollControls - before.epollControls) epoll_ctl over \(echoes) echoes, "
              + "\(Double(after.wakeups - before.wakeups) / Double(echoes)) wakeups/echo")
        // Not ≥ 1 per echo: libsoup keeps reading while bytes are there, so a round may take
        // the next frame too (the client answers from another thread). But the frames must
        // be read by dispatcher rounds, not by sources on the main context.
        XCTAssertGreaterThan(after.rounds, before.rounds)
        XCTAssertLessThanOrEqual(roundsPerEcho, 3)
        XCTAssertLessThanOrEqual(after.epollControls - before.epollControls, 4)
        XCTAssertEqual(after.registeredFDs, idle + 1)

        // Close everything: the contexts, registrations and libsoup objects all go away.
        active.close(code: 1000, reason: "done")
        for (i, c) in idlers.enumerated() {
            if i % 2 == 0 { c.close(code: 1000, reason: "done") }
        }
        // The other half is closed by the server (its side of the handshake).
        serverLoop.execute { [delegate] in
            for (c, _) in delegate!.opened where c.isOpen { c.close(code: 1001, reason: "server done") }
        }
        XCTAssertTrue(eventually { server.openWebSocketCount == 0 })
        XCTAssertTrue(eventually { WebSocketConnection.attachedCount == baselineAttached },
                      "attached \(WebSocketConnection.attachedCount) vs \(baselineAttached)")
        XCTAssertTrue(eventually {
            let s = serverLoop.webSocketDispatchStats
            return s.contexts == 0 && s.registeredFDs == 0 && s.connections == 0
        }, "\(serverLoop.webSocketDispatchStats)")
        serverLoop.execute { [delegate] in delegate!.opened.removeAll() }
    }

    func testEchoWorkIsIndependentOfFiveHundredIdleSocketsOneContextEach() throws {
        try checkEchoWorkIndependentOfIdleCount(idle: 500, perContext: 1)
    }

    func testEchoWorkIsIndependentOfFiveHundredIdleSocketsSharedContexts() throws {
        try checkEchoWorkIndependentOfIdleCount(idle: 500, perContext: 4)
    }

    /// Connections closing and opening in rounds: the freed fd numbers come back for new
    /// sockets, in the same context or another one, and a context's registration must follow
    /// (a refresh that finds its fds unchanged skips epoll; one whose fd another context took
    /// over must not). Every open connection echoes after every round, so no socket is left
    /// unregistered, and at the end the registrations are exactly the open sockets.
    func testEveryConnectionEchoesWhileFDNumbersAreReusedAcrossContexts() throws {
        WebSocketConnection.connectionsPerContext = 4
        try startServer()
        final class Echoes: @unchecked Sendable {
            let lock = NSLock()
            var seen: [Int: Int] = [:]
            func add(_ k: Int) { lock.lock(); seen[k, default: 0] += 1; lock.unlock() }
            func count(_ k: Int) -> Int { lock.lock(); defer { lock.unlock() }; return seen[k, default: 0] }
        }
        let echoes = Echoes()
        var open: [(key: Int, client: WebSocketClient)] = []
        var nextKey = 0
        func connect() throws {
            let key = nextKey
            nextKey += 1
            open.append((key, try WebSocketClient.connectBlocking(loop: clientLoop, url: url, onText: { _ in echoes.add(key) })))
        }
        for _ in 0 ..< 16 { try connect() }
        for round in 0 ..< 6 {
            // Close every other one of the first 8 (spread over the first contexts), then
            // open as many: their fds reuse the freed numbers.
            let closing = open.prefix(8).enumerated().filter { $0.offset % 2 == round % 2 }.map(\.element)
            for entry in closing { entry.client.close(code: 1000, reason: "churn") }
            open.removeAll { entry in closing.contains { $0.key == entry.key } }
            XCTAssertTrue(eventually { server.openWebSocketCount == open.count }, "round \(round)")
            for _ in 0 ..< closing.count { try connect() }
            XCTAssertTrue(eventually { server.openWebSocketCount == open.count }, "round \(round)")
            for entry in open {
                let before = echoes.count(entry.key)
                entry.client.send(text: "round \(round)")
                XCTAssertTrue(eventually(5) { echoes.count(entry.key) > before }, "connection \(entry.key) in round \(round)")
            }
        }
        XCTAssertEqual(serverLoop.webSocketDispatchStats.registeredFDs, open.count)
        for entry in open { entry.client.close(code: 1000, reason: "done") }
        XCTAssertTrue(eventually { server.openWebSocketCount == 0 })
    }

    /// Keepalive pings come from a timeout source in the connection's context: the
    /// dispatcher's deadline heap must run it while the socket is idle; the client's pong then
    /// wakes the socket. Without the timer path no round would run at all.
    func testKeepaliveRunsOnIdleConnection() throws {
        try startServer(keepalive: 1)
        let client = try WebSocketClient.connectBlocking(loop: clientLoop, url: url)
        XCTAssertTrue(eventually { server.openWebSocketCount == 1 })
        let before = serverLoop.webSocketDispatchStats
        XCTAssertTrue(eventually { serverLoop.webSocketDispatchStats.rounds >= before.rounds + 4 },
                      "rounds \(serverLoop.webSocketDispatchStats.rounds) vs \(before.rounds)")
        XCTAssertTrue(client.isOpenOnLoop(clientLoop))
        client.close(code: 1000, reason: "")
        XCTAssertTrue(eventually { server.openWebSocketCount == 0 })
    }

    /// A reader that stops reading: libsoup's write would block, it attaches an output source
    /// to the connection's context, and the dispatcher must add EPOLLOUT (then drop it) so
    /// every queued frame still arrives, in order.
    func testBlockedWritesWaitForPollOutAndArriveInOrder() throws {
        try startServer()
        let count = 64
        let lock = NSLock()
        var received: [Int] = []
        let client = try WebSocketClient.connectBlocking(loop: clientLoop, url: url, onText: { text in
            lock.lock(); received.append(Int(text.split(separator: ":")[0]) ?? -1); lock.unlock()
        })
        XCTAssertTrue(eventually { server.openWebSocketCount == 1 })
        let conn = try XCTUnwrap(serverLoop.sync { delegate.opened.first?.0 })
        let before = serverLoop.webSocketDispatchStats
        // Block the client's loop so nothing is read while 64 × 256 KiB are sent.
        let release = DispatchSemaphore(value: 0)
        clientLoop.execute { release.wait() }
        let payload = String(repeating: "x", count: 256 * 1024)
        serverLoop.execute { for i in 0 ..< count { conn.send(text: "\(i):" + payload) } }
        XCTAssertTrue(eventually { serverLoop.webSocketDispatchStats.writeWaits > before.writeWaits })
        release.signal()
        XCTAssertTrue(eventually(30) { lock.lock(); defer { lock.unlock() }; return received.count == count })
        lock.lock(); XCTAssertEqual(received, Array(0 ..< count)); lock.unlock()
        client.close(code: 1000, reason: "")
        XCTAssertTrue(eventually { server.openWebSocketCount == 0 })
    }

    /// Oversized frames and close codes on the new path (the accept path is the only one).
    func testOverLimitFrameStillCloses1009() throws {
        server = try HTTPServer(loop: serverLoop, host: "127.0.0.1", port: 0)
        delegate = EchoDelegate()
        server.webSocket(path: "/ws", maxIncomingPayload: 100, delegate: delegate)
        let closed = DispatchSemaphore(value: 0)
        let client = try WebSocketClient.connectBlocking(loop: clientLoop, url: url, onClose: { _, _ in closed.signal() })
        client.send(text: String(repeating: "z", count: 200))
        XCTAssertEqual(closed.wait(timeout: .now() + 10), .success)
        XCTAssertTrue(eventually { serverLoop.sync { delegate.closes.first?.0 } == 1009 })
        XCTAssertTrue(eventually { serverLoop.webSocketDispatchStats.contexts == 0 })
    }

    /// libsoup handlers also cover "path/…"; an upgrade there has no endpoint and is refused
    /// before the handshake (it used to get a 101 and a dropped socket).
    func testUpgradeOnSubPathIsRefusedWith404() throws {
        try startServer()
        XCTAssertThrowsError(try WebSocketClient.connectBlocking(loop: clientLoop, url: url + "/sub")) { error in
            XCTAssertEqual(error as? IOError, .httpStatus(404))
        }
        XCTAssertEqual(serverLoop.webSocketDispatchStats.contexts, 0)
        XCTAssertEqual(server.openWebSocketCount, 0)
    }

    func testDeadlineHeapPopsInOrderAndOnlyWhenDue() {
        var heap = DeadlineHeap()
        var rng = SystemRandomNumberGenerator()
        var deadlines: [Int64] = []
        for key in 0 ..< 500 {
            let d = Int64.random(in: 0 ..< 10_000, using: &rng)
            deadlines.append(d)
            heap.push(deadline: d, key: UInt64(key))
        }
        XCTAssertNil(heap.popDue(now: deadlines.min()! - 1))
        var popped: [Int64] = []
        while let e = heap.popDue(now: 5_000) { popped.append(e.deadline) }
        XCTAssertEqual(popped, deadlines.filter { $0 <= 5_000 }.sorted())
        XCTAssertEqual(heap.count, deadlines.filter { $0 > 5_000 }.count)
        XCTAssertGreaterThan(heap.earliest ?? 0, 5_000)
    }
}

private extension WebSocketClient {
    func isOpenOnLoop(_ loop: EventLoop) -> Bool { loop.sync { isOpen } }
}
