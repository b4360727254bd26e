import Foundation
import IO

/// A WebSocket client connection on a non-blocking TCP socket in a ``LeanSocketLoop``:
/// RFC 6455 opening handshake (§4.1, ``LeanHandshake``), masked client frames (§5.3,
/// ``LeanFrame``), fragmented messages reassembled (§5.4, ``LeanFrameDecoder``), ping
/// answered with pong (§5.5.2–3), the closing handshake (§5.5.1, §7.1.1–7.1.3), the
/// connection failed on a protocol error (§7.1.7).
///
/// **The benchmark's call-pair client only** (`bench signaling --client lean`): it exists so
/// the load generator costs little CPU next to the server it measures. The server's IM
/// channel keeps libsoup (issue 2 forbids hand-written framing there), and so do the idle
/// fleet, the tests' and the tools' `WebSocketClient`. No TLS (`ws://` only), no extensions.
///
/// Loop thread only. A connection keeps itself alive (in its loop's table) until closed.
final class LeanWebSocket: PairSocket {
    /// 60 s from `connect` to the 101: the libsoup client has no handshake timeout (its
    /// session's timeout is 0) and the run bounds the pair connect phase itself (30 s +
    /// devices ÷ connect rate), so this only keeps a socket from hanging forever. (10 s made
    /// 38 pair devices fail at load 27–33 where the libsoup client would have waited.)
    static let handshakeTimeoutMs: Int64 = 60_000
    /// 2 s for the server to close TCP after the closing handshake (§7.1.1: the server
    /// closes first; a client that waits forever would leak the socket).
    static let closeTimeoutMs: Int64 = 2_000

    enum State: Equatable { case connecting, handshaking, open, closing, closed }

    let home: LeanSocketLoop
    private(set) var state = State.connecting
    private var fd: Int32 = -1
    private let key: String
    private let target: LeanHandshake.Target
    private var decoder: LeanFrameDecoder
    private var inBuffer: [UInt8] = []
    private var outBuffer: [UInt8] = []
    private var outOffset = 0
    private var waitingToWrite = false
    /// In the loop's dirty list (set and cleared by ``LeanSocketLoop``).
    var queuedForFlush = false
    private var connectCompletion: ((Result<LeanWebSocket, LeanWebSocketError>) -> Void)?
    private var timer: TimerHandle?
    private var closeSent = false
    /// The code and reason of the server's close frame (1005: none given, §7.1.5); 1006 when
    /// the connection ended without one (§7.1.5, §7.4.1).
    private var closeCode: UInt16 = 1006
    private var closeReason = ""

    var onText: ((String) -> Void)?
    var onClose: ((UInt16, String) -> Void)?

    private init(home: LeanSocketLoop, target: LeanHandshake.Target, maxIncomingPayload: Int) {
        self.home = home
        self.target = target
        var nonce = [UInt8](repeating: 0, count: 16)
        for i in stride(from: 0, to: 16, by: 8) {
            let word = home.random.next()
            for j in 0 ..< 8 { nonce[i + j] = UInt8(truncatingIfNeeded: word >> (8 * UInt64(j))) }
        }
        key = LeanHandshake.key(nonce)
        decoder = LeanFrameDecoder(maxMessage: maxIncomingPayload)
    }

    /// Opens a connection to `url` (`ws://` only) and runs the opening handshake.
    /// `completion` runs on the loop thread, never inside this call: with the open
    /// connection (set `onText`/`onClose` in it), or with why it failed.
    static func connect(home: LeanSocketLoop, url: String, maxIncomingPayload: Int,
                        completion: @escaping (Result<LeanWebSocket, LeanWebSocketError>) -> Void) {
        let target: LeanHandshake.Target
        do {
            target = try LeanHandshake.Target.parse(url)
        } catch {
            home.loop.execute { completion(.failure(error)) }
            return
        }
        let socket = LeanWebSocket(home: home, target: target, maxIncomingPayload: maxIncomingPayload)
        socket.connectCompletion = completion
        if let error = socket.open() {
            socket.connectCompletion = nil
            home.loop.execute { completion(.failure(error)) }
            return
        }
        // The timer holds the socket until it fires or is cancelled; no weak reference, which
        // would put the socket's reference count on Swift's slow (side-table) path for good.
        socket.timer = home.loop.schedule(afterMilliseconds: handshakeTimeoutMs) {
            guard socket.state == .connecting || socket.state == .handshaking else { return }
            socket.fail(.handshakeTimeout)
        }
    }

