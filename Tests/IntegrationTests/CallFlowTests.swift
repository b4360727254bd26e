import Foundation
import IO
import SignalingClient
import XCTest

/// A whole 1:1 call over real WebSockets against the real binary: caller with two devices,
/// callee with three (call-design §4 cases 2, 6, 12).
final class CallFlowTests: IntegrationCase {
    static let offer = "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\na=ice-ufrag:caller1\r\na=ice-pwd:callerpasswordcallerpass\r\n"
    static let answer = "v=0\r\no=- 2 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\na=ice-ufrag:callee1\r\na=ice-pwd:calleepasswordcalleepass\r\n"

    func testCallRingsEveryDeviceOneAnswerWinsAndMediaFlowsToEnd() throws {
        let server = try ServerProcess()
        let laptop = try device(server, "alice", "laptop")
        let alicePhone = try device(server, "alice", "phone")
        let bobPhone = try device(server, "bob", "phone")
        let bobTablet = try device(server, "bob", "tablet")
        let bobDesk = try device(server, "bob", "desk")

        let (callID, revision) = try invite(laptop, "bob", sdp: Self.offer)
        for callee in [bobPhone, bobTablet, bobDesk] {
            let incoming = try callee.waitFor(type: "call.incoming", callID: callID)
            XCTAssertEqual(incoming.sdp, Self.offer)
            XCTAssertEqual(incoming.revision, revision)
            XCTAssertEqual(incoming.phase, "ringing")
            XCTAssertNotNil(incoming.seq)
        }
        // The caller's other device never rings for its own outgoing call (case 12).
        XCTAssertEqual(try alicePhone.waitFor(type: "call.inProgressElsewhere", callID: callID).callID, callID)
        XCTAssertFalse(alicePhone.pending.contains { $0.type == "call.incoming" })

        XCTAssertEqual(try bobPhone.request("call.ringing", ["callID": callID]).status, "accepted")
        XCTAssertEqual(try laptop.waitFor(type: "call.ringing", callID: callID).callID, callID)

        // A candidate trickled before the answer is held for the winner (case 6).
        let early = try laptop.request("ice.candidate", ["callID": callID, "generation": 1, "ufrag": "caller1",
                                                          "candidate": "candidate:1 1 udp 2122260223 127.0.0.1 40000 typ host",
                                                          "sdpMid": "0", "sdpMLineIndex": 0])
        XCTAssertEqual(early.status, "accepted", "\(early)")

        let seen = try XCTUnwrap(try bobTablet.request("call.get", ["callID": callID]).revision)
        let answered = try bobTablet.request("call.answer", ["callID": callID, "revision": seen, "sdp": Self.answer])
        XCTAssertEqual(answered.status, "accepted", "\(answered)")
        XCTAssertEqual(answered.phase, "connecting")

        for loser in [bobPhone, bobDesk] {
            let stop = try loser.waitFor(type: "call.stopRinging", callID: callID)
            XCTAssertEqual(stop.reason, "answeredElsewhere")
        }
        let toCaller = try laptop.waitFor(type: "call.answered", callID: callID)
        XCTAssertEqual(toCaller.sdp, Self.answer)
        XCTAssertEqual((toCaller["by"] as? [String: Any])?["device"] as? String, "tablet")
        let flushed = try bobTablet.waitFor(type: "ice.candidate", callID: callID)
        XCTAssertEqual((flushed["candidates"] as? [[String: Any]])?.first?["candidate"] as? String,
                       "candidate:1 1 udp 2122260223 127.0.0.1 40000 typ host")

        // Candidates after the answer are relayed directly, tagged with the generation.
        XCTAssertEqual(try bobTablet.request("ice.candidate", ["callID": callID, "generation": 1, "ufrag": "callee1",
                                                                "candidate": "candidate:2 1 udp 2122260223 127.0.0.1 40001 typ host"]).status,
                       "accepted")
        let relayed = try laptop.waitFor(type: "ice.candidate", callID: callID)
        XCTAssertEqual(relayed.generation, 1)

        // A stale-generation candidate is dropped (case 7).
        let stale = try bobTablet.request("ice.candidate", ["callID": callID, "generation": 0,
                                                             "candidate": "candidate:3 1 udp 1 127.0.0.1 40002 typ host"])
        XCTAssertEqual(stale.status, "rejected")
        XCTAssertEqual(stale.code, "invalidGeneration")

        // "Answer accepted" is not "connected": active only once media flows.
        XCTAssertEqual(try laptop.request("call.mediaConnected", ["callID": callID]).status, "accepted")
        let active = try bobTablet.waitFor { $0.type == "call.state" && $0.phase == "active" }
        XCTAssertEqual(active.callID, callID)

        // The snapshot over HTTP: participants only.
        XCTAssertEqual(try httpGet(server, "/v1/calls/\(callID)", token: server.token("bob", "phone")).status, 200)
        XCTAssertEqual(try httpGet(server, "/v1/calls/\(callID)", token: server.token("carol", "x")).status, 404)
        XCTAssertEqual(try httpGet(server, "/v1/calls/\(callID)", token: "forged.token.value").status, 401)

        XCTAssertEqual(try laptop.request("call.hangup", ["callID": callID]).status, "accepted")
        let ended = try bobTablet.waitFor(type: "call.ended", callID: callID)
        XCTAssertEqual(ended.reason, "hangup")

        // Secrets never reach the logs: tokens, ICE passwords, SDP bodies.
        let logs = server.logLines.joined(separator: "\n")
        XCTAssertFalse(logs.contains("callerpasswordcallerpass"))
        XCTAssertFalse(logs.contains("eyJ"))
        XCTAssertTrue(logs.contains(callID))
    }

    func httpGet(_ server: ServerProcess, _ path: String, token: String) throws -> HTTPClientResponse {
        let done = DispatchSemaphore(value: 0)
        var result: Result<HTTPClientResponse, IOError>?
        HTTPClient(loop: loop).send(method: "GET", url: server.httpBase + path, headers: ["Authorization": "Bearer \(token)"],
                                    timeoutSeconds: 5) { r in result = r; done.signal() }
        _ = done.wait(timeout: .now() + 10)
        return try XCTUnwrap(result).get()
    }
}
