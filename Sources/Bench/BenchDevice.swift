import Foundation
import IO

/// One synthetic device: a WebSocket to the IM channel, authenticated with `hello`
/// (docs/protocol.md §3), through libsoup's `WebSocketClient` or the benchmark's
/// ``LeanWebSocket`` (``PairTransport``). Lives on one event loop; every method runs on that
/// loop's thread.
final class BenchDevice {
    let account: String
    let device: String
    let loop: EventLoop
    let metrics: BenchMetrics
    let transport: PairTransport
    private let token: String
    private(set) var socket: PairSocket?
    /// `welcome` received.
    private(set) var welcomed = false
    /// `caughtUp` received: the backlog of earlier runs is behind us.
    private(set) var caughtUp = false
    private(set) var closed = false
    /// We started the closing handshake: the close is not an error.
    private(set) var closedByUs = false
    /// Highest durable `seq` seen, for `ack` (protocol §3) so outboxes do not grow run over run.
    private(set) var highestSeq: Int64 = 0
    private var ackedSeq: Int64 = 0
    /// `limits.commandsPerSecond` from `welcome` (the server's per-device token bucket).
    private(set) var commandsPerSecond: Int64?
    /// Frames after `caughtUp`, and the state changes.
    var onFrame: ((BenchDevice, FrameScan, String) -> Void)?
    var onWelcome: ((BenchDevice) -> Void)?
    var onCaughtUp: ((BenchDevice) -> Void)?
    var onClose: ((BenchDevice, UInt16) -> Void)?
    var onConnectFailed: ((BenchDevice, IOError) -> Void)?
    /// Once per connect: welcome, connect failure or close before welcome (for throttling).
    var onHandshakeDone: (() -> Void)?

    private func handshakeDone() {
        let done = onHandshakeDone
        onHandshakeDone = nil
        done?()
    }

    init(account: String, device: String, token: String, loop: EventLoop, metrics: BenchMetrics,
         transport: PairTransport = .soup) {
        self.transport = transport
        self.account = account
        self.device = device
        self.token = token
        self.loop = loop
        self.metrics = metrics
    }

    /// Opens the socket and sends `hello`. 64 KiB incoming: the server's default frame limit.
    func connect(url: String) {
        switch transport {
        case .soup:
            WebSocketClient.connect(loop: loop, url: url, maxIncomingPayload: Self.maxIncomingPayload) { [self] result in
                switch result {
                case .failure(let error): connectFailed(error)
                case .success(let client): opened(client)
                }
            }
        case .lean(let home):
            LeanWebSocket.connect(home: home, url: url, maxIncomingPayload: Self.maxIncomingPayload) { [self] result in
                switch result {
                case .failure(let error): connectFailed(error.ioError)
                case .success(let client): opened(client)
                }
            }
        }
    }

    /// 64 KiB: the server's default frame limit.
    static let maxIncomingPayload = 1 << 16

    private func connectFailed(_ error: IOError) {
        closed = true
        onConnectFailed?(self, error)
        handshakeDone()
    }

    private func opened(_ client: PairSocket) {
        socket = client
        // Strong captures: the socket drops both callbacks when it closes, which breaks the
        // cycle. A weak reference would put the device's reference count on Swift's slow
        // (side-table) path for every frame.
        client.onText = { [self] text in received(text) }
        client.onClose = { [self] code, _ in
            closed = true
            socket = nil
            if !closedByUs { onClose?(self, code) }
            handshakeDone()
        }
        send("{\"v\":1,\"type\":\"hello\",\"token\":\"\(token)\"}")
    }

    func send(_ text: String) {
        guard let socket else { return }
        metrics.framesSent += 1
        socket.send(text: text)
    }

    func ping() { send("{\"v\":1,\"type\":\"ping\"}") }

    /// Acknowledges everything seen so far (cheap no-op when nothing is new).
    func ackIfNeeded() {
        guard highestSeq > ackedSeq else { return }
        ackedSeq = highestSeq
        send("{\"v\":1,\"type\":\"ack\",\"cursor\":\"\(highestSeq)\"}")
    }

    func close() {
        closedByUs = true
        socket?.close(code: 1000, reason: "benchmark done")
    }

    private func received(_ text: String) {
        metrics.framesReceived += 1
        FrameScan.with(text) { scan in
            if let seq = scan.leadingSeq(), seq > highestSeq { highestSeq = seq }
            if caughtUp {
                onFrame?(self, scan, text)
            } else if !welcomed {
                if scan.stringEquals(Keys.type, Self.welcomeType) {
                    welcomed = true
                    commandsPerSecond = scan.integer(Keys.commandsPerSecond)
                    onWelcome?(self)
                    handshakeDone()
                }
            } else if scan.stringEquals(Keys.type, Self.caughtUpType) {
                caughtUp = true
                onCaughtUp?(self)
            }
        }
    }

    private static let welcomeType = Array("welcome".utf8)
    private static let caughtUpType = Array("caughtUp".utf8)
}
