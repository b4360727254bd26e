import Foundation
import IO
import XCTest

final class HTTPClientTests: XCTestCase {
    var loop: EventLoop!

    override func setUp() {
        loop = EventLoop(name: "client-test")
        loop.start()
    }

    override func tearDown() {
        loop.stop()
    }

    private func post(_ url: String, body: Data, headers: [String: String] = [:], timeout: UInt32 = 5) -> Result<Int, IOError>? {
        let done = expectation(description: "post")
        var outcome: Result<Int, IOError>?
        let loop = self.loop!
        HTTPClient(loop: loop).postJSON(url: url, body: body, headers: headers, timeoutSeconds: timeout) {
            XCTAssertTrue(loop.isOnLoopThread)
            outcome = $0
            done.fulfill()
        }
        wait(for: [done], timeout: Double(timeout) + 5)
        return outcome
    }

    func testPostJSONReachesServer() throws {
        let server = try HTTPServer(loop: loop, host: "127.0.0.1", port: 0)
        defer { server.stop() }
        var received: HTTPRequest?
        server.route("POST", "/push") { req in
            received = req
            return .json(202, Data("{}".utf8))
        }
        let body = Data("{\"to\":\"bob\"}".utf8)
        let result = post("http://127.0.0.1:\(server.boundPort)/push", body: body, headers: ["Authorization": "Bearer t"])
        XCTAssertEqual(result, .success(202))
        XCTAssertEqual(received?.body, body)
        XCTAssertEqual(received?.headers["content-type"], "application/json")
        XCTAssertEqual(received?.headers["authorization"], "Bearer t")
    }

    func testNon2xxStatusIsReturnedAsStatus() throws {
        let server = try HTTPServer(loop: loop, host: "127.0.0.1", port: 0)
        defer { server.stop() }
        XCTAssertEqual(post("http://127.0.0.1:\(server.boundPort)/missing", body: Data("{}".utf8)), .success(404))
    }

    func testClosedPortGivesConnectFailed() throws {
        // Bind then stop a server to get a port that is (very likely) closed.
        let server = try HTTPServer(loop: loop, host: "127.0.0.1", port: 0)
        let port = server.boundPort
        server.stop()
        let result = post("http://127.0.0.1:\(port)/push", body: Data("{}".utf8))
        guard case .failure(.connectFailed(let message))? = result else {
            return XCTFail("expected connectFailed, got \(String(describing: result))")
        }
        XCTAssertFalse(message.isEmpty)
    }

    func testInvalidURL() {
        XCTAssertEqual(post("not a url", body: Data()), .failure(.invalidURL("not a url")))
        XCTAssertEqual(post("ftp://example.org/x", body: Data()), .failure(.invalidURL("ftp://example.org/x")))
    }

    func testTimeoutWhenServerNeverAnswers() throws {
        // A listening TCP socket that never accepts: the handshake completes in the kernel
        // backlog but no HTTP response ever comes.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = bind(fd, $0, len) } }
        XCTAssertEqual(listen(fd, 8), 0)
        withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(fd, $0, &len) } }
        let port = UInt16(bigEndian: addr.sin_port)
        XCTAssertEqual(post("http://127.0.0.1:\(port)/", body: Data("{}".utf8), timeout: 1), .failure(.timeout))
    }
}
