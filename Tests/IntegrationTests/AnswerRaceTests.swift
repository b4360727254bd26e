import Foundation
import SignalingClient
import XCTest

/// Call-design §4 case 2 over real sockets: three callee devices answer the same revision
/// at once, repeated; the server picks exactly one winner every time.
final class AnswerRaceTests: IntegrationCase {
    func testThreeWayAnswerRaceHasExactlyOneWinnerEveryTime() throws {
        let server = try ServerProcess(settings: ["limits.commands_per_second": "1000", "limits.command_burst": "1000"])
        let caller = try device(server, "alice", "laptop")
        let callees = try ["phone", "tablet", "desk"].map { try device(server, "bob", $0) }
        var wins: [String: Int] = [:]
        for round in 0..<100 {
            let (callID, _) = try invite(caller, "bob")
            var seen: [Int64] = []
            for callee in callees {
                seen.append(try XCTUnwrap(try callee.waitFor(type: "call.incoming", callID: callID).revision))
            }
            // Fire all three answers before reading any result.
            let eventIDs = zip(callees, seen).map { callee, revision in
                callee.command("call.answer", eventID: "race-\(round)-\(callee.device)", ["callID": callID, "revision": revision])
            }
            var winners: [String] = []
            for (callee, eventID) in zip(callees, eventIDs) {
                let result = try callee.waitFor { $0.type == "result" && $0.eventID == eventID }
                if result.status == "accepted" {
                    winners.append(callee.device)
                } else {
                    XCTAssertEqual(result.status, "rejected")
                    XCTAssertEqual(result.code, "staleRevision", "\(result)")
                    XCTAssertEqual(result.phase, "connecting", "a rejection carries the current snapshot")
                }
            }
            XCTAssertEqual(winners.count, 1, "round \(round): winners \(winners)")
            guard let winner = winners.first else { continue }
            wins[winner, default: 0] += 1
            for loser in callees where loser.device != winner {
                XCTAssertEqual(try loser.waitFor(type: "call.stopRinging", callID: callID).reason, "answeredElsewhere")
            }
            let answered = try caller.waitFor(type: "call.answered", callID: callID)
            XCTAssertEqual((answered["by"] as? [String: Any])?["device"] as? String, winner)
            XCTAssertEqual(try caller.request("call.hangup", ["callID": callID]).status, "accepted")
            _ = try callees.first { $0.device == winner }!.waitFor(type: "call.ended", callID: callID)
            for callee in callees { _ = callee.drain() }
            _ = caller.drain()
        }
        XCTAssertEqual(wins.values.reduce(0, +), 100)
    }
}
