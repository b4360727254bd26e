import Foundation
@testable import IO
import XCTest

/// Sends inside ``EventLoop/coalescingWebSocketWrites(_:)`` re-register each connection
/// context once at the end of the scope; corked connections hold their frames until
/// uncorked. Either way every frame arrives, in order.
final class CoalescedWritesTests: EchoServerCase {
    /// A client that records the numbers in the frames it receives ("7:…" → 7).
    private final class Recorder {
        let lock = NSLock()
        var numbers: [Int] = []
        func add(_ text: String) {
            lock.lock(); numbers.append(Int(text.split(separator: ":")[0]) ?? -1); lock.unlock()
        }
        var received: [Int] { lock.lock(); defer { lock.unlock() }; return numbers }
    }

    private func connectClients(_ n: Int) throws -> ([WebSocketClient], [Recorder], [WebSocketConnection]) {
        var clients: [WebSocketClient] = []
        var recorders: [Recorder] = []
        for _ in 0 ..< n {
            let recorder = Recorder()
            clients.append(try WebSocketClient.connectBlocking(loop: clientLoop, url: url, onText: { recorder.add($0) }))
            recorders.append(recorder)
        }
        XCTAssertTrue(eventually { server.openWebSocketCount == n })
        let conns = try XCTUnwrap(serverLoop.sync { delegate.opened.map(\.0) })
        XCTAssertEqual(conns.count, n)
        return (clients, recorders, conns)
    }

    func testSendsInAScopeReRegisterEachContextOnceAndAllArriveInOrder() throws {
        try startServer()
        let (clients, recorders, conns) = try connectClients(3)
        let perConnection = 10
        // On the loop thread, so no dispatcher round runs between the two readings.
        let (before, after, contexts) = serverLoop.sync { () -> (WebSocketDispatchStats, WebSocketDispatchStats, Int) in
            let before = serverLoop.readyDispatcher().stats
            serverLoop.coalescingWebSocketWrites {
                // Nested scopes defer to the outermost one.
                serverLoop.coalescingWebSocketWrites {
                    for i in 0 ..< perConnection { for conn in conns { conn.send(text: "\(i):x") } }
                }
                XCTAssertEqual(serverLoop.readyDispatcher().stats.refreshes, before.refreshes, "refreshed inside the scope")
            }
            let after = serverLoop.readyDispatcher().stats
            return (Self.public(before), Self.public(after), Set(conns.compactMap { $0.cell.map(ObjectIdentifier.init) }).count)
        }
        XCTAssertEqual(after.deferredRefreshes - before.deferredRefreshes, 3 * perConnection)
        // Once per context at the end of the scope, not once per send (30).
        XCTAssertEqual(after.refreshes - before.refreshes, contexts)
        for recorder in recorders {
            XCTAssertTrue(eventually { recorder.received.count == perConnection })
            XCTAssertEqual(recorder.received, Array(0 ..< perConnection))
        }
        // Outside a scope each send refreshes at once, as before.
        let plain = serverLoop.sync { () -> Int in
            let before = serverLoop.readyDispatcher().stats.refreshes
            conns[0].send(text: "\(perConnection):x")
            return serverLoop.readyDispatcher().stats.refreshes - before
        }
        XCTAssertEqual(plain, 1)
        XCTAssertTrue(eventually { recorders[0].received.count == perConnection + 1 })
        for client in clients { client.close(code: 1000, reason: "") }
        XCTAssertTrue(eventually { server.openWebSocketCount == 0 })
    }

    /// A write that blocks inside a scope: libsoup attaches an output source, and the
    /// registration at the end of the scope must ask epoll for POLLOUT, or the queued frames
    /// would never leave.
    func testBlockedWritesInAScopeStillWaitForPollOutAndArriveInOrder() throws {
        try startServer()
        let (clients, recorders, conns) = try connectClients(1)
        let before = serverLoop.webSocketDispatchStats
        let release = DispatchSemaphore(value: 0)
        clientLoop.execute { release.wait() }
        let payload = String(repeating: "x", count: 256 * 1024)
        let count = 64
        serverLoop.execute { [serverLoop] in
            serverLoop!.coalescingWebSocketWrites { for i in 0 ..< count { conns[0].send(text: "\(i):" + payload) } }
        }
        XCTAssertTrue(eventually { serverLoop.webSocketDispatchStats.writeWaits > before.writeWaits })
        release.signal()
        XCTAssertTrue(eventually(30) { recorders[0].received.count == count })
        XCTAssertEqual(recorders[0].received, Array(0 ..< count))
        clients[0].close(code: 1000, reason: "")
        XCTAssertTrue(eventually { server.openWebSocketCount == 0 })
    }

    /// Frames sent while corked all arrive once uncorked, in order, and cork/uncork report
    /// success on a server connection's TCP socket.
    func testCorkedFramesArriveInOrderOnceUncorked() throws {
        try startServer()
        let (clients, recorders, conns) = try connectClients(2)
        let results = serverLoop.sync { () -> [Bool] in
            var results: [Bool] = []
            serverLoop.coalescingWebSocketWrites {
                results.append(conns[0].setCorked(true))
                for i in 0 ..< 20 {
                    conns[0].send(text: "\(i):a")
                    conns[1].send(text: "\(i):b")
                }
                results.append(conns[0].setCorked(false))
            }
            return results
        }
        XCTAssertEqual(results, [true, true])
        for recorder in recorders {
            XCTAssertTrue(eventually { recorder.received.count == 20 })
            XCTAssertEqual(recorder.received, Array(0 ..< 20))
        }
        for client in clients { client.close(code: 1000, reason: "") }
        XCTAssertTrue(eventually { server.openWebSocketCount == 0 })
        // A detached connection has no socket to cork.
        XCTAssertTrue(eventually { serverLoop.sync { !conns[0].setCorked(true) } })
    }

    private static func `public`(_ s: ReadyDispatcher.Stats) -> WebSocketDispatchStats {
        WebSocketDispatchStats(rounds: s.rounds, epollControls: s.epollControls, wakeups: s.wakeups, writeWaits: s.writeWaits,
                               registeredFDs: s.registeredFDs, contexts: s.cells, connections: s.members,
                               refreshes: s.refreshes, deferredRefreshes: s.deferredRefreshes,
                               sendBatches: s.sendBatches, batchCorks: s.batchCorks)
    }
}
