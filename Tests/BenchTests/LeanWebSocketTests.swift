@testable import Bench
import Foundation
import IO
import XCTest

/// The lean pair client on real loopback sockets: against a scripted peer (exact bytes:
/// ping, fragments, close) and against the real `switchboard serve` binary.
final class LeanWebSocketTests: XCTestCase {
    /// What the client's callbacks saw, filled on the loop thread.
    final class Seen: @unchecked Sendable {
        let lock = NSLock()
        var texts: [String] = []
        var closes: [UInt16] = []
        var failure: LeanWebSocketError?
        var socket: LeanWebSocket?
        let opened = DispatchSemaphore(value: 0)
        let text = DispatchSemaphore(value: 0)
        let closed = DispatchSemaphore(value: 0)
    }

    func start(_ loop: EventLoop, url: String) -> (LeanSocketLoop?, Seen) {
        let seen = Seen()
        let home = DispatchSemaphore(value: 0)
        var lean: LeanSocketLoop?
        loop.execute {
            lean = LeanSocketLoop(loop: loop)
            home.signal()
            guard let lean else { return }
            LeanWebSocket.connect(home: lean, url: url, maxIncomingPayload: 1 << 16) { result in
                switch result {
                case .success(let socket):
                    seen.socket = socket
                    socket.onText = { text in seen.lock.lock(); seen.texts.append(text); seen.lock.unlock(); seen.text.signal() }
                    socket.onClose = { code, _ in seen.lock.lock(); seen.closes.append(code); seen.lock.unlock(); seen.closed.signal() }
                case .failure(let error):
                    seen.failure = error
                }
                seen.opened.signal()
            }
        }
        home.wait()
        return (lean, seen)
    }

