import CSoup
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One `SoupServer` on one event loop: the listening socket and the accepted WebSocket
/// connections live here (their libsoup sources in private contexts run by this loop's
/// ``ReadyDispatcher``, see HTTPServerShard+Upgrade.swift). An `HTTPServer` has one shard (on its own loop) or several (each on a
/// thread of its own, all listening on the same port with `SO_REUSEPORT`, the kernel
/// spreading new connections over them).
///
/// Everything here runs on `loop`'s thread, except `post`, which hands events to the
/// owning server's loop.
final class HTTPServerShard {
    let loop: EventLoop
    /// False when the shard runs on the server's own loop: events are delivered inline.
    let isRemote: Bool
    weak var owner: HTTPServer?
    /// The owner's loop, where ``post(_:)`` sends events: kept here so that a frame does not
    /// load `owner` (a weak load is an atomic on the server's side table, which every shard
    /// thread would share).
    private let ownerLoop: EventLoop
    var server: UnsafeMutablePointer<SoupServer>?
    var endpoints: [String: HTTPServer.Endpoint] = [:]
    var connections: [UInt64: WebSocketConnection] = [:]

    /// Events for the owner's loop, in arrival order, drained in one `execute` per batch.
    private let inboxLock = NSLock()
    private var inbox: [HTTPServer.Event] = []
    private var drainScheduled = false

    init(loop: EventLoop, isRemote: Bool, owner: HTTPServer) {
        self.loop = loop
        self.isRemote = isRemote
        self.owner = owner
        ownerLoop = owner.loop
    }

    /// 4096: libsoup's default accept backlog is 10, and a burst of thousands of devices
    /// reconnecting after a restart overflows it (SYNs dropped, 1 s client retransmits).
    /// 4096 = net.core.somaxconn on Debian 12 kernels.
    static let listenBacklog: Int32 = 4096

    /// Creates the listening socket ourselves instead of `soup_server_listen` (which leaves
    /// GSocket's backlog of 10). `reusePort` sets `SO_REUSEPORT` (socket(7)) so that several
    /// shards can bind the same port. Returns the bound port. Loop thread.
    func listen(host: String, port: UInt16, reusePort: Bool) throws -> UInt16 {
        guard let address = g_inet_socket_address_new_from_string(host, guint(port)) else {
            throw IOError.bindFailed("not an IP address: \(host)")
        }
        defer { g_object_unref(UnsafeMutableRawPointer(address)) }
        guard let s = sb_soup_server_new("switchboard") else { throw IOError.bindFailed("soup_server_new") }
        var error: UnsafeMutablePointer<GError>?
        let family = g_socket_address_get_family(UnsafeMutablePointer(OpaquePointer(address)))
        guard let socket = g_socket_new(family, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, &error) else {
            g_object_unref(UnsafeMutableRawPointer(s))
            throw IOError.bindFailed(Soup.consume(error).message)
        }
        defer { g_object_unref(UnsafeMutableRawPointer(socket)) }
        g_socket_set_listen_backlog(socket, Self.listenBacklog)
        let bound: Bool
        if reusePort {
            bound = Self.bindReusingPort(socket, address: UnsafeMutablePointer(OpaquePointer(address)), error: &error)
        } else {
            bound = g_socket_bind(socket, UnsafeMutablePointer(OpaquePointer(address)), 1, &error) != 0
        }
        if !bound
            || g_socket_listen(socket, &error) == 0
            || soup_server_listen_socket(s, socket, SoupServerListenOptions(rawValue: 0), &error) == 0 {
            g_object_unref(UnsafeMutableRawPointer(s))
            throw IOError.bindFailed(Soup.consume(error).message)
        }
        server = s
        let box = Unmanaged.passRetained(WeakShard(self)).toOpaque()
        soup_server_add_handler(s, nil, { _, msg, _, _, data in
            guard let msg = msg, let data = data else { return }
            Unmanaged<WeakShard>.fromOpaque(data).takeUnretainedValue().shard?.handle(msg)
        }, box, { data in Unmanaged<WeakShard>.fromOpaque(data!).release() })
        return Self.firstPort(s)
    }

    /// `port` on `host` if no listener holds it, for shards that bind with `SO_REUSEPORT`
    /// next (port 0 needs no claim, see `HTTPServer.init`): a socket bound without that
    /// option (`g_socket_bind` sets only `SO_REUSEADDR` on stream sockets, which passes
    /// TIME_WAIT but never a listener) fails with EADDRINUSE if any process listens there,
    /// including another server's shards. Closed again before the shards bind; what is left
    /// is the microseconds in between. Any thread.
    static func exclusivePort(host: String, port: UInt16) throws -> UInt16 {
        guard let address = g_inet_socket_address_new_from_string(host, guint(port)) else {
            throw IOError.bindFailed("not an IP address: \(host)")
        }
        defer { g_object_unref(UnsafeMutableRawPointer(address)) }
        var error: UnsafeMutablePointer<GError>?
        let family = g_socket_address_get_family(UnsafeMutablePointer(OpaquePointer(address)))
        guard let socket = g_socket_new(family, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, &error) else {
            throw IOError.bindFailed(Soup.consume(error).message)
        }
        defer {
            g_socket_close(socket, nil)
            g_object_unref(UnsafeMutableRawPointer(socket))
        }
        guard g_socket_bind(socket, UnsafeMutablePointer(OpaquePointer(address)), 1, &error) != 0,
              let local = g_socket_get_local_address(socket, &error) else {
            throw IOError.bindFailed(Soup.consume(error).message)
        }
        defer { g_object_unref(UnsafeMutableRawPointer(local)) }
        return UInt16(g_inet_socket_address_get_port(UnsafeMutablePointer(OpaquePointer(local))))
    }

