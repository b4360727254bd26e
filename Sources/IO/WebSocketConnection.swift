import CSoup
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One open WebSocket (RFC 6455), server or client side, wrapping a
/// `SoupWebsocketConnection`. All framing, masking, ping/pong and the closing handshake are
/// libsoup's.
///
/// Sources: a connection created with a ``ContextCell`` (the server side) keeps its libsoup
/// sources in that cell's private `GMainContext`, driven by the loop's ``ReadyDispatcher``
/// (epoll), so idle connections cost the loop nothing per iteration; every libsoup call
/// that may create a source (send, close, keepalive, the final unref) runs with the cell's
/// context pushed as thread-default. Without a cell (the client side) the sources live on
/// the loop's main context.
///
/// Threading: callbacks run on `loop`'s thread. `send`/`close` may be called from any
/// thread; off the loop thread they hop there with `loop.execute`.
public final class WebSocketConnection: Hashable {
    public let id: UInt64
    public let loop: EventLoop
    /// The subprotocol libsoup negotiated (Sec-WebSocket-Protocol), if any.
    public let negotiatedProtocol: String?

    private var conn: OpaquePointer?
    private var selfRetain: Unmanaged<WebSocketConnection>?
    private var handlerIDs: [gulong] = []
    /// Socket fd for `bufferedAmount`; -1 when unknown (client side).
    private let socketFD: Int32
    private var didClose = false
    /// Close code libsoup reported through its "error" signal (e.g. 1009 for an over-limit
    /// frame), used when the socket ends without a close frame from the peer.
    private var localErrorCode: UInt16 = 0
    /// The private context holding this connection's sources; nil on the main-context path.
    let cell: ContextCell?

    var onText: ((WebSocketConnection, String) -> Void)?
    /// Text frames answered on the connection's own loop, before ``onText``: returns true
    /// for a frame it consumed (it then never reaches the server's delegate). Set and read
    /// on the loop thread only; a frame already handed on is not affected by a later set.
    /// Used for heartbeats on the shard threads (docs/benchmarks.md, "Heartbeats on the
    /// shards").
    public var localTextHandler: ((WebSocketConnection, String) -> Bool)?
    /// ``EventLoop/monotonicMilliseconds()`` of the last frame ``localTextHandler``
    /// consumed, 0 before any: written on the loop thread, read from any (the server's idle
    /// check runs on its own loop).
    private let lastLocalText = Atomic<Int64>(0)
    var onBinary: ((WebSocketConnection, Data) -> Void)?
    var onClose: ((WebSocketConnection, UInt16, String) -> Void)?
    /// The server-side delegate this connection's events go to (``HTTPServer/Event``), set
    /// once when the server accepts it; nil on client connections. Read only on the
    /// delegate's loop: an event carries the connection, not a weak reference of its own,
    /// so the shard threads do not copy one per frame (each copy and load is an atomic on
    /// the delegate's side table, shared by every shard thread and the hub).
    weak var serverDelegate: WebSocketServerDelegate?

    private static let idLock = NSLock()
    private static var nextID: UInt64 = 0
    private static var live = 0
    private static var libsoupAlive = 0

    /// `SoupWebsocketConnection` objects wrapped by this module that libsoup has not yet
    /// finalized (tracked with g_object_weak_ref). Returns to 0 when nothing leaks.
    public static var libsoupConnectionsAlive: Int {
        idLock.lock(); defer { idLock.unlock() }
        return libsoupAlive
    }

    /// WebSocketConnection objects currently attached to a libsoup connection (all loops).
    /// Returns to 0 once every socket closed; used by leak tests.
    public static var attachedCount: Int {
        idLock.lock(); defer { idLock.unlock() }
        return live
    }