    /// socket(2) + non-blocking connect(2) (EINPROGRESS: the epoll set reports writable
    /// when it is done, connect(2) "EINPROGRESS").
    private func open() -> LeanWebSocketError? {
        guard let address = LeanAddress.resolve(host: target.host, port: target.port) else {
            return .resolveFailed(target.host)
        }
        let s = socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard s >= 0 else { return .connectFailed(errno) }
        // No Nagle: frames are already batched per pass, and a delayed small frame would be
        // measured as server latency.
        var one: Int32 = 1
        _ = setsockopt(s, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        let result = address.withSockaddr { Glibc.connect(s, $0, $1) }
        if result != 0 && errno != EINPROGRESS {
            let e = errno
            Glibc.close(s)
            return .connectFailed(e)
        }
        fd = s
        // Registered for writable only until the connect is done (see ready(events:)).
        waitingToWrite = true
        guard home.add(self, fd: s, events: LeanSocketLoop.writable) else {
            let e = errno
            Glibc.close(s)
            fd = -1
            return .connectFailed(e)
        }
        return nil
    }

    // MARK: PairSocket

    /// Queues a text frame (§5.6); written at the end of the loop's pass.
    func send(text: String) {
        guard state == .open else { return }
        LeanFrame.appendMaskedText(text, maskKey: nextMaskKey(), to: &outBuffer)
        home.markDirty(self)
    }

    /// Starts the closing handshake (§7.1.2): a close frame, then wait for the server's
    /// close and its closing of TCP (§7.1.1). Before the upgrade finished: aborts.
    func close(code: UInt16, reason: String) {
        switch state {
        case .open:
            sendClose(code: code, reason: reason)
            closeCode = code
            closeReason = reason
            state = .closing
            armCloseTimer()
        case .connecting, .handshaking:
            fail(.connectFailed(ECANCELED))
        case .closing, .closed:
            break
        }
    }

    /// Closes the socket now, no handshake, no callback (the loop is shutting down).
    func abort() {
        onText = nil
        onClose = nil
        connectCompletion = nil
        finish()
    }

    private func nextMaskKey() -> UInt32 { UInt32(truncatingIfNeeded: home.random.next()) }

    private func sendClose(code: UInt16?, reason: String) {
        guard !closeSent else { return }
        closeSent = true
        let body = code.map { LeanFrame.closePayload(code: $0, reason: reason) } ?? []
        body.withUnsafeBytes { LeanFrame.appendMasked(opcode: LeanFrame.close, payload: $0, maskKey: nextMaskKey(), to: &outBuffer) }
        home.markDirty(self)
    }

    private func armCloseTimer() {
        timer?.cancel()
        timer = home.loop.schedule(afterMilliseconds: Self.closeTimeoutMs) { [self] in finish() }
    }

    // MARK: Readiness (called by the loop's pass)

    func ready(events: UInt32) {
        if state == .connecting {
            // Writable (or error/hang-up): the connect finished; SO_ERROR says how.
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
            guard error == 0 else { fail(.connectFailed(error)); return }
            state = .handshaking
            outBuffer += LeanHandshake.request(target, key: key)
            home.markDirty(self)
            return
        }
        if events & LeanSocketLoop.writable != 0 { flush() }
        if events & ~LeanSocketLoop.writable != 0 { readAvailable() }
    }

    /// One recv(2) into the loop's buffer (level-triggered: more data wakes the next pass).
    private func readAvailable() {
        guard state != .closed else { return }
        let n = home.readBuffer.withUnsafeMutableBytes { Glibc.recv(fd, $0.baseAddress, $0.count, 0) }
        if n < 0 {
            if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return }
            if state == .handshaking { fail(.connectFailed(errno)) } else { finish() }
            return
        }
        if n == 0 {
            // The server closed TCP: the end of a closing handshake, or an abnormal end (1006).
            if state == .handshaking { fail(.connectFailed(ECONNRESET)) } else { finish() }
            return
        }
        home.countRead()
        if inBuffer.isEmpty {
            // Usual case: whole frames; decode straight from the loop's buffer.
            let consumed = home.readBuffer.withUnsafeBufferPointer { consume(UnsafeBufferPointer(rebasing: $0[0 ..< n])) }
            if consumed < n, state != .closed {
                inBuffer.append(contentsOf: home.readBuffer[consumed ..< n])
            }
        } else {
            inBuffer.append(contentsOf: home.readBuffer[0 ..< n])
            let buffered = inBuffer
            let consumed = buffered.withUnsafeBufferPointer { consume($0) }
            if state != .closed { inBuffer.removeFirst(min(consumed, inBuffer.count)) }
        }
    }

