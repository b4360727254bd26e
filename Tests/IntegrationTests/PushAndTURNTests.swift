import Auth
import Foundation
import IO
import SignalingClient
import XCTest

/// The push hook for offline devices (docs/protocol.md §8) against a real webhook server on
/// loopback, and the TURN credentials handed out with each call (TURN REST API scheme).
final class PushAndTURNTests: IntegrationCase {
    func testOfflineDeviceGetsAPushRetriedAfterAFailureAndAFollowUpWhenCancelled() throws {
        let hook = try Webhook(loop: loop, failFirst: 1)
        let server = try ServerProcess(settings: ["push.webhook_url": "http://127.0.0.1:\(hook.port)/push",
                                                  "push.backoff": "100ms", "push.backoff_cap": "1s"])
        let alice = try device(server, "alice", "laptop")
        let phone = try device(server, "bob", "phone")
        let tablet = try device(server, "bob", "tablet")
        tablet.close()
        _ = try tablet.waitForClose()
        Thread.sleep(forTimeInterval: 0.2)

        let (callID, _) = try invite(alice, "bob")
        _ = try phone.waitFor(type: "call.incoming", callID: callID)
        let incoming = try hook.waitFor { $0["type"] as? String == "call.incoming" }
        XCTAssertEqual(incoming["callID"] as? String, callID)
        XCTAssertEqual(incoming["device"] as? String, "tablet")
        XCTAssertEqual(incoming["caller"] as? String, "alice")
        XCTAssertNotNil(incoming["expiresAt"] as? Int)
        XCTAssertEqual(hook.attempts, 2, "first POST answered 503, retried once")

        XCTAssertEqual(try alice.request("call.cancel", ["callID": callID]).status, "accepted")
        let followUp = try hook.waitFor { $0["type"] as? String == "call.ended" }
        XCTAssertEqual(followUp["callID"] as? String, callID)
        XCTAssertEqual(followUp["reason"] as? String, "cancelled")
        XCTAssertFalse(hook.bodies.contains { ($0["device"] as? String) == "phone" }, "online devices are not pushed")
    }

    func testCallsCarryShortLivedTURNCredentials() throws {
        let secret = "turn-shared-secret-for-tests"
        let server = try ServerProcess(settings: ["turn.secret": secret,  // coturn static-auth-secret: the text itself is the key
                                                  "turn.uris": "turn:127.0.0.1:3478?transport=udp",
                                                  "turn.ttl": "600s"])
        let alice = try device(server, "alice", "laptop")
        let bob = try device(server, "bob", "phone")
        let result = try alice.request("call.invite", ["callee": "bob"])
        let callID = try XCTUnwrap(result.callID)
        let turnAlice = try XCTUnwrap(result["turn"] as? [String: Any])
        let turnBob = try XCTUnwrap(try bob.waitFor(type: "call.incoming", callID: callID)["turn"] as? [String: Any])
        for (turn, account) in [(turnAlice, "alice"), (turnBob, "bob")] {
            let username = try XCTUnwrap(turn["username"] as? String)
            let parts = username.split(separator: ":")
            XCTAssertEqual(parts.count, 2)
            XCTAssertEqual(String(parts[1]), account)
            let expiry = try XCTUnwrap(Int64(parts[0]))
            XCTAssertEqual(Double(expiry), Date().timeIntervalSince1970 + 600, accuracy: 5)
            XCTAssertEqual(turn["uris"] as? [String], ["turn:127.0.0.1:3478?transport=udp"])
            // password = base64(HMAC-SHA1(secret, username)), what coturn's use-auth-secret checks.
            let expected = Data(HMAC.sha1(key: Array(secret.utf8), data: Array(username.utf8))).base64EncodedString()
            XCTAssertEqual(turn["password"] as? String, expected)
            XCTAssertFalse(server.logLines.joined().contains(expected), "TURN passwords never reach the logs")
        }
    }
}

/// A webhook receiver on loopback that answers 503 to the first `failFirst` POSTs.
final class Webhook: @unchecked Sendable {
    let server: HTTPServer
    private let condition = NSCondition()
    private(set) var bodies: [[String: Any]] = []
    private(set) var attempts = 0
    var port: UInt16 { server.boundPort }

    init(loop: EventLoop, failFirst: Int) throws {
        server = try HTTPServer(loop: loop, host: "127.0.0.1", port: 0)
        server.route("POST", "/push") { [self] request in
            condition.lock(); defer { condition.unlock() }
            attempts += 1
            if attempts <= failFirst { return .json(503, Data("{}".utf8)) }
            if let body = try? JSONSerialization.jsonObject(with: request.body) as? [String: Any] { bodies.append(body) }
            condition.broadcast()
            return .json(200, Data("{}".utf8))
        }
    }

    func waitFor(timeout: TimeInterval = 10, _ predicate: ([String: Any]) -> Bool) throws -> [String: Any] {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock(); defer { condition.unlock() }
        while true {
            if let body = bodies.first(where: predicate) { return body }
            if !condition.wait(until: deadline) { throw SignalingClient.ClientError.timeout("webhook: \(bodies)") }
        }
    }
}