    /// Takes a new reference on `conn`. Must run on the loop thread.
    /// With `cell`, `conn` must have been created with the cell's context as thread-default;
    /// the connection leaves the cell (``ReadyDispatcher/leave(_:)``) once detached.
    init(loop: EventLoop, conn: OpaquePointer, socketFD: Int32, cell: ContextCell? = nil,
         maxIncomingPayload: Int, keepaliveIntervalSeconds: UInt32) {
        Self.idLock.lock()
        Self.nextID += 1
        id = Self.nextID
        Self.live += 1
        Self.idLock.unlock()
        self.loop = loop
        self.conn = conn
        self.socketFD = socketFD
        self.cell = cell
        let proto = soup_websocket_connection_get_protocol(conn)
        negotiatedProtocol = proto.map { String(cString: $0) }
        g_object_ref(UnsafeMutableRawPointer(conn))
        Self.idLock.lock(); Self.libsoupAlive += 1; Self.idLock.unlock()
        g_object_weak_ref(UnsafeMutablePointer<GObject>(conn), { _, _ in
            WebSocketConnection.idLock.lock()
            WebSocketConnection.libsoupAlive -= 1
            WebSocketConnection.idLock.unlock()
        }, nil)
        if maxIncomingPayload > 0 {
            soup_websocket_connection_set_max_incoming_payload_size(conn, guint64(maxIncomingPayload))
        }
        // The keepalive GSource is attached to the thread-default context.
        inCell { soup_websocket_connection_set_keepalive_interval(conn, guint(keepaliveIntervalSeconds)) }
    }

    /// Runs a libsoup call with the connection's context as thread-default, then lets the
    /// dispatcher re-read what the context waits for (e.g. POLLOUT after a blocked write):
    /// at once, or at the end of an ``EventLoop/coalescingWebSocketWrites(_:)`` scope.
    private func inCell<T>(_ body: () -> T) -> T {
        guard let cell else { return body() }
        let result = cell.with(body)
        cell.refreshSoon()
        return result
    }

    /// Connects libsoup signals. Call after the callbacks are set.
    func attach() {
        guard let conn = conn else { return }
        let me = Unmanaged.passRetained(self)
        selfRetain = me
        let data = me.toOpaque()
        typealias MessageFn = @convention(c) (OpaquePointer?, gint, OpaquePointer?, gpointer?) -> Void
        typealias ClosedFn = @convention(c) (OpaquePointer?, gpointer?) -> Void
        let onMessage: MessageFn = { _, type, bytes, data in
            let c = Unmanaged<WebSocketConnection>.fromOpaque(data!).takeUnretainedValue()
            c.deliver(type: type, bytes: bytes)
        }
        let onClosed: ClosedFn = { _, data in
            let c = Unmanaged<WebSocketConnection>.fromOpaque(data!).takeUnretainedValue()
            c.handleClosed()
        }
        typealias ErrorFn = @convention(c) (OpaquePointer?, UnsafeMutablePointer<GError>?, gpointer?) -> Void
        let onError: ErrorFn = { _, error, data in
            let c = Unmanaged<WebSocketConnection>.fromOpaque(data!).takeUnretainedValue()
            guard let error = error, error.pointee.domain == soup_websocket_error_quark(),
                  c.localErrorCode == 0 else { return }
            c.localErrorCode = UInt16(truncatingIfNeeded: error.pointee.code)
        }
        let instance = UnsafeMutableRawPointer(conn)
        handlerIDs.append(sb_g_signal_connect(instance, "error", unsafeBitCast(onError, to: GCallback.self), data))
        // Without libffi (CSoup's sb_marshal_VOID__INT_BOXED). Connected through GLib's
        // generic marshaller only if libsoup's "message" ever stops being (gint, GBytes), which
        // debug builds, and so the test suite, treat as a failure.
        var messageID = sb_g_signal_connect_int_boxed(instance, "message", unsafeBitCast(onMessage, to: GCallback.self), data)
        if messageID == 0 {
            assertionFailure("SoupWebsocketConnection::message is not (gint, boxed)")
            messageID = sb_g_signal_connect(instance, "message", unsafeBitCast(onMessage, to: GCallback.self), data)
        }
        handlerIDs.append(messageID)
        handlerIDs.append(sb_g_signal_connect(instance, "closed", unsafeBitCast(onClosed, to: GCallback.self), data))
        // The input source exists since construction: register its socket with epoll.
        cell?.refresh()
    }

    private func deliver(type: gint, bytes: OpaquePointer?) {
        if type == gint(SOUP_WEBSOCKET_DATA_TEXT.rawValue) {
            // libsoup validates UTF-8 of text frames (RFC 6455 §8.1) before emitting. The
            // string is made from the GBytes directly: one copy, not a `Data` and then a string.
            let text = Soup.text(bytes)
            if let local = localTextHandler, local(self, text) {
                lastLocalText.store(EventLoop.monotonicMilliseconds(), ordering: .relaxed)
                return
            }
            onText?(self, text)
        } else {
            onBinary?(self, Soup.data(bytes))
        }
    }

