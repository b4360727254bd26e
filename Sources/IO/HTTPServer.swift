import CSoup
import Foundation

/// HTTP/1.1 server and WebSocket endpoint on one port, built on `SoupServer`.
///
/// All handlers and delegate calls run on `loop`'s thread. `init`, `route`, `webSocket` and
/// `stop` may be called from any thread (they hop to the loop and wait); when the loop is not
/// running yet they run inline with the context acquired.
public final class HTTPServer {
    public let loop: EventLoop
    /// Seconds between WebSocket pings sent by libsoup; 0 = off.
    public let keepaliveIntervalSeconds: UInt32
    public private(set) var boundPort: UInt16 = 0

    private var server: UnsafeMutablePointer<SoupServer>?
    private var routes: [Route] = []
    private var endpoints: [String: Endpoint] = [:]
    private var connections: [UInt64: WebSocketConnection] = [:]

    struct Route {
        let method: String
        let prefix: String
        let handler: (HTTPRequest) -> HTTPResponse
    }

    struct Endpoint {
        let maxIncomingPayload: Int
        weak var delegate: WebSocketServerDelegate?
    }

    final class WeakBox {
        weak var server: HTTPServer?
        init(_ server: HTTPServer) { self.server = server }
    }

    /// Listens on `host` (an IP literal, e.g. "127.0.0.1" or "::") and `port` (0 = ephemeral).
    public init(loop: EventLoop, host: String, port: UInt16, keepaliveIntervalSeconds: UInt32 = 0) throws {
        self.loop = loop
        self.keepaliveIntervalSeconds = keepaliveIntervalSeconds
        try loop.sync { try listen(host: host, port: port) }
    }

    deinit {
        if server != nil { stop() }
    }

    private func listen(host: String, port: UInt16) throws {
        guard let address = g_inet_socket_address_new_from_string(host, guint(port)) else {
            throw IOError.bindFailed("not an IP address: \(host)")
        }
        defer { g_object_unref(UnsafeMutableRawPointer(address)) }
        guard let s = sb_soup_server_new("switchboard") else { throw IOError.bindFailed("soup_server_new") }
        var error: UnsafeMutablePointer<GError>?
        // Our own listening socket instead of soup_server_listen: libsoup's default accept
        // backlog is 10, and a burst of thousands of devices reconnecting after a restart
        // overflows it (SYNs dropped, 1 s client retransmits). 4096 = net.core.somaxconn.
        let family = g_socket_address_get_family(UnsafeMutablePointer(OpaquePointer(address)))
        guard let socket = g_socket_new(family, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, &error) else {
            g_object_unref(UnsafeMutableRawPointer(s))
            throw IOError.bindFailed(Soup.consume(error).message)
        }
        defer { g_object_unref(UnsafeMutableRawPointer(socket)) }
        g_socket_set_listen_backlog(socket, 4096)
        if g_socket_bind(socket, UnsafeMutablePointer(OpaquePointer(address)), 1, &error) == 0
            || g_socket_listen(socket, &error) == 0
            || soup_server_listen_socket(s, socket, SoupServerListenOptions(rawValue: 0), &error) == 0 {
            g_object_unref(UnsafeMutableRawPointer(s))
            throw IOError.bindFailed(Soup.consume(error).message)
        }
        server = s
        boundPort = Self.firstPort(s)
        let box = Unmanaged.passRetained(WeakBox(self)).toOpaque()
        soup_server_add_handler(s, nil, { _, msg, _, _, data in
            guard let msg = msg, let data = data else { return }
            Unmanaged<WeakBox>.fromOpaque(data).takeUnretainedValue().server?.handle(msg)
        }, box, { data in Unmanaged<WeakBox>.fromOpaque(data!).release() })
    }

    private static func firstPort(_ s: UnsafeMutablePointer<SoupServer>) -> UInt16 {
        guard let uris = soup_server_get_uris(s) else { return 0 }
        defer { g_slist_free_full(uris) { g_uri_unref(OpaquePointer($0)) } }
        guard let first = uris.pointee.data else { return 0 }
        return UInt16(truncatingIfNeeded: g_uri_get_port(OpaquePointer(first)))
    }

    /// Registers `handler` for `method` and paths under `pathPrefix` (segment-wise: "/api"
    /// matches "/api" and "/api/x", not "/apix"). The longest matching prefix wins; no match
    /// gives 404, a match with another method gives 405 with `Allow`.
    public func route(_ method: String, _ pathPrefix: String, _ handler: @escaping (HTTPRequest) -> HTTPResponse) {
        loop.sync { routes.append(Route(method: method.uppercased(), prefix: pathPrefix, handler: handler)) }
    }

