import Foundation
import IO
import SignalingClient
import XCTest

/// The real binary with `http.shards = 2`: the WebSockets live on two shard threads and the
/// hub's frames reach them as one batch job per shard per carry-out (WebSocketSendBatch).
/// Per-connection order must survive that: a burst of commands gets its results in order,
/// and the candidates it relays arrive at the callee in order.
final class ShardedSignalingTests: IntegrationCase {
    func testBurstOfCandidatesKeepsOrderAcrossShards() throws {
        let server = try ServerProcess(settings: ["http.shards": "2"])
        let laptop = try device(server, "alice", "laptop")
        // Several devices, so that both shards are likely to hold some of them.
        let bobDevices = try ["phone", "tablet", "desk", "watch", "tv"].map { try device(server, "bob", $0) }
        let (callID, _) = try invite(laptop, "bob", sdp: CallFlowTests.offer)
        for callee in bobDevices { _ = try callee.waitFor(type: "call.incoming", callID: callID) }
        let winner = bobDevices[1]
        let seen = try XCTUnwrap(try winner.request("call.get", ["callID": callID]).revision)
        XCTAssertEqual(try winner.request("call.answer", ["callID": callID, "revision": seen, "sdp": CallFlowTests.answer]).status,
                       "accepted")
        _ = try laptop.waitFor(type: "call.answered", callID: callID)

        // Sent back to back: they reach the hub in few batches, each relayed with others.
        let count = 40
        let candidates = (0 ..< count).map { "candidate:\($0) 1 udp 2122260223 127.0.0.1 \(41000 + $0) typ host" }
        let eventIDs = candidates.map { candidate in
            laptop.command("ice.candidate", ["callID": callID, "generation": 1, "ufrag": "caller1",
                                             "candidate": candidate, "sdpMid": "0", "sdpMLineIndex": 0])
        }
        var results: [String] = []
        for _ in 0 ..< count {
            let result = try laptop.waitFor { $0.type == "result" && eventIDs.contains($0.eventID ?? "") }
            XCTAssertEqual(result.status, "accepted", "\(result)")
            results.append(result.eventID ?? "")
        }
        XCTAssertEqual(results, eventIDs, "results out of order")

        var relayed: [String] = []
        while relayed.count < count {
            let frame = try winner.waitFor(type: "ice.candidate", callID: callID)
            if let list = frame["candidates"] as? [[String: Any]] {
                relayed += list.compactMap { $0["candidate"] as? String }
            } else if let one = frame["candidate"] as? String {
                relayed.append(one)
            }
        }
        XCTAssertEqual(relayed, candidates, "candidates out of order")

        XCTAssertEqual(try laptop.request("call.hangup", ["callID": callID]).status, "accepted")
        XCTAssertEqual(try winner.waitFor(type: "call.ended", callID: callID).reason, "hangup")

        // The path outside the hub is measured: every frame above crossed from a shard to
        // the hub (hellos, 40+ commands), and every batch's sends went back to a shard.
        let frames = try metricTotal(server, "switchboard_hub_handoff_microseconds_count")
        XCTAssertGreaterThanOrEqual(frames, Double(count + bobDevices.count + 1))
        XCTAssertGreaterThan(try metricTotal(server, "switchboard_shard_write_microseconds_count"), 0)
    }
}