    private func handleClosed() {
        guard !didClose, let conn = conn else { return }
        didClose = true
        var code = UInt16(truncatingIfNeeded: soup_websocket_connection_get_close_code(conn))
        // No close frame from the peer: libsoup dropped the socket itself (an over-limit
        // frame gives error 1009 and an immediate close without a close frame, see
        // soup-websocket-connection.c too_big_error_and_close), or the TCP connection ended:
        // RFC 6455 §7.1.5 calls that 1006 (abnormal closure).
        if code == 0 { code = localErrorCode != 0 ? localErrorCode : UInt16(SOUP_WEBSOCKET_CLOSE_ABNORMAL.rawValue) }
        let reason = Soup.string(soup_websocket_connection_get_close_data(conn))
        let callback = onClose
        localTextHandler = nil
        onText = nil
        onBinary = nil
        onClose = nil
        callback?(self, code, reason)
        // Detach outside the signal emission: disconnect our handlers, drop our GObject
        // reference, then the self-retain taken in attach().
        loop.execute { [self] in detach() }
    }

    private func detach() {
        guard let c = conn else { return }
        for h in handlerIDs { g_signal_handler_disconnect(UnsafeMutableRawPointer(c), h) }
        handlerIDs.removeAll()
        conn = nil
        // Finalizing may still touch sources (dispose closes an unclosed stream).
        if let cell {
            cell.with { g_object_unref(UnsafeMutableRawPointer(c)) }
            cell.dispatcher?.leave(cell)
        } else {
            g_object_unref(UnsafeMutableRawPointer(c))
        }
        Self.idLock.lock(); Self.live -= 1; Self.idLock.unlock()
        selfRetain?.release()
        selfRetain = nil
    }

    /// When ``localTextHandler`` last consumed a frame (``EventLoop/monotonicMilliseconds()``),
    /// 0 if never. Any thread.
    public var lastLocallyHandledMilliseconds: Int64 { lastLocalText.load(ordering: .relaxed) }

    /// True while the WebSocket is in the OPEN state. Read on the loop thread.
    public var isOpen: Bool {
        guard let conn = conn, !didClose else { return false }
        return soup_websocket_connection_get_state(conn) == SOUP_WEBSOCKET_STATE_OPEN
    }

    /// Bytes written but not yet acknowledged by the peer's TCP stack (Linux SIOCOUTQ on the
    /// socket). libsoup 3.2 exposes no outgoing-queue size, so this is the kernel backlog:
    /// it grows when the peer stops reading. 0 when unknown (client side) or closed.
    public var bufferedAmount: Int {
        guard socketFD >= 0, isOpen else { return 0 }
        var pending: Int32 = 0
        // 0x5411 = SIOCOUTQ (= TIOCOUTQ) on Linux; not exported by Glibc's Swift overlay.
        guard ioctl(socketFD, 0x5411, &pending) == 0 else { return 0 }
        return Int(pending)
    }

    /// Holds (true) or releases (false) this connection's outgoing TCP segments: Linux
    /// `TCP_CORK` (tcp(7)). While corked, the frames libsoup writes collect in the socket
    /// and leave as full segments when uncorked (or after the kernel's 200 ms ceiling), so
    /// several frames for one peer cross the network stack once instead of once each; the
    /// signaling server corks a connection only while it sends a batch's several frames to
    /// it. Returns false where there is no socket to cork (client side, closed, or the
    /// option refused). Loop thread.
    @discardableResult
    public func setCorked(_ corked: Bool) -> Bool {
        // Not on a detached connection: its fd number may belong to another socket by now.
        guard socketFD >= 0, conn != nil else { return false }
        var value: Int32 = corked ? 1 : 0
        // 3 = TCP_CORK (<netinet/tcp.h>), not exported by Glibc's Swift overlay.
        return setsockopt(socketFD, Int32(IPPROTO_TCP), 3, &value, socklen_t(MemoryLayout<Int32>.size)) == 0
    }

