import Foundation
import XCTest

/// A second server started on a running server's ports refuses to start and says which
/// port, instead of joining its SO_REUSEPORT sockets (the default: 2 HTTP shards, one media
/// worker per CPU) and splitting its connections and datagrams. Seen before the fix: two
/// test servers on media port 0 both got the same port, and each lost media.
final class PortClaimTests: IntegrationCase {
    let shared = ["http.shards": "2", "media.workers": "2"]

    func testASecondServerOnTheSameMediaPortOrHTTPPortRefusesToStart() throws {
        let first = try ServerProcess(settings: shared)
        let line = try XCTUnwrap(first.logLines.first { $0.contains("\"msg\":\"media listening\"") })
        let fields = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["fields"] as? [String: Any])
        let mediaPort = try XCTUnwrap(fields["port"] as? Int)

        let media = try ServerProcess.failedStart(settings: shared.merging(["media.port": "\(mediaPort)"]) { $1 })
        XCTAssertEqual(media.status, 1, media.stderr)
        XCTAssertTrue(media.stderr.contains("switchboard: cannot start: media.port 127.0.0.1:\(mediaPort): udp_bind_failed: Address already in use"), media.stderr)

        let web = try ServerProcess.failedStart(settings: shared.merging(["http.port": "\(first.port)"]) { $1 })
        XCTAssertEqual(web.status, 1, web.stderr)
        XCTAssertTrue(web.stderr.contains("switchboard: cannot start: bind_failed: Error binding to address 127.0.0.1:\(first.port): Address already in use"), web.stderr)

        // The first server is unharmed.
        XCTAssertEqual(try http(first, "GET", "/healthz").status, 200)
        _ = try device(first, "alice", "phone")
    }
}
