import Foundation
import IO
import XCTest

final class HTTPServerTests: XCTestCase {
    var loop: EventLoop!
    var server: HTTPServer!
    var client: HTTPClient!
    var base: String { "http://127.0.0.1:\(server.boundPort)" }

    override func setUpWithError() throws {
        loop = EventLoop(name: "http-test")
        loop.start()
        server = try HTTPServer(loop: loop, host: "127.0.0.1", port: 0)
        client = HTTPClient(loop: loop)
        server.route("GET", "/v1/hello") { req in
            .json(200, try! JSONSerialization.data(withJSONObject: [
                "path": req.path, "q": req.query["name"] ?? "", "ua": req.headers["x-test"] ?? "",
                "peer": req.remoteAddress, "method": req.method]))
        }
        server.route("POST", "/v1/echo") { req in
            guard let obj = try? JSONSerialization.jsonObject(with: req.body) as? [String: Any] else {
                return .json(400, Data("{\"error\":\"bad_json\"}".utf8))
            }
            var reply = obj
            reply["seen"] = req.headers["content-type"] ?? ""
            return .json(201, try! JSONSerialization.data(withJSONObject: reply))
        }
        server.route("GET", "/v1") { _ in .text(200, "v1 root") }
    }

    override func tearDown() {
        server.stop()
        loop.stop()
    }

    private func request(_ method: String, _ path: String, headers: [String: String] = [:],
                         body: Data? = nil) throws -> HTTPClientResponse {
        let done = expectation(description: "\(method) \(path)")
        var outcome: Result<HTTPClientResponse, IOError>?
        client.send(method: method, url: base + path, headers: headers, body: body, timeoutSeconds: 5) {
            outcome = $0
            done.fulfill()
        }
        wait(for: [done], timeout: 10)
        return try XCTUnwrap(outcome).get()
    }

    private func json(_ data: Data) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    func testEphemeralPortIsBound() {
        XCTAssertNotEqual(server.boundPort, 0)
    }

    func testGetWithQueryAndHeaders() throws {
        let r = try request("GET", "/v1/hello/x?name=al%20ice&other=1", headers: ["X-Test": "yes"])
        XCTAssertEqual(r.status, 200)
        XCTAssertEqual(r.headers["content-type"], "application/json")
        let obj = try json(r.body)
        XCTAssertEqual(obj["path"] as? String, "/v1/hello/x")
        XCTAssertEqual(obj["q"] as? String, "al ice")
        XCTAssertEqual(obj["ua"] as? String, "yes")
        XCTAssertEqual(obj["peer"] as? String, "127.0.0.1")
        XCTAssertEqual(obj["method"] as? String, "GET")
    }

    func testPostJSONBodyRoundTrip() throws {
        let body = try JSONSerialization.data(withJSONObject: ["a": 1, "b": "ü∑"])
        let r = try request("POST", "/v1/echo", headers: ["Content-Type": "application/json"], body: body)
        XCTAssertEqual(r.status, 201)
        let obj = try json(r.body)
        XCTAssertEqual(obj["a"] as? Int, 1)
        XCTAssertEqual(obj["b"] as? String, "ü∑")
        XCTAssertEqual(obj["seen"] as? String, "application/json")
    }

    func testLargePostBody() throws {
        let big = String(repeating: "x", count: 300_000)
        let body = try JSONSerialization.data(withJSONObject: ["big": big])
        let r = try request("POST", "/v1/echo", headers: ["Content-Type": "application/json"], body: body)
        XCTAssertEqual(r.status, 201)
        XCTAssertEqual(try json(r.body)["big"] as? String, big)
    }

    func testBadJSONGetsHandlerError() throws {
        let r = try request("POST", "/v1/echo", body: Data("{nope".utf8))
        XCTAssertEqual(r.status, 400)
    }

    func testLongestPrefixWins() throws {
        let r = try request("GET", "/v1/other")
        XCTAssertEqual(r.status, 200)
        XCTAssertEqual(String(decoding: r.body, as: UTF8.self), "v1 root")
        XCTAssertEqual(r.headers["content-type"], "text/plain; charset=utf-8")
    }

    func testUnknownPathIs404JSON() throws {
        let r = try request("GET", "/nothing")
        XCTAssertEqual(r.status, 404)
        XCTAssertEqual(try json(r.body)["error"] as? String, "not_found")
        // Prefixes match whole segments: "/v1x" is not under "/v1".
        XCTAssertEqual(try request("GET", "/v1x").status, 404)
    }

    func testWrongMethodIs405WithAllow() throws {
        let r = try request("DELETE", "/v1/echo")
        XCTAssertEqual(r.status, 405)
        XCTAssertEqual(r.headers["allow"], "POST")
        XCTAssertEqual(try json(r.body)["error"] as? String, "method_not_allowed")
    }

    func testBindToTakenPortFails() {
        XCTAssertThrowsError(try HTTPServer(loop: loop, host: "127.0.0.1", port: server.boundPort)) { error in
            guard case IOError.bindFailed = error else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try HTTPServer(loop: loop, host: "not-an-ip", port: 0)) { error in
            guard case IOError.bindFailed = error else { return XCTFail("\(error)") }
        }
    }
}
