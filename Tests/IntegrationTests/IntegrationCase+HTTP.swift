import Foundation
import IO
import XCTest

extension IntegrationCase {
    /// One plain HTTP request to the server under test (bounded: 5 s request, 10 s wait).
    func http(_ server: ServerProcess, _ method: String, _ path: String, body: String? = nil) throws -> HTTPClientResponse {
        let done = DispatchSemaphore(value: 0)
        let box = ResultBox<HTTPClientResponse>()
        HTTPClient(loop: loop).send(method: method, url: server.httpBase + path,
                                    headers: body == nil ? [:] : ["Content-Type": "application/json"],
                                    body: body.map { Data($0.utf8) }, timeoutSeconds: 5) { r in
            box.set(r.mapError { $0 as Error }); done.signal()
        }
        _ = done.wait(timeout: .now() + 10)
        return try XCTUnwrap(box.value).get()
    }

    /// The sum over all label sets of a /metrics family (e.g. per-worker counters).
    func metricTotal(_ server: ServerProcess, _ name: String) throws -> Double {
        let response = try http(server, "GET", "/metrics")
        let text = String(decoding: response.body, as: UTF8.self)
        var total = 0.0
        for line in text.split(separator: "\n") where line.hasPrefix(name + "{") || line.hasPrefix(name + " ") {
            if let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) { total += value }
        }
        return total
    }
}
