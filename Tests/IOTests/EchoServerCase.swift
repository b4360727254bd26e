import Foundation
@testable import IO
import XCTest

/// An echo WebSocket server on its own event loop plus a client loop, for tests of the
/// server's WebSocket path (`ReadyDispatchTests`, `CoalescedWritesTests`).
class EchoServerCase: XCTestCase {
    var serverLoop: EventLoop!
    var clientLoop: EventLoop!
    var server: HTTPServer!
    var delegate: EchoDelegate!
    var url: String { "ws://127.0.0.1:\(server.boundPort)/ws" }

    override func setUp() {
        serverLoop = EventLoop(name: "echo-server")
        serverLoop.start()
        clientLoop = EventLoop(name: "echo-client")
        clientLoop.start()
    }

    override func tearDown() {
        server?.stop()
        serverLoop.stop()
        clientLoop.stop()
    }

    func startServer(keepalive: UInt32 = 0) throws {
        server = try HTTPServer(loop: serverLoop, host: "127.0.0.1", port: 0, keepaliveIntervalSeconds: keepalive)
        delegate = EchoDelegate()
        server.webSocket(path: "/ws", maxIncomingPayload: 1 << 20, delegate: delegate)
    }

    /// Polls `condition` every 5 ms for up to `seconds`.
    func eventually(_ seconds: Double = 20, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            usleep(5_000)
        }
        return condition()
    }
}
