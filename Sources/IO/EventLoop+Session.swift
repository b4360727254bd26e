import CSoup

extension EventLoop {
    /// The loop's `SoupSession`, created on first use. Loop thread only: libsoup binds async
    /// session operations to the thread-default context of the creating thread.
    func soupSession() -> UnsafeMutablePointer<SoupSession> {
        if let s = sharedSession { return s }
        // 65,535 connections: the benchmark holds 10,000+ WebSockets open from one process,
        // and libsoup's defaults (10 total, 2 per host) would queue their handshakes.
        // Timeout 0: per-request timeouts are enforced with loop timers instead.
        let s = sb_soup_session_new(65_535, 65_535, 0)!
        sharedSession = s
        return s
    }
}

extension Soup {
    /// The fd of the TCP socket under a WebSocket connection's stream, or -1.
    static func socketFD(of conn: OpaquePointer) -> Int32 {
        guard let stream = soup_websocket_connection_get_io_stream(conn) else { return -1 }
        let instance = UnsafeMutableRawPointer(stream).assumingMemoryBound(to: GTypeInstance.self)
        guard g_type_check_instance_is_a(instance, g_socket_connection_get_type()) != 0 else { return -1 }
        let sc = UnsafeMutableRawPointer(stream).assumingMemoryBound(to: GSocketConnection.self)
        guard let socket = g_socket_connection_get_socket(sc) else { return -1 }
        return g_socket_get_fd(socket)
    }

    /// Parses `url` and checks its scheme is one of `schemes`.
    static func validate(url: String, schemes: Set<String>) -> IOError? {
        guard let uri = g_uri_parse(url, G_URI_FLAGS_ENCODED, nil) else { return .invalidURL(url) }
        defer { g_uri_unref(uri) }
        let scheme = string(g_uri_get_scheme(uri)).lowercased()
        guard schemes.contains(scheme), g_uri_get_host(uri) != nil else { return .invalidURL(url) }
        return nil
    }
}
