import Foundation
import IO
import SignalingClient
import XCTest

/// Base class: one client event loop per test case, helpers to connect devices.
class IntegrationCase: XCTestCase {
    static let loop: EventLoop = {
        let loop = EventLoop(name: "it-clients")
        loop.start()
        return loop
    }()
    var loop: EventLoop { Self.loop }

    func device(_ server: ServerProcess, _ account: String, _ device: String, cursor: Int64? = nil) throws -> SignalingClient {
        try SignalingClient(loop: loop, url: server.url, token: server.token(account, device),
                            account: account, device: device, cursor: cursor)
    }

    /// Places a call from `caller` to `callee` and returns (callID, revision at ringing).
    func invite(_ caller: SignalingClient, _ callee: String, sdp: String? = nil,
                file: StaticString = #filePath, line: UInt = #line) throws -> (String, Int64) {
        var fields: [String: Any] = ["callee": callee]
        if let sdp { fields["sdp"] = sdp }
        let result = try caller.request("call.invite", fields)
        XCTAssertEqual(result.status, "accepted", "\(result)", file: file, line: line)
        return (try XCTUnwrap(result.callID, file: file, line: line), try XCTUnwrap(result.revision, file: file, line: line))
    }
}
