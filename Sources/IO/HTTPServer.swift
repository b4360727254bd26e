import CSoup
import Foundation

/// HTTP/1.1 server and WebSocket endpoint on one port, built on `SoupServer`.
///
/// All route handlers and delegate calls run on `loop`'s thread. The sockets themselves are
/// polled by the server's shards (``HTTPServerShard``): with `shards: 1` that is `loop`
/// itself (one GLib context, as before); with more, each shard is a thread with its own
/// `GMainContext` and `SoupServer` bound to the same port (`SO_REUSEPORT`), and events hop to
/// `loop` in batches while sends hop back (one ``WebSocketSendBatch`` job per shard, or one
/// `execute` per ``WebSocketConnection/send(text:)``). Accepted
/// WebSockets do not keep sources on a shard's main context: their libsoup sources live in
/// private contexts that the shard loop's ``ReadyDispatcher`` (epoll) runs only when their
/// socket is ready or a timeout is due, so idle sockets cost nothing per iteration
/// (docs/benchmarks.md, "O(ready) WebSocket loop").
///
/// `init`, `route`, `webSocket` and `stop` may be called from any thread (they hop to the
/// loops and wait); when `loop` is not running yet they run inline with the context
/// acquired.
public final class HTTPServer {
    public let loop: EventLoop
    /// Seconds between WebSocket pings sent by libsoup; 0 = off.
    public let keepaliveIntervalSeconds: UInt32
    public private(set) var boundPort: UInt16 = 0
    /// The loops that poll sockets: `[loop]` with one shard, else one thread per shard.
    public let shardLoops: [EventLoop]

    private var shards: [HTTPServerShard] = []
    private var routes: [Route] = []
    let openWebSockets = AtomicCount()

    struct Route {
        let method: String
        let prefix: String
        let handler: (HTTPRequest) -> HTTPResponse
    }

    struct Endpoint {
        let maxIncomingPayload: Int
        weak var delegate: WebSocketServerDelegate?
        /// Runs on the reading loop for every text frame, before the hand-off (see
        /// ``HTTPServer/webSocket(path:maxIncomingPayload:protocols:delegate:authorize:prepare:)``).
        let prepare: (@Sendable (String) -> (any Sendable)?)?
    }

    /// A WebSocket event on its way from a shard to the delegate on `loop`: the connection's
    /// ``WebSocketConnection/serverDelegate``, read when it is delivered.
    enum Event {
        case opened(WebSocketConnection, HTTPRequest)
        /// The `Int64`: when the shard read the frame (``EventLoop/monotonicMicroseconds()``);
        /// the optional value: what the endpoint's `prepare` made of it on the shard.
        case text(WebSocketConnection, String, (any Sendable)?, Int64)
        case binary(WebSocketConnection, Data)
        case closed(WebSocketConnection, UInt16, String)

        func deliver() {
            switch self {
            case .opened(let c, let request): c.serverDelegate?.webSocketDidOpen(c, request: request)
            case .text(let c, let text, let prepared, let readAt):
                c.serverDelegate?.webSocket(c, didReceiveText: text, prepared: prepared, readAtMicros: readAt)
            case .binary(let c, let data): c.serverDelegate?.webSocket(c, didReceiveBinary: data)
            case .closed(let c, let code, let reason): c.serverDelegate?.webSocketDidClose(c, code: code, reason: reason)
            }
        }
    }

    /// Listens on `host` (an IP literal, e.g. "127.0.0.1" or "::") and `port` (0 = ephemeral)
    /// with every socket on `loop` (one GLib context).
    public convenience init(loop: EventLoop, host: String, port: UInt16, keepaliveIntervalSeconds: UInt32 = 0) throws {
        try self.init(loop: loop, host: host, port: port, shards: 1, keepaliveIntervalSeconds: keepaliveIntervalSeconds)
    }

