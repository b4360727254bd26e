import CSoup
import CWebSocketStream
import Foundation

/// The WebSocket upgrade (RFC 6455 §4.2) done with libsoup's public handshake API instead of
/// `soup_server_add_websocket_handler`, so that the `SoupWebsocketConnection` is created
/// with a ``ContextCell``'s context as thread-default and its sources never touch the loop's
/// main context. It mirrors libsoup 3.2's own path (soup-server.c got_body and
/// complete_websocket_upgrade): a plain handler runs the optional gate, then
/// `soup_websocket_server_process_handshake` (which answers 400/403 itself on a bad
/// handshake, or sets 101 and the accept key, subprotocol and extension headers); once the
/// 101 is on the wire ("wrote-informational") the stream is stolen and wrapped with
/// `soup_websocket_connection_new`. Framing stays libsoup's.
extension HTTPServerShard {
    /// Registers the upgrade handler (and the optional gate) for `path`. Loop thread.
    func addWebSocket(path: String, endpoint: HTTPServer.Endpoint, protocols: [String]?,
                      authorize: ((HTTPRequest) -> HTTPResponse?)?) {
        guard let s = server else { return }
        endpoints[path] = endpoint
        let upgrade = WebSocketUpgrade(shard: self, path: path, protocols: protocols, authorize: authorize)
        soup_server_add_handler(s, path, { _, msg, _, _, data in
            guard let msg = msg, let data = data else { return }
            Unmanaged<WebSocketUpgrade>.fromOpaque(data).takeUnretainedValue().handle(msg)
        }, Unmanaged.passRetained(upgrade).toOpaque(), { data in
            Unmanaged<WebSocketUpgrade>.fromOpaque(data!).release()
        })
    }
}

/// One registered WebSocket path: subprotocols, supported extensions, gate.
final class WebSocketUpgrade {
    weak var shard: HTTPServerShard?
    let path: String
    let authorize: ((HTTPRequest) -> HTTPResponse?)?
    /// NULL-terminated `char **` of the subprotocols, or nil.
    private let protocols: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
    private let protocolCount: Int
    /// The extension classes offered: permessage-deflate (RFC 7692), as SoupServer does by
    /// default (soup_server_init adds SOUP_TYPE_WEBSOCKET_EXTENSION_DEFLATE).
    private let extensionTypes: UnsafeMutablePointer<GPtrArray>

    init(shard: HTTPServerShard, path: String, protocols: [String]?, authorize: ((HTTPRequest) -> HTTPResponse?)?) {
        self.shard = shard
        self.path = path
        self.authorize = authorize
        if let protocols {
            let array = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: protocols.count + 1)
            for (i, p) in protocols.enumerated() { array[i] = strdup(p) }
            array[protocols.count] = nil
            self.protocols = array
            protocolCount = protocols.count
        } else {
            self.protocols = nil
            protocolCount = 0
        }
        extensionTypes = g_ptr_array_new()
        g_ptr_array_add(extensionTypes, g_type_class_ref(soup_websocket_extension_deflate_get_type()))
    }

    deinit {
        if let protocols {
            for i in 0 ..< protocolCount { free(protocols[i]) }
            protocols.deallocate()
        }
        for i in 0 ..< Int(extensionTypes.pointee.len) {
            g_type_class_unref(extensionTypes.pointee.pdata[i])
        }
        g_ptr_array_unref(extensionTypes)
    }

    /// The plain handler for `path`: gate, then the handshake answer. Loop thread.
    func handle(_ msg: OpaquePointer) {
        // Like libsoup's handler lookup, `path` covers "path/…"; the endpoint is the exact path.
        let uriPath = soup_server_message_get_uri(msg).map { Soup.string(g_uri_get_path($0)) } ?? ""
        guard uriPath == path else {
            soup_server_message_set_status(msg, 404, nil)
            return
        }
        if let authorize, let response = authorize(Soup.request(msg, readBody: false)) {
            HTTPServer.apply(response, to: msg)
            return
        }
        var accepted: UnsafeMutablePointer<GList>?
        guard soup_websocket_server_process_handshake(msg, nil, protocols, extensionTypes, &accepted) != 0 else {
            return
        }
        let fd = soup_server_message_get_socket(msg).map { g_socket_get_fd($0) } ?? -1
        let pending = PendingUpgrade(upgrade: self, extensions: accepted, socketFD: fd)
        typealias WroteFn = @convention(c) (OpaquePointer?, gpointer?) -> Void
        let onWrote: WroteFn = { msg, data in
            guard let msg, let data else { return }
            Unmanaged<PendingUpgrade>.fromOpaque(data).takeUnretainedValue().complete(msg)
        }
        _ = sb_g_signal_connect_full(UnsafeMutableRawPointer(msg), "wrote-informational",
                                     unsafeBitCast(onWrote, to: GCallback.self),
                                     Unmanaged.passRetained(pending).toOpaque(), { data, _ in
                                         Unmanaged<PendingUpgrade>.fromOpaque(data!).release()
                                     })
    }
}