    /// TCP segments this connection's socket has sent so far (`tcpi_segs_out` of Linux
    /// `TCP_INFO`, tcp(7)), including pure ACKs; nil where there is no socket (client side,
    /// closed). Shows whether corking merged several frames into one segment. Loop thread.
    public var segmentsSent: Int? {
        guard socketFD >= 0, conn != nil else { return nil }
        // struct tcp_info of include/uapi/linux/tcp.h: tcpi_segs_out (u32) at byte 136
        // (since Linux 4.2); Glibc's Swift overlay does not export the struct.
        var info = [UInt8](repeating: 0, count: 256)
        var length = socklen_t(info.count)
        // 11 = TCP_INFO (<netinet/tcp.h>).
        let ok = info.withUnsafeMutableBytes { getsockopt(socketFD, Int32(IPPROTO_TCP), 11, $0.baseAddress, &length) } == 0
        guard ok, length >= 140 else { return nil }
        return Int(info.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 136, as: UInt32.self) })
    }

    /// Sends a text frame. Off the loop thread this hops there with one `loop.execute` per
    /// call; a caller with several frames (for connections on other loops) uses a
    /// ``WebSocketSendBatch`` instead, one job per loop.
    public func send(text: String) {
        guard loop.isOnLoopThread else {
            loop.execute { [self] in sendOnLoop(text: text) }
            return
        }
        sendOnLoop(text: text)
    }

    /// ``send(text:)`` on the loop thread.
    func sendOnLoop(text: String) {
        var copy = text
        copy.withUTF8 { sendOnLoop(utf8: $0) }
    }

    /// Sends a text frame given as its UTF-8 bytes (the caller's promise; libsoup checks it
    /// and drops a frame that is not, RFC 6455 §8.1). Off the loop thread this hops there
    /// like ``send(text:)``.
    public func send(utf8: [UInt8]) {
        guard loop.isOnLoopThread else {
            loop.execute { [self] in sendOnLoop(utf8: utf8) }
            return
        }
        sendOnLoop(utf8: utf8)
    }

    /// ``send(utf8:)`` on the loop thread.
    func sendOnLoop(utf8: [UInt8]) {
        utf8.withUnsafeBufferPointer { sendOnLoop(utf8: $0) }
    }

    /// The bytes are wrapped, not copied (`g_bytes_new_static`): libsoup copies them into the
    /// frame it queues (`send_message`: header and payload in one new buffer) before
    /// `soup_websocket_connection_send_message` returns, and keeps no reference to the
    /// `GBytes`, which is released here. `g_bytes_new` copied each frame once more.
    private func sendOnLoop(utf8 buf: UnsafeBufferPointer<UInt8>) {
        guard isOpen, let conn = conn else { return }
        let bytes = g_bytes_new_static(buf.baseAddress, gsize(buf.count))
        inCell { soup_websocket_connection_send_message(conn, SOUP_WEBSOCKET_DATA_TEXT, bytes) }
        g_bytes_unref(bytes)
    }

    public func send(binary: Data) {
        guard loop.isOnLoopThread else {
            loop.execute { [self] in send(binary: binary) }
            return
        }
        guard isOpen, let conn = conn else { return }
        binary.withUnsafeBytes { buf in
            inCell { soup_websocket_connection_send_binary(conn, buf.baseAddress, gsize(buf.count)) }
        }
    }

    /// Starts the closing handshake (RFC 6455 §7.1.2). `webSocketDidClose`/`onClose` follows.
    public func close(code: UInt16, reason: String) {
        guard loop.isOnLoopThread else {
            loop.execute { [self] in closeOnLoop(code: code, reason: reason) }
            return
        }
        closeOnLoop(code: code, reason: reason)
    }

    /// ``close(code:reason:)`` on the loop thread.
    func closeOnLoop(code: UInt16, reason: String) {
        guard isOpen, let conn = conn else { return }
        // RFC 6455 §5.5: control frame payload ≤ 125 bytes, 2 of them the code.
        var trimmed = reason
        while trimmed.utf8.count > 123 { trimmed.removeLast() }
        inCell { soup_websocket_connection_close(conn, gushort(code), trimmed) }
    }

    public static func == (lhs: WebSocketConnection, rhs: WebSocketConnection) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }
}
