import Foundation
import IO

/// Figures the benchmark reads from the server's `/metrics` (Prometheus text exposition,
/// https://prometheus.io/docs/instrumenting/exposition_formats/) because it cannot see them
/// from outside: the database's size (`switchboard_db_bytes_in_use`).
enum ServerMetrics {
    /// `http://host:port/metrics` for a `ws://host:port/…` signaling URL (`https` for `wss`);
    /// nil for anything else.
    static func metricsURL(forSignalingURL url: String) -> String? {
        guard let components = URLComponents(string: url), let host = components.host, !host.isEmpty else { return nil }
        let scheme: String
        switch components.scheme?.lowercased() {
        case "ws": scheme = "http"
        case "wss": scheme = "https"
        default: return nil
        }
        var out = URLComponents()
        out.scheme = scheme
        out.host = host
        out.port = components.port
        out.path = "/metrics"
        return out.string
    }

    /// The value of the sample `name` (no labels) in an exposition, or nil.
    static func value(of name: String, in exposition: String) -> Double? {
        for line in exposition.split(separator: "\n", omittingEmptySubsequences: true) where !line.hasPrefix("#") {
            let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
            if parts.count >= 2, parts[0] == name { return Double(parts[1]) }
        }
        return nil
    }

    /// GETs `url` on `loop` and waits for the body (nil on any failure or a non-200 status).
    static func fetch(_ url: String, loop: EventLoop, timeoutSeconds: UInt32 = 5) -> String? {
        let done = DispatchSemaphore(value: 0)
        let box = ResultBox()
        HTTPClient(loop: loop).send(method: "GET", url: url, timeoutSeconds: timeoutSeconds) { result in
            if case .success(let response) = result, response.status == 200 {
                box.text = String(decoding: response.body, as: UTF8.self)
            }
            done.signal()
        }
        // The client's own timeout answers first; this bound only guards against a loop that
        // never runs the request.
        guard done.wait(timeout: .now() + .seconds(Int(timeoutSeconds) + 2)) == .success else { return nil }
        return box.text
    }

    private final class ResultBox: @unchecked Sendable {
        var text: String?
    }
}