    /// Handshake answer and/or frames at the start of `bytes`; how many bytes were used.
    private func consume(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var used = 0
        if state == .handshaking {
            do {
                guard let head = try LeanHandshake.response(bytes, key: key) else { return 0 }
                used = head
            } catch {
                fail(error)
                return bytes.count
            }
            state = .open
            timer?.cancel()
            timer = nil
            let completion = connectCompletion
            connectCompletion = nil
            completion?(.success(self))
            guard state == .open else { return bytes.count }
        }
        guard state == .open || state == .closing else { return bytes.count }
        do {
            used += try decoder.decode(UnsafeBufferPointer(rebasing: bytes[used...])) { message in
                deliver(message)
            }
        } catch {
            // §7.1.7: fail the connection; a close frame with the reason's code first (§7.4.1).
            sendClose(code: error.closeCode, reason: error.code)
            closeCode = error.closeCode
            closeReason = error.code
            flush()
            finish()
            return bytes.count
        }
        return used
    }

    private func deliver(_ message: LeanFrameDecoder.Message) {
        guard state == .open || state == .closing else { return }
        switch message {
        case .text(let text):
            if state == .open { onText?(text) }
        case .binary:
            break  // the IM channel is text only (docs/protocol.md §1)
        case .ping(let payload):
            // §5.5.2: answer with a pong carrying the same data, as soon as practical.
            guard !closeSent else { return }
            payload.withUnsafeBytes { LeanFrame.appendMasked(opcode: LeanFrame.pong, payload: $0, maskKey: nextMaskKey(), to: &outBuffer) }
            home.markDirty(self)
        case .pong:
            break
        case .close(let code, let reason):
            // §5.5.1: echo the code in our own close unless we already sent one; then the
            // server closes TCP (§7.1.1). Ours was first: keep the code we sent.
            if !closeSent {
                closeCode = code ?? 1005
                closeReason = reason
            }
            sendClose(code: code, reason: "")
            state = .closing
            armCloseTimer()
        }
    }

    // MARK: Output

    /// One send(2) of everything queued (MSG_NOSIGNAL: a reset peer is an error, not SIGPIPE).
    func flush() {
        guard fd >= 0, outOffset < outBuffer.count else { return }
        let remaining = outBuffer.count - outOffset
        let n = outBuffer.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + outOffset, remaining, Int32(MSG_NOSIGNAL)) }
        home.countSend()
        if n < 0 {
            if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR {
                waitForWritable(true)
            } else if state == .handshaking {
                fail(.connectFailed(errno))
            } else {
                finish()
            }
            return
        }
        if n == remaining {
            outBuffer.removeAll(keepingCapacity: true)
            outOffset = 0
            waitForWritable(false)
        } else {
            outOffset += n
            waitForWritable(true)
        }
    }

    private func waitForWritable(_ wait: Bool) {
        guard wait != waitingToWrite, fd >= 0 else { return }
        waitingToWrite = wait
        home.modify(fd: fd, events: LeanSocketLoop.readable | (wait ? LeanSocketLoop.writable : 0))
    }

    // MARK: End

    /// The opening handshake failed (completion gets the error) or the open connection
    /// failed (onClose gets the error's close code).
    private func fail(_ error: LeanWebSocketError) {
        closeCode = error.closeCode
        closeReason = error.code
        if let completion = connectCompletion {
            connectCompletion = nil
            onClose = nil
            finish()
            completion(.failure(error))
        } else {
            finish()
        }
    }

    /// Closes the socket and reports the close once.
    private func finish() {
        guard state != .closed else { return }
        state = .closed
        timer?.cancel()
        timer = nil
        if fd >= 0 {
            home.remove(fd: fd)
            Glibc.close(fd)
            fd = -1
        }
        inBuffer = []
        outBuffer = []
        let callback = onClose
        onText = nil
        onClose = nil
        if let completion = connectCompletion {
            connectCompletion = nil
            completion(.failure(.connectFailed(ECONNRESET)))
        }
        callback?(closeCode, closeReason)
    }
}
