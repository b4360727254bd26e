import CSoup
import Foundation

/// Minimal async HTTP client on the loop's `SoupSession` (used for the push webhook).
/// Completions run on the loop thread; methods may be called from any thread.
public final class HTTPClient {
    public let loop: EventLoop

    public init(loop: EventLoop) { self.loop = loop }

    /// POSTs `body` as `application/json`. Succeeds with the HTTP status code, whatever it
    /// is (the caller decides what a 4xx/5xx means); fails with `.connectFailed` when no
    /// response arrived, `.timeout` after `timeoutSeconds`, `.invalidURL` for a bad URL.
    public func postJSON(url: String, body: Data, headers: [String: String] = [:], timeoutSeconds: UInt32,
                         completion: @escaping (Result<Int, IOError>) -> Void) {
        var all = headers.filter { $0.key.lowercased() != "content-type" }
        all["Content-Type"] = "application/json"
        send(method: "POST", url: url, headers: all, body: body, timeoutSeconds: timeoutSeconds) {
            completion($0.map(\.status))
        }
    }

    /// Sends one request and reads the whole response. Errors as for `postJSON`.
    public func send(method: String, url: String, headers: [String: String] = [:], body: Data? = nil,
                     timeoutSeconds: UInt32, completion: @escaping (Result<HTTPClientResponse, IOError>) -> Void) {
        loop.execute { [loop] in
            if let error = Soup.validate(url: url, schemes: ["http", "https"]) {
                completion(.failure(error))
                return
            }
            guard let msg = soup_message_new(method, url) else {
                completion(.failure(.invalidURL(url)))
                return
            }
            var contentType: String?
            let reqHeaders = soup_message_get_request_headers(msg)
            for (name, value) in headers {
                if name.lowercased() == "content-type" { contentType = value; continue }
                soup_message_headers_replace(reqHeaders, name, value)
            }
            if let body = body {
                let bytes = body.withUnsafeBytes { g_bytes_new($0.baseAddress, gsize($0.count)) }
                soup_message_set_request_body_from_bytes(msg, contentType ?? "application/octet-stream", bytes)
                g_bytes_unref(bytes)
            }
            let request = PendingRequest(msg: msg, completion: completion)
            request.timer = loop.schedule(afterMilliseconds: Int64(timeoutSeconds) * 1000) {
                request.timedOut = true
                g_cancellable_cancel(request.cancellable)
            }
            let session = loop.soupSession()
            soup_session_send_and_read_async(session, msg, G_PRIORITY_DEFAULT, request.cancellable, { source, result, data in
                let request = Unmanaged<PendingRequest>.fromOpaque(data!).takeRetainedValue()
                var error: UnsafeMutablePointer<GError>?
                let session = UnsafeMutableRawPointer(source!).assumingMemoryBound(to: SoupSession.self)
                let bytes = soup_session_send_and_read_finish(session, result, &error)
                let body = Soup.data(bytes)
                if let bytes = bytes { g_bytes_unref(bytes) }
                request.finish(body: body, error: error)
            }, Unmanaged.passRetained(request).toOpaque())
        }
    }

    final class PendingRequest {
        let msg: OpaquePointer
        let cancellable = g_cancellable_new()!
        let completion: (Result<HTTPClientResponse, IOError>) -> Void
        var timer: TimerHandle?
        var timedOut = false

        init(msg: OpaquePointer, completion: @escaping (Result<HTTPClientResponse, IOError>) -> Void) {
            self.msg = msg
            self.completion = completion
        }

        deinit {
            g_object_unref(UnsafeMutableRawPointer(msg))
            g_object_unref(UnsafeMutableRawPointer(cancellable))
        }

        func finish(body: Data, error: UnsafeMutablePointer<GError>?) {
            timer?.cancel()
            if timedOut {
                if let error = error { g_error_free(error) }
                completion(.failure(.timeout))
                return
            }
            let status = Int(soup_message_get_status(msg).rawValue)
            if let error = error {
                let e = Soup.consume(error)
                completion(.failure(status == 0 ? .connectFailed(e.message) : .requestFailed(e.message)))
                return
            }
            completion(.success(HTTPClientResponse(
                status: status, headers: Soup.headers(soup_message_get_response_headers(msg)), body: body)))
        }
    }
}

/// A response read by `HTTPClient.send`. Header names lowercased.
public struct HTTPClientResponse: Equatable {
    public var status: Int
    public var headers: [String: String]
    public var body: Data
}
