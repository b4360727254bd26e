import Foundation
import SignalingClient
import XCTest

/// The durable outbox: a device that drops its connection resumes from its cursor and gets
/// every event it missed exactly once, in order (call-design §5); a restart after kill -9
/// keeps calls, outboxes and deadlines (§4 case 14).
final class ResumeTests: IntegrationCase {
    func testResumeAfterDroppedConnectionLosesAndDuplicatesNothing() throws {
        let server = try ServerProcess(settings: ["limits.commands_per_second": "1000", "limits.command_burst": "1000"])
        let alice = try device(server, "alice", "laptop")
        var bob = try device(server, "bob", "phone")
        var allSeqs: [Int64] = []

        let (callID, _) = try invite(alice, "bob")
        _ = try bob.waitFor(type: "call.incoming", callID: callID)
        allSeqs += bob.receivedSeqs
        let cursor = try XCTUnwrap(bob.cursor)
        bob.close()
        _ = try bob.waitForClose()

        // While bob is away: three more calls are placed and cancelled.
        var missed: [String] = []
        for _ in 0..<3 {
            let (id, _) = try invite(alice, "bob")
            XCTAssertEqual(try alice.request("call.cancel", ["callID": id]).status, "accepted")
            missed.append(id)
        }
        XCTAssertEqual(try alice.request("call.cancel", ["callID": callID]).status, "accepted")

        bob = try device(server, "bob", "phone", cursor: cursor)
        let backlog = bob.drain().filter { $0.seq != nil }
        allSeqs += backlog.compactMap(\.seq)
        // Consecutive, no gaps, no repeats.
        XCTAssertEqual(allSeqs, Array(1...Int64(allSeqs.count)), "seqs \(allSeqs)")
        // The backlog names every missed call (bob was offline at invite, so he was pushed and
        // learns that each call stopped); none of them rings.
        for id in missed {
            XCTAssertTrue(backlog.contains { $0.callID == id && $0.type == "call.stopRinging" && $0.reason == "cancelled" },
                          "missed call \(id): \(backlog.map(\.text))")
            XCTAssertFalse(backlog.contains { $0.callID == id && $0.type == "call.incoming" })
        }
        XCTAssertTrue(backlog.contains { $0.callID == callID && $0.type == "call.stopRinging" })

        // Acknowledge and resume again from the latest cursor: nothing is replayed twice.
        let latest = try XCTUnwrap(bob.cursor)
        bob.sendRaw("{\"v\":1,\"type\":\"ack\",\"cursor\":\"\(latest)\"}")
        bob.close()
        _ = try bob.waitForClose()
        bob = try device(server, "bob", "phone", cursor: latest)
        XCTAssertTrue(bob.drain().allSatisfy { $0.seq == nil })
    }

    func testBacklogInvitePastItsLifetimeIsDeliveredAsEndedNotRinging() throws {
        let server = try ServerProcess(settings: ["call.ring_timeout": "1s", "call.invite_lifetime": "2s",
                                                  "call.delivery_grace": "500ms"])
        let alice = try device(server, "alice", "laptop")
        var bob = try device(server, "bob", "phone")
        let (callID, _) = try invite(alice, "bob")
        _ = try bob.waitFor(type: "call.incoming", callID: callID)
        bob.close()
        _ = try bob.waitForClose()
        _ = try alice.waitFor(type: "call.ended", callID: callID, timeout: 10)
        // Resume from before the invite (the device never processed it).
        bob = try device(server, "bob", "phone", cursor: 0)
        let backlog = bob.drain().filter { $0.seq != nil }
        XCTAssertEqual(backlog.first?.type, "call.ended", backlog.map(\.text).joined(separator: "\n"))
        XCTAssertEqual(backlog.first?["missed"] as? Bool, true)
        XCTAssertEqual(backlog.first?.seq, 1)
        XCTAssertFalse(backlog.contains { $0.type == "call.incoming" })
    }

    func testReconnectMidRingStillRingsWhileTheInviteIsYoung() throws {
        let server = try ServerProcess()
        let alice = try device(server, "alice", "laptop")
        var bob = try device(server, "bob", "phone")
        let (callID, _) = try invite(alice, "bob")
        _ = try bob.waitFor(type: "call.incoming", callID: callID)
        bob.close()
        _ = try bob.waitForClose()
        bob = try device(server, "bob", "phone", cursor: 0)
        let replayed = try bob.waitFor(type: "call.incoming", callID: callID)
        XCTAssertEqual(replayed.phase, "ringing")
    }

    func testOfflineDeviceIsPushedAndRingsWhenItConnectsInTime() throws {
        let server = try ServerProcess()
        let alice = try device(server, "alice", "laptop")
        let tablet = try device(server, "bob", "tablet")  // registers the device
        tablet.close()
        _ = try tablet.waitForClose()
        Thread.sleep(forTimeInterval: 0.2)
        let (callID, _) = try invite(alice, "bob")
        let back = try device(server, "bob", "tablet")
        let incoming = try back.waitFor(type: "call.incoming", callID: callID)
        XCTAssertEqual(incoming.phase, "ringing")
    }

    func testKillMinus9MidRingKeepsTheCallAndItsOriginalDeadline() throws {
        let server = try ServerProcess(settings: ["call.ring_timeout": "4s", "call.invite_lifetime": "6s"])
        var alice = try device(server, "alice", "laptop")
        var bob = try device(server, "bob", "phone")
        let (callID, _) = try invite(alice, "bob")
        let incoming = try bob.waitFor(type: "call.incoming", callID: callID)
        let createdAt = try XCTUnwrap((incoming.snapshot?["createdAt"] as? NSNumber)?.int64Value)
        let aliceCursor = alice.cursor ?? 0
        server.kill9()
        try server.start()
        alice = try device(server, "alice", "laptop", cursor: aliceCursor)
        bob = try device(server, "bob", "phone", cursor: bob.cursor)
        // Acknowledged before the crash, so still there: the call rings on after the restart.
        let snapshot = try bob.request("call.get", ["callID": callID])
        XCTAssertEqual(snapshot.phase, "ringing")
        // And ends at its original deadline, not one restarted at boot.
        let ended = try alice.waitFor(type: "call.ended", callID: callID, timeout: 15)
        XCTAssertEqual(ended.reason, "noAnswer")
        let endedAt = try XCTUnwrap((ended.snapshot?["endedAt"] as? NSNumber)?.int64Value)
        XCTAssertGreaterThanOrEqual(endedAt - createdAt, 4000)
        XCTAssertLessThan(endedAt - createdAt, 4000 + 2500, "deadline kept from before the crash")
    }

    func testDeadlineThatCameDueWhileDownFiresAtStartup() throws {
        let server = try ServerProcess(settings: ["call.ring_timeout": "1s", "call.invite_lifetime": "2s"])
        let alice = try device(server, "alice", "laptop")
        _ = try device(server, "bob", "phone")
        let (callID, _) = try invite(alice, "bob")
        let cursor = alice.cursor ?? 0
        server.kill9()
        Thread.sleep(forTimeInterval: 1.5)
        try server.start()
        let back = try device(server, "alice", "laptop", cursor: cursor)
        XCTAssertEqual(try back.waitFor(type: "call.ended", callID: callID).reason, "noAnswer")
    }
}