    /// `SO_REUSEADDR` + `SO_REUSEPORT`, then bind(2) on the fd: `g_socket_bind` cannot be
    /// used here, it resets `SO_REUSEPORT` to 0 on stream sockets (gsocket.c sets it only
    /// for datagram sockets).
    private static func bindReusingPort(_ socket: UnsafeMutablePointer<GSocket>, address: UnsafeMutablePointer<GSocketAddress>,
                                        error: inout UnsafeMutablePointer<GError>?) -> Bool {
        guard g_socket_set_option(socket, SOL_SOCKET, SO_REUSEADDR, 1, &error) != 0,
              g_socket_set_option(socket, SOL_SOCKET, SO_REUSEPORT, 1, &error) != 0 else { return false }
        let size = g_socket_address_get_native_size(address)
        guard size > 0 else {
            g_set_error_literal(&error, g_io_error_quark(), gint(G_IO_ERROR_INVALID_ARGUMENT.rawValue), "bad address")
            return false
        }
        let native = UnsafeMutableRawPointer.allocate(byteCount: Int(size), alignment: 16)
        defer { native.deallocate() }
        guard g_socket_address_to_native(address, native, gsize(size), &error) != 0 else { return false }
        if bind(g_socket_get_fd(socket), native.assumingMemoryBound(to: sockaddr.self), socklen_t(size)) != 0 {
            let code = errno
            g_set_error_literal(&error, g_io_error_quark(), gint(g_io_error_from_errno(code).rawValue),
                                "bind: " + String(cString: strerror(code)))
            return false
        }
        return true
    }

    private static func firstPort(_ s: UnsafeMutablePointer<SoupServer>) -> UInt16 {
        guard let uris = soup_server_get_uris(s) else { return 0 }
        defer { g_slist_free_full(uris) { g_uri_unref(OpaquePointer($0)) } }
        guard let first = uris.pointee.data else { return 0 }
        return UInt16(truncatingIfNeeded: g_uri_get_port(OpaquePointer(first)))
    }

    /// Closes every WebSocket with 1001 and stops listening. Loop thread.
    func stop() {
        for c in Array(connections.values) { c.close(code: 1001, reason: "server stopping") }
        guard let s = server else { return }
        server = nil
        soup_server_disconnect(s)
        g_object_unref(UnsafeMutableRawPointer(s))
    }

    // MARK: - Requests

    /// A plain HTTP request. On a remote shard the message is paused while the route runs on
    /// the owner's loop (`soup_server_message_pause`), then answered back on this loop.
    private func handle(_ msg: OpaquePointer) {
        guard let owner else { return }
        let request = Soup.request(msg, readBody: true)
        guard isRemote else {
            HTTPServer.apply(owner.dispatch(request), to: msg)
            return
        }
        let message = UnsafeMutableRawPointer(msg)
        g_object_ref(message)
        soup_server_message_pause(msg)
        owner.loop.execute { [weak owner, loop] in
            let response = owner?.dispatch(request) ?? .jsonError(503, "unavailable")
            loop.execute {
                HTTPServer.apply(response, to: OpaquePointer(message))
                soup_server_message_unpause(OpaquePointer(message))
                g_object_unref(message)
            }
        }
    }

    /// Wraps an upgraded connection whose sources live in `cell` and announces it.
    func accept(conn: OpaquePointer, cell: ContextCell, endpoint: HTTPServer.Endpoint,
                request: HTTPRequest, socketFD fd: Int32) {
        guard let owner else { return }
        let connection = WebSocketConnection(loop: loop, conn: conn, socketFD: fd, cell: cell,
                                             maxIncomingPayload: endpoint.maxIncomingPayload,
                                             keepaliveIntervalSeconds: owner.keepaliveIntervalSeconds)
        connection.serverDelegate = endpoint.delegate
        let prepare = endpoint.prepare
        connection.onText = { [weak self] c, text in
            // Read time first: the hand-off time (`switchboard_hub_handoff_microseconds`)
            // includes `prepare`, as it included the parse when the hub did it.
            let readAt = EventLoop.monotonicMicroseconds()
            self?.post(.text(c, text, prepare?(text), readAt))
        }
        connection.onBinary = { [weak self] c, data in self?.post(.binary(c, data)) }
        connection.onClose = { [weak self] c, code, reason in
            guard let self else { return }
            connections[c.id] = nil
            owner.openWebSockets.add(-1)
            post(.closed(c, code, reason))
        }
        connections[connection.id] = connection
        owner.openWebSockets.add(1)
        connection.attach()
        post(.opened(connection, request))
    }

    /// Delivers `event` to the delegate on the owner's loop: inline on a local shard; else
    /// queued, with one `execute` on the owner's loop per batch of events (not per frame), so
    /// a busy shard wakes the hub once per pass of its loop.
    func post(_ event: HTTPServer.Event) {
        guard isRemote else {
            event.deliver()
            return
        }
        inboxLock.lock()
        inbox.append(event)
        let schedule = !drainScheduled
        drainScheduled = true
        inboxLock.unlock()
        if schedule {
            ownerLoop.execute { [self] in drainInbox() }
        }
    }

    private func drainInbox() {
        inboxLock.lock()
        let events = inbox
        inbox.removeAll(keepingCapacity: true)
        drainScheduled = false
        inboxLock.unlock()
        for event in events { event.deliver() }
    }

    final class WeakShard {
        weak var shard: HTTPServerShard?
        init(_ shard: HTTPServerShard) { self.shard = shard }
    }
}

/// A thread-safe counter (open WebSockets over all shards).
final class AtomicCount: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func add(_ delta: Int) { lock.lock(); value += delta; lock.unlock() }
    var current: Int { lock.lock(); defer { lock.unlock() }; return value }
}
