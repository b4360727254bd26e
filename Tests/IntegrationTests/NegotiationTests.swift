import Foundation
import SignalingClient
import XCTest

/// SDP and ICE over the IM channel after the answer: renegotiation with generations, ICE
/// restart (new ufrag: old candidates dropped), renegotiation glare (callee polite) and the
/// per-device candidate bound (call-design §4 cases 6, 7, 10).
final class NegotiationTests: IntegrationCase {
    static func sdp(_ ufrag: String) -> String {
        "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\na=ice-ufrag:\(ufrag)\r\na=ice-pwd:pppppppppppppppppppppp\r\n"
    }

    private func answeredCall(_ server: ServerProcess) throws -> (SignalingClient, SignalingClient, String) {
        let alice = try device(server, "alice", "laptop")
        let bob = try device(server, "bob", "phone")
        let (callID, _) = try invite(alice, "bob", sdp: Self.sdp("a1"))
        let revision = try XCTUnwrap(try bob.waitFor(type: "call.incoming", callID: callID).revision)
        XCTAssertEqual(try bob.request("call.answer", ["callID": callID, "revision": revision, "sdp": Self.sdp("b1")]).status, "accepted")
        _ = try alice.waitFor(type: "call.answered", callID: callID)
        return (alice, bob, callID)
    }

    func testRenegotiationAndICERestartCarryGenerationsAndDropStaleCandidates() throws {
        let server = try ServerProcess()
        let (alice, bob, callID) = try answeredCall(server)

        // ICE restart from the caller: generation 2 with a new ufrag.
        let offer = try alice.request("sdp.offer", ["callID": callID, "generation": 1, "sdp": Self.sdp("a2")])
        XCTAssertEqual(offer.status, "accepted", "\(offer)")
        let relayed = try bob.waitFor(type: "sdp.offer", callID: callID)
        XCTAssertEqual(relayed.generation, 2)
        XCTAssertEqual(relayed.sdp, Self.sdp("a2"))
        XCTAssertEqual(try bob.request("sdp.answer", ["callID": callID, "generation": 2, "sdp": Self.sdp("b2")]).status, "accepted")
        XCTAssertEqual(try alice.waitFor(type: "sdp.answer", callID: callID).generation, 2)

        // A candidate of the old ICE session (old ufrag) is dropped; a current one is relayed.
        let stale = try alice.request("ice.candidate", ["callID": callID, "generation": 2, "ufrag": "a1",
                                                         "candidate": "candidate:1 1 udp 1 127.0.0.1 5000 typ host"])
        XCTAssertEqual(stale.status, "rejected")
        XCTAssertEqual(stale.code, "staleIceCredentials")
        let fresh = try alice.request("ice.candidate", ["callID": callID, "generation": 2, "ufrag": "a2",
                                                         "candidate": "candidate:2 1 udp 1 127.0.0.1 5001 typ host"])
        XCTAssertEqual(fresh.status, "accepted", "\(fresh)")
        let candidate = try bob.waitFor(type: "ice.candidate", callID: callID)
        XCTAssertEqual(candidate.generation, 2)
        // An answer for an old generation is refused.
        XCTAssertEqual(try bob.request("sdp.answer", ["callID": callID, "generation": 1, "sdp": Self.sdp("b9")]).status, "rejected")
    }

    func testRenegotiationGlareCalleeIsPolite() throws {
        let server = try ServerProcess()
        let (alice, bob, callID) = try answeredCall(server)
        XCTAssertEqual(try alice.request("sdp.offer", ["callID": callID, "generation": 1, "sdp": Self.sdp("a2")]).status, "accepted")
        let polite = try bob.request("sdp.offer", ["callID": callID, "generation": 1, "sdp": Self.sdp("b2")])
        XCTAssertEqual(polite.status, "rejected")
        XCTAssertEqual(polite.code, "glare")
        XCTAssertEqual(try bob.waitFor(type: "sdp.offer", callID: callID).generation, 2, "the callee answers the caller's offer instead")
    }

    func testCandidatesBufferedBeforeTheAnswerAreBounded() throws {
        let server = try ServerProcess(settings: ["limits.max_candidates": "5", "limits.commands_per_second": "1000",
                                                  "limits.command_burst": "1000"])
        let alice = try device(server, "alice", "laptop")
        _ = try device(server, "bob", "phone")
        let (callID, _) = try invite(alice, "bob", sdp: Self.sdp("a1"))
        var codes: [String] = []
        for i in 0..<7 {
            let r = try alice.request("ice.candidate", ["callID": callID, "generation": 1,
                                                         "candidate": "candidate:\(i) 1 udp 1 127.0.0.1 \(6000 + i) typ host"])
            codes.append(r.status == "accepted" ? "ok" : (r.code ?? "?"))
        }
        XCTAssertEqual(codes, ["ok", "ok", "ok", "ok", "ok", "candidateLimit", "candidateLimit"])
    }
}

/// 1:1 calls routed through the SFU: the call carries no SDP, and its room admits only the
/// two parties (docs/protocol.md §9).
final class SFUCallTests: IntegrationCase {
    func testSFURoutedCallKeepsSDPOutOfTheCallAndGuardsItsRoom() throws {
        let server = try ServerProcess()
        let alice = try device(server, "alice", "laptop")
        let bob = try device(server, "bob", "phone")
        let carol = try device(server, "carol", "phone")
        let result = try alice.request("call.invite", ["callee": "bob", "media": "sfu"])
        XCTAssertEqual(result.status, "accepted")
        XCTAssertEqual(result.phase, "ringing")
        let callID = try XCTUnwrap(result.callID)
        let incoming = try bob.waitFor(type: "call.incoming", callID: callID)
        XCTAssertEqual(incoming.snapshot?["media"] as? String, "sfu")
        let revision = try XCTUnwrap(incoming.revision)
        XCTAssertEqual(try bob.request("call.answer", ["callID": callID, "revision": revision, "sdp": "v=0"]).code, "invalidState")
        XCTAssertEqual(try bob.request("call.answer", ["callID": callID, "revision": revision]).status, "accepted")

        XCTAssertEqual(try carol.request("room.join", ["room": callID]).code, "notParticipant")
        let joined = try alice.request("room.join", ["room": callID])
        XCTAssertEqual(joined.status, "accepted", "\(joined)")
        XCTAssertEqual(try bob.request("room.join", ["room": callID]).status, "accepted")
        XCTAssertEqual((try alice.waitFor(type: "room.memberJoined")["member"] as? [String: Any])?["device"] as? String, "phone")
    }

    func testBadMediaValueIsMalformed() throws {
        let server = try ServerProcess()
        let alice = try device(server, "alice", "laptop")
        alice.sendRaw(#"{"v":1,"type":"call.invite","eventID":"e1","callee":"bob","media":"carrier-pigeon"}"#)
        XCTAssertEqual(try alice.waitFor(type: "error").code, "malformed")
    }
}
