import CSoup
import Foundation

/// Conversions between libsoup/GLib values and Swift values.
enum Soup {
    static func string(_ p: UnsafePointer<CChar>?) -> String {
        guard let p = p else { return "" }
        return String(cString: p)
    }

    /// All headers, names lowercased, repeated ones joined with ", ".
    static func headers(_ hdrs: OpaquePointer?) -> [String: String] {
        guard let hdrs = hdrs else { return [:] }
        var result: [String: String] = [:]
        var iter = SoupMessageHeadersIter()
        soup_message_headers_iter_init(&iter, hdrs)
        var name: UnsafePointer<CChar>?
        var value: UnsafePointer<CChar>?
        while soup_message_headers_iter_next(&iter, &name, &value) != 0 {
            let key = string(name).lowercased()
            let v = string(value)
            if let existing = result[key] { result[key] = existing + ", " + v } else { result[key] = v }
        }
        return result
    }

    /// Decodes an `application/x-www-form-urlencoded` query string (soup_form_decode).
    static func query(_ uri: OpaquePointer?) -> [String: String] {
        guard let uri = uri, let q = g_uri_get_query(uri) else { return [:] }
        guard let table = soup_form_decode(q) else { return [:] }
        defer { g_hash_table_unref(table) }
        var result: [String: String] = [:]
        var iter = GHashTableIter()
        g_hash_table_iter_init(&iter, table)
        var key: gpointer?
        var value: gpointer?
        while g_hash_table_iter_next(&iter, &key, &value) != 0 {
            guard let k = key, let v = value else { continue }
            result[String(cString: k.assumingMemoryBound(to: CChar.self))] =
                String(cString: v.assumingMemoryBound(to: CChar.self))
        }
        return result
    }

    /// The bytes of a GBytes as a string (UTF-8, invalid sequences repaired), copied once.
    static func text(_ bytes: OpaquePointer?) -> String {
        guard let bytes = bytes else { return "" }
        var size: gsize = 0
        guard let p = g_bytes_get_data(bytes, &size), size > 0 else { return "" }
        return String(decoding: UnsafeBufferPointer(start: p.assumingMemoryBound(to: UInt8.self), count: Int(size)), as: UTF8.self)
    }

    static func data(_ bytes: OpaquePointer?) -> Data {
        guard let bytes = bytes else { return Data() }
        var size: gsize = 0
        guard let p = g_bytes_get_data(bytes, &size), size > 0 else { return Data() }
        return Data(bytes: p, count: Int(size))
    }

    /// Takes ownership of a GError, returning its message.
    static func consume(_ error: UnsafeMutablePointer<GError>?) -> (domain: GQuark, code: Int32, message: String) {
        guard let error = error else { return (0, 0, "unknown error") }
        defer { g_error_free(error) }
        return (error.pointee.domain, error.pointee.code, string(error.pointee.message))
    }

    /// Builds the request of a server message (path, query, headers, body, peer).
    static func request(_ msg: OpaquePointer, readBody: Bool) -> HTTPRequest {
        let uri = soup_server_message_get_uri(msg)
        var body = Data()
        if readBody, let b = soup_server_message_get_request_body(msg) {
            if let flat = soup_message_body_flatten(b) {
                body = data(flat)
                g_bytes_unref(flat)
            }
        }
        return HTTPRequest(
            method: string(soup_server_message_get_method(msg)),
            path: uri.map { string(g_uri_get_path($0)) } ?? "/",
            query: query(uri),
            headers: headers(soup_server_message_get_request_headers(msg)),
            body: body,
            remoteAddress: string(soup_server_message_get_remote_host(msg)))
    }
}