    /// Accepts WebSocket upgrades (RFC 6455 §4.2) on exactly `path`. `protocols`, when given,
    /// are the subprotocols offered for Sec-WebSocket-Protocol negotiation. Messages over
    /// `maxIncomingPayload` bytes make libsoup close the connection with 1009.
    /// The delegate is held weakly.
    ///
    /// `authorize` runs before the 101 answer (libsoup calls a plain handler registered on the
    /// same path first and skips the handshake once it set a status, soup-server.c got_body):
    /// return a response (e.g. 401) to refuse the upgrade, nil to accept.
    /// Note: like every libsoup handler, `path` also covers "path/…" sub-paths.
    public func webSocket(path: String, maxIncomingPayload: Int, protocols: [String]? = nil,
                          delegate: WebSocketServerDelegate,
                          authorize: ((HTTPRequest) -> HTTPResponse?)? = nil) {
        loop.sync {
            guard let s = server else { return }
            endpoints[path] = Endpoint(maxIncomingPayload: maxIncomingPayload, delegate: delegate)
            if let authorize = authorize {
                let gate = Unmanaged.passRetained(BlockGate(authorize)).toOpaque()
                soup_server_add_handler(s, path, { _, msg, _, _, data in
                    guard let msg = msg, let data = data else { return }
                    let gate = Unmanaged<BlockGate>.fromOpaque(data).takeUnretainedValue()
                    if let response = gate.authorize(Soup.request(msg, readBody: false)) {
                        HTTPServer.apply(response, to: msg)
                    }
                }, gate, { data in Unmanaged<BlockGate>.fromOpaque(data!).release() })
            }
            let box = Unmanaged.passRetained(WeakBox(self)).toOpaque()
            withCStringArray(protocols) { protos in
                soup_server_add_websocket_handler(s, path, nil, protos, { _, msg, path, conn, data in
                    guard let msg = msg, let conn = conn, let data = data else { return }
                    Unmanaged<WeakBox>.fromOpaque(data).takeUnretainedValue().server?
                        .accept(msg, path: Soup.string(path), conn: conn)
                }, box, { data in Unmanaged<WeakBox>.fromOpaque(data!).release() })
            }
        }
    }

    /// Open WebSocket connections accepted by this server. Read on the loop thread.
    public var openWebSocketCount: Int { connections.count }

    /// Closes every WebSocket with 1001 (going away), stops listening and drops the server.
    public func stop() {
        loop.sync {
            for c in Array(connections.values) { c.close(code: 1001, reason: "server stopping") }
            guard let s = server else { return }
            server = nil
            soup_server_disconnect(s)
            g_object_unref(UnsafeMutableRawPointer(s))
        }
    }

    // MARK: - Loop thread

    final class BlockGate {
        let authorize: (HTTPRequest) -> HTTPResponse?
        init(_ authorize: @escaping (HTTPRequest) -> HTTPResponse?) { self.authorize = authorize }
    }

    private func handle(_ msg: OpaquePointer) {
        Self.apply(dispatch(Soup.request(msg, readBody: true)), to: msg)
    }

    static func apply(_ response: HTTPResponse, to msg: OpaquePointer) {
        let respHeaders = soup_server_message_get_response_headers(msg)
        var contentType: String?
        for (name, value) in response.headers {
            if name.lowercased() == "content-type" { contentType = value; continue }
            soup_message_headers_replace(respHeaders, name, value)
        }
        soup_server_message_set_status(msg, guint(clamping: response.status), nil)
        response.body.withUnsafeBytes { buf in
            soup_server_message_set_response(msg, contentType, SOUP_MEMORY_COPY,
                                             buf.baseAddress?.assumingMemoryBound(to: CChar.self),
                                             gsize(buf.count))
        }
    }

    func dispatch(_ request: HTTPRequest) -> HTTPResponse {
        let matching = routes.filter { Self.matches(prefix: $0.prefix, path: request.path) }
        guard let longest = matching.map({ $0.prefix.count }).max() else {
            return .jsonError(404, "not_found")
        }
        let candidates = matching.filter { $0.prefix.count == longest }
        let method = request.method.uppercased()
        if let route = candidates.first(where: { $0.method == method })
            ?? (method == "HEAD" ? candidates.first(where: { $0.method == "GET" }) : nil) {
            return route.handler(request)
        }
        var response = HTTPResponse.jsonError(405, "method_not_allowed")
        response.headers["Allow"] = candidates.map(\.method).joined(separator: ", ")
        return response
    }

    static func matches(prefix: String, path: String) -> Bool {
        guard path.hasPrefix(prefix) else { return false }
        if path.count == prefix.count || prefix.hasSuffix("/") { return true }
        return path[path.index(path.startIndex, offsetBy: prefix.count)] == "/"
    }

    private func accept(_ msg: OpaquePointer, path: String, conn: OpaquePointer) {
        guard let endpoint = endpoints[path] else { return }
        let request = Soup.request(msg, readBody: false)
        let fd = soup_server_message_get_socket(msg).map { g_socket_get_fd($0) } ?? -1
        let connection = WebSocketConnection(loop: loop, conn: conn, socketFD: fd,
                                             maxIncomingPayload: endpoint.maxIncomingPayload,
                                             keepaliveIntervalSeconds: keepaliveIntervalSeconds)
        weak var delegate = endpoint.delegate
        connection.onText = { c, text in delegate?.webSocket(c, didReceiveText: text) }
        connection.onBinary = { c, data in delegate?.webSocket(c, didReceiveBinary: data) }
        connection.onClose = { [weak self] c, code, reason in
            self?.connections[c.id] = nil
            delegate?.webSocketDidClose(c, code: code, reason: reason)
        }
        connections[connection.id] = connection
        connection.attach()
        delegate?.webSocketDidOpen(connection, request: request)
    }
}

/// Calls `body` with a NULL-terminated `char **` (or NULL for nil).
func withCStringArray<R>(_ strings: [String]?, _ body: (UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> R) -> R {
    guard let strings = strings else { return body(nil) }
    var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
    pointers.append(nil)
    defer { for p in pointers { free(p) } }
    return pointers.withUnsafeMutableBufferPointer { body($0.baseAddress) }
}