    /// Listens with `shards` loops polling the sockets (see the type's documentation). With
    /// `shards > 1` the server starts one thread per shard, named "<loop name>-io-<k>", and
    /// every listening socket has `SO_REUSEPORT` set (socket(7)): the kernel spreads new
    /// connections over them by address hash. Because a socket with that option joins
    /// another process's listeners on the port (same user) instead of failing with
    /// EADDRINUSE, a configured port is first claimed with a socket without it
    /// (`exclusivePort`).
    public init(loop: EventLoop, host: String, port: UInt16, shards: Int, keepaliveIntervalSeconds: UInt32 = 0) throws {
        self.loop = loop
        self.keepaliveIntervalSeconds = keepaliveIntervalSeconds
        let count = max(1, shards)
        shardLoops = count == 1 ? [loop] : (0 ..< count).map { EventLoop(name: "\(loop.name)-io-\($0)") }
        for shardLoop in shardLoops where shardLoop !== loop { shardLoop.start() }
        var port = port
        do {
            // Port 0 needs no claim: TCP's autobind never picks a port that a listener
            // holds, SO_REUSEPORT or not (inet_csk_find_open_port), so the first shard's
            // bind is the claim, atomically; the others bind the port it got.
            if count > 1, port != 0 { port = try HTTPServerShard.exclusivePort(host: host, port: port) }
            for shardLoop in shardLoops {
                let shard = HTTPServerShard(loop: shardLoop, isRemote: shardLoop !== loop, owner: self)
                let bound = try shardLoop.sync { try shard.listen(host: host, port: port, reusePort: count > 1) }
                port = bound
                self.shards.append(shard)
            }
        } catch {
            stop()
            throw error
        }
        boundPort = port
    }

    deinit {
        if !stopped { stop() }
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
    /// The delegate is held weakly; its methods run on `loop`, in order per connection.
    ///
    /// `authorize` runs before the 101 answer (libsoup calls a plain handler registered on the
    /// same path first and skips the handshake once it set a status, soup-server.c got_body):
    /// return a response (e.g. 401) to refuse the upgrade, nil to accept. It runs on the
    /// accepting shard's loop: `loop` with one shard, a shard thread otherwise (so it must
    /// not touch state owned by `loop`).
    /// `prepare`, when given, runs for every text frame on the loop that read it (a shard
    /// thread with several shards), before the frame goes to `loop`; the delegate gets its
    /// result with the frame. For pure per-frame work (parsing) that need not wait for, or
    /// occupy, the server's loop. It must not touch state owned by `loop`.
    /// Note: like every libsoup handler, `path` also covers "path/…" sub-paths.
    public func webSocket(path: String, maxIncomingPayload: Int, protocols: [String]? = nil,
                          delegate: WebSocketServerDelegate,
                          authorize: ((HTTPRequest) -> HTTPResponse?)? = nil,
                          prepare: (@Sendable (String) -> (any Sendable)?)? = nil) {
        let endpoint = Endpoint(maxIncomingPayload: maxIncomingPayload, delegate: delegate, prepare: prepare)
        for shard in shards {
            shard.loop.sync { shard.addWebSocket(path: path, endpoint: endpoint, protocols: protocols, authorize: authorize) }
        }
    }

    /// Open WebSocket connections accepted by this server (all shards). Any thread.
    public var openWebSocketCount: Int { openWebSockets.current }

    private var stopped = false
    /// 1 s: a closing handshake on a local connection takes well under a millisecond; a peer
    /// that does not answer its close frame within this is not waited for at shutdown.
    static let closeGraceMilliseconds: Int64 = 1_000

    /// Closes every WebSocket with 1001 (going away), stops listening, drops the servers and
    /// stops the shard threads. Idempotent.
    public func stop() {
        guard !stopped else { return }
        stopped = true
        for shard in shards { shard.loop.sync { shard.stop() } }
        guard shardLoops.count > 1 else { return }
        // Let the shard loops finish the closing handshakes they just started before they
        // stop (bounded: a peer that never answers is dropped when its loop stops).
        let deadline = EventLoop.monotonicMilliseconds() + Self.closeGraceMilliseconds
        while openWebSocketCount > 0 && EventLoop.monotonicMilliseconds() < deadline { usleep(2_000) }
        for shardLoop in shardLoops { shardLoop.stop() }
    }

    // MARK: - Loop thread

    final class BlockGate {
        let authorize: (HTTPRequest) -> HTTPResponse?
        init(_ authorize: @escaping (HTTPRequest) -> HTTPResponse?) { self.authorize = authorize }
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
}

/// Calls `body` with a NULL-terminated `char **` (or NULL for nil).
func withCStringArray<R>(_ strings: [String]?, _ body: (UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> R) -> R {
    guard let strings = strings else { return body(nil) }
    var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
    pointers.append(nil)
    defer { for p in pointers { free(p) } }
    return pointers.withUnsafeMutableBufferPointer { body($0.baseAddress) }
}
