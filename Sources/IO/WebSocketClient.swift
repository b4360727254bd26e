import CSoup
import Foundation

/// WebSocket client on the loop's `SoupSession` (tests, the benchmark, the synthetic peer).
///
/// Callbacks run on the loop thread; set them inside the `connect` completion (which also
/// runs there) so no message is missed. A client keeps itself alive until it is closed.
public final class WebSocketClient {
    public let connection: WebSocketConnection
    public var onText: ((String) -> Void)?
    public var onBinary: ((Data) -> Void)?
    public var onClose: ((UInt16, String) -> Void)?

    init(connection: WebSocketConnection) {
        self.connection = connection
        // Strong captures: the client lives as long as the socket; handleClosed() drops them.
        connection.onText = { _, text in self.onText?(text) }
        connection.onBinary = { _, data in self.onBinary?(data) }
        connection.onClose = { _, code, reason in
            let callback = self.onClose
            self.onText = nil
            self.onBinary = nil
            self.onClose = nil
            callback?(code, reason)
        }
        connection.attach()
    }

    public var isOpen: Bool { connection.isOpen }
    public func send(text: String) { connection.send(text: text) }
    public func send(binary: Data) { connection.send(binary: binary) }
    public func close(code: UInt16, reason: String) { connection.close(code: code, reason: reason) }

    /// Opens a WebSocket to `url` (ws:// or wss://). Fails with `.httpStatus` when the server
    /// answered the upgrade with another status, `.connectFailed` when no answer came,
    /// `.invalidURL` for a bad URL. `protocols` are offered as Sec-WebSocket-Protocol.
    public static func connect(loop: EventLoop, url: String, headers: [String: String] = [:],
                               protocols: [String]? = nil, maxIncomingPayload: Int,
                               completion: @escaping (Result<WebSocketClient, IOError>) -> Void) {
        loop.execute {
            if let error = Soup.validate(url: url, schemes: ["ws", "wss"]) {
                completion(.failure(error))
                return
            }
            guard let msg = soup_message_new("GET", url) else {
                completion(.failure(.invalidURL(url)))
                return
            }
            let reqHeaders = soup_message_get_request_headers(msg)
            for (name, value) in headers {
                soup_message_headers_replace(reqHeaders, name, value)
            }
            let pending = PendingConnect(loop: loop, msg: msg, maxIncomingPayload: maxIncomingPayload,
                                         completion: completion)
            withCStringArray(protocols) { protos in
                soup_session_websocket_connect_async(loop.soupSession(), msg, nil, protos, G_PRIORITY_DEFAULT, nil, { source, result, data in
                    let pending = Unmanaged<PendingConnect>.fromOpaque(data!).takeRetainedValue()
                    let session = UnsafeMutableRawPointer(source!).assumingMemoryBound(to: SoupSession.self)
                    var error: UnsafeMutablePointer<GError>?
                    let conn = soup_session_websocket_connect_finish(session, result, &error)
                    pending.finish(conn: conn, error: error)
                }, Unmanaged.passRetained(pending).toOpaque())
            }
        }
    }

    final class PendingConnect {
        let loop: EventLoop
        let msg: OpaquePointer
        let maxIncomingPayload: Int
        let completion: (Result<WebSocketClient, IOError>) -> Void

        init(loop: EventLoop, msg: OpaquePointer, maxIncomingPayload: Int,
             completion: @escaping (Result<WebSocketClient, IOError>) -> Void) {
            self.loop = loop
            self.msg = msg
            self.maxIncomingPayload = maxIncomingPayload
            self.completion = completion
        }

        deinit { g_object_unref(UnsafeMutableRawPointer(msg)) }

        func finish(conn: OpaquePointer?, error: UnsafeMutablePointer<GError>?) {
            guard let conn = conn else {
                let e = Soup.consume(error)
                let status = Int(soup_message_get_status(msg).rawValue)
                if status != 0 && status != 101 {
                    completion(.failure(.httpStatus(status)))
                } else if status == 101 {
                    completion(.failure(.handshakeFailed(e.message)))
                } else {
                    completion(.failure(.connectFailed(e.message)))
                }
                return
            }
            if let error = error { g_error_free(error) }
            let connection = WebSocketConnection(loop: loop, conn: conn, socketFD: Soup.socketFD(of: conn),
                                                 maxIncomingPayload: maxIncomingPayload,
                                                 keepaliveIntervalSeconds: 0)
            // connect_finish returned a full reference; WebSocketConnection took its own.
            g_object_unref(UnsafeMutableRawPointer(conn))
            completion(.success(WebSocketClient(connection: connection)))
        }
    }
}

extension WebSocketClient {
    /// Blocking `connect` for tests and tools. Never call it on the loop thread (it would
    /// deadlock). The handlers are installed on the loop thread before any message arrives.
    public static func connectBlocking(loop: EventLoop, url: String, headers: [String: String] = [:],
                                       protocols: [String]? = nil, maxIncomingPayload: Int = 1 << 20,
                                       timeoutSeconds: Double = 10,
                                       onText: ((String) -> Void)? = nil,
                                       onClose: ((UInt16, String) -> Void)? = nil) throws -> WebSocketClient {
        if loop.isOnLoopThread { throw IOError.connectFailed("connectBlocking called on the loop thread") }
        let done = DispatchSemaphore(value: 0)
        let lock = NSLock()
        var outcome: Result<WebSocketClient, IOError>?
        var abandoned = false
        connect(loop: loop, url: url, headers: headers, protocols: protocols,
                maxIncomingPayload: maxIncomingPayload) { result in
            lock.lock()
            let gaveUp = abandoned
            outcome = result
            lock.unlock()
            if case .success(let client) = result {
                if gaveUp {
                    client.close(code: 1001, reason: "connect timed out")
                } else {
                    client.onText = onText
                    client.onClose = onClose
                }
            }
            done.signal()
        }
        if done.wait(timeout: .now() + timeoutSeconds) == .timedOut {
            lock.lock(); abandoned = true; let late = outcome; lock.unlock()
            if late == nil { throw IOError.timeout }
        }
        lock.lock(); defer { lock.unlock() }
        guard let result = outcome else { throw IOError.timeout }
        return try result.get()
    }
}