/// A handshake answered with 101, waiting for the answer to be written.
final class PendingUpgrade {
    let upgrade: WebSocketUpgrade
    /// (transfer full) accepted extension objects, handed to soup_websocket_connection_new.
    private var extensions: UnsafeMutablePointer<GList>?
    let socketFD: Int32
    private var done = false

    init(upgrade: WebSocketUpgrade, extensions: UnsafeMutablePointer<GList>?, socketFD: Int32) {
        self.upgrade = upgrade
        self.extensions = extensions
        self.socketFD = socketFD
    }

    deinit {
        if let extensions { g_list_free_full(extensions) { g_object_unref($0) } }
    }

    /// The 101 was written: steal the stream, wrap it in the cell's context. Loop thread.
    func complete(_ msg: OpaquePointer) {
        guard !done else { return }
        done = true
        guard let shard = upgrade.shard, let endpoint = shard.endpoints[upgrade.path], shard.owner != nil else { return }
        let message = UnsafeMutableRawPointer(msg)
        g_object_ref(message)
        defer { g_object_unref(message) }
        let request = Soup.request(msg, readBody: false)
        let origin = soup_message_headers_get_one(soup_server_message_get_request_headers(msg), "Origin").map { String(cString: $0) }
        let proto = soup_message_headers_get_one(soup_server_message_get_response_headers(msg), "Sec-WebSocket-Protocol").map { String(cString: $0) }
        guard let uri = soup_server_message_get_uri(msg) else { return }
        g_uri_ref(uri)
        defer { g_uri_unref(uri) }
        guard let stolen = soup_server_message_steal_connection(msg) else { return }
        defer { g_object_unref(UnsafeMutableRawPointer(stolen)) }
        let dispatcher = shard.loop.readyDispatcher()
        let cell = dispatcher.join()
        // The socket under a stream of our own whose sources the cell polls through its
        // epoll (CWebSocketStream; docs/benchmarks.md, "A stream of our own under libsoup's
        // WebSocket"). The server has no TLS: the stolen stream is a plain TCP connection.
        let stream: UnsafeMutablePointer<GIOStream>
        if socketFD >= 0 {
            stream = sb_ws_stream_new(stolen, socketFD)
            cell.adopt(stream)
        } else {
            stream = stolen
            g_object_ref(UnsafeMutableRawPointer(stream))
        }
        defer { g_object_unref(UnsafeMutableRawPointer(stream)) }
        let list = extensions
        extensions = nil
        let conn: OpaquePointer? = withOptionalCString(origin) { o in
            withOptionalCString(proto) { p in
                cell.with { soup_websocket_connection_new(stream, uri, SOUP_WEBSOCKET_CONNECTION_SERVER, o, p, list) }
            }
        }
        guard let conn else {
            g_io_stream_close(stream, nil, nil)
            dispatcher.leave(cell)
            return
        }
        shard.accept(conn: conn, cell: cell, endpoint: endpoint, request: request, socketFD: socketFD)
        // WebSocketConnection took its own reference.
        g_object_unref(UnsafeMutableRawPointer(conn))
    }
}

/// Calls `body` with a C string for `string`, or NULL for nil.
func withOptionalCString<R>(_ string: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
    guard let string else { return body(nil) }
    return string.withCString { body($0) }
}