    func answer(_ peer: ScriptedPeer, head: String) {
        let key = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("sec-websocket-key:") }
            .map { $0.split(separator: ":", maxSplits: 1)[1].trimmingCharacters(in: .whitespaces) } ?? ""
        peer.write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Accept: \(LeanHandshake.accept(key: key))\r\n\r\n")
    }

    /// Upgrade, a §5.7 ping answered by a masked pong with the same body, a fragmented text
    /// delivered whole, three sends in one loop turn written with one send(2), and the
    /// server-initiated close echoed before the server closes TCP.
    func testScriptedPeerPingFragmentsBatchAndClose() throws {
        let peer = try ScriptedPeer()
        let loop = EventLoop(name: "lean-test")
        loop.start()
        defer { loop.stop() }
        let (lean, seen) = start(loop, url: peer.url)
        let home = try XCTUnwrap(lean)
        try peer.accept()
        let head = try peer.readHead()
        XCTAssertTrue(head.hasPrefix("GET /v1/ws HTTP/1.1\r\n"), head)
        XCTAssertTrue(head.contains("\r\nSec-WebSocket-Version: 13"), head)
        answer(peer, head: head)
        XCTAssertEqual(seen.opened.wait(timeout: .now() + 5), .success)
        XCTAssertNil(seen.failure)

        peer.write(LeanFrameTests.unmaskedPing)
        let pong = try peer.readFrame()
        XCTAssertEqual(pong.opcode, LeanFrame.pong)
        XCTAssertTrue(pong.fin && pong.masked, "client frames are masked (RFC 6455 §5.1)")
        XCTAssertEqual(pong.payload, Array("Hello".utf8))

        peer.write(LeanFrameTests.fragmentedHello)
        XCTAssertEqual(seen.text.wait(timeout: .now() + 5), .success)
        seen.lock.lock(); XCTAssertEqual(seen.texts, ["Hello"]); seen.lock.unlock()

        // Three frames queued in one turn of the loop leave in one send(2).
        let before = DispatchSemaphore(value: 0)
        var statsBefore = LeanSocketLoop.Stats()
        loop.execute {
            statsBefore = home.stats
            seen.socket?.send(text: "one")
            seen.socket?.send(text: "two")
            seen.socket?.send(text: String(repeating: "3", count: 300))
            before.signal()
        }
        XCTAssertEqual(before.wait(timeout: .now() + 5), .success)
        XCTAssertEqual(try peer.readFrame().payload, Array("one".utf8))
        XCTAssertEqual(try peer.readFrame().payload, Array("two".utf8))
        let third = try peer.readFrame()
        XCTAssertEqual(third.payload.count, 300)
        XCTAssertTrue(third.masked)
        let statsAfter = loop.syncValue { home.stats }
        XCTAssertEqual(statsAfter.frames - statsBefore.frames, 3)
        XCTAssertEqual(statsAfter.sends - statsBefore.sends, 1, "one write for the three frames")

        // The server closes: the client echoes the code (§5.5.1), then the server closes TCP.
        peer.write([0x88, 0x02, 0x03, 0xE9])
        let echo = try peer.readFrame()
        XCTAssertEqual(echo.opcode, LeanFrame.close)
        XCTAssertEqual(echo.payload, [0x03, 0xE9])
        peer.closeConnection()
        XCTAssertEqual(seen.closed.wait(timeout: .now() + 5), .success)
        seen.lock.lock(); XCTAssertEqual(seen.closes, [1001]); seen.lock.unlock()
        XCTAssertEqual(loop.syncValue { home.openSockets }, 0)
    }

    /// A 403 to the upgrade and a wrong accept value fail the connect with typed errors.
    func testRefusedUpgradesFailTheConnect() throws {
        let loop = EventLoop(name: "lean-test")
        loop.start()
        defer { loop.stop() }
        for (reply, expected) in [("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n", LeanWebSocketError.handshakeStatus(403)),
                                  ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                                      + "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n", .handshakeRejected("accept"))] {
            let peer = try ScriptedPeer()
            let (lean, seen) = start(loop, url: peer.url)
            try peer.accept()
            _ = try peer.readHead()
            peer.write(reply)
            XCTAssertEqual(seen.opened.wait(timeout: .now() + 5), .success)
            XCTAssertEqual(seen.failure, expected)
            XCTAssertNil(seen.socket)
            XCTAssertEqual(loop.syncValue { lean?.openSockets }, 0)
        }
    }

    /// Nothing listens: the connect fails with `connectFailed(ECONNREFUSED)`.
    func testRefusedConnectIsATypedError() throws {
        let peer = try ScriptedPeer()
        let url = peer.url
        peer.closeListener()  // the port is free again, nobody accepts
        let loop = EventLoop(name: "lean-test")
        loop.start()
        defer { loop.stop() }
        let (_, seen) = start(loop, url: url)
        XCTAssertEqual(seen.opened.wait(timeout: .now() + 5), .success)
        XCTAssertEqual(seen.failure, .connectFailed(ECONNREFUSED))
    }

    /// The real server: a device says `hello`, gets `welcome`, closes with 1000 and the
    /// server completes the closing handshake.
    func testHelloWelcomeAndCleanCloseAgainstTheServer() throws {
        let server = try BenchServer()
        var options = IdleFleetEndToEndTests.shortRun(against: server)
        options.idle = 0
        let token = SignalingRun(options: options, secret: BenchServer.secret).token(account: "lean-a", device: "d0")
        let loop = EventLoop(name: "lean-test")
        loop.start()
        defer { loop.stop() }
        let (lean, seen) = start(loop, url: server.url)
        XCTAssertEqual(seen.opened.wait(timeout: .now() + 10), .success)
        XCTAssertNil(seen.failure)
        loop.execute { seen.socket?.send(text: "{\"v\":1,\"type\":\"hello\",\"token\":\"\(token)\"}") }
        XCTAssertEqual(seen.text.wait(timeout: .now() + 10), .success)
        seen.lock.lock(); let first = seen.texts.first ?? ""; seen.lock.unlock()
        XCTAssertTrue(first.contains("\"type\":\"welcome\""), first)
        loop.execute { seen.socket?.close(code: 1000, reason: "done") }
        XCTAssertEqual(seen.closed.wait(timeout: .now() + 10), .success)
        seen.lock.lock(); XCTAssertEqual(seen.closes, [1000]); seen.lock.unlock()
        XCTAssertEqual(loop.syncValue { lean?.openSockets }, 0)
    }

    /// `bench signaling --client lean` against the real server: 3 pairs of 4 devices on 2
    /// loops complete setups with no error, every stage measured.
    func testLeanPairsCompleteSetupsAgainstTheServer() throws {
        let server = try BenchServer()
        var options = IdleFleetEndToEndTests.shortRun(against: server)
        options.idle = 0
        options.pairs = 3
        options.pairsPerLoop = 2
        options.calleeDevices = 3
        options.client = .lean
        let report = SignalingRun(options: options, secret: BenchServer.secret).run()

        XCTAssertTrue(report.notes.contains("pair client: lean"), "\(report.notes)")
        XCTAssertEqual(report.pairLoops, 2)
        XCTAssertEqual(report.pairDevicesConnected, 3 * 4)
        XCTAssertGreaterThanOrEqual(report.setupsCompleted, 6, "several setups in 2 s")
        XCTAssertEqual(report.errorCount, 0, "\(report.errors)")
        let setup = report.latencies.first { $0.stage == Stage.setup.rawValue }?.latency
        XCTAssertEqual(setup?.count, report.setupsCompleted)
        for stage in Stage.allCases {
            XCTAssertGreaterThan(report.latencies.first { $0.stage == stage.rawValue }?.latency.count ?? 0, 0, stage.rawValue)
        }
    }
}

extension EventLoop {
    /// `body` on the loop thread, its value back here (tests; never on the loop thread).
    func syncValue<T>(_ body: @escaping () -> T) -> T {
        let done = DispatchSemaphore(value: 0)
        var value: T?
        execute { value = body(); done.signal() }
        done.wait()
        return value!
    }
}
