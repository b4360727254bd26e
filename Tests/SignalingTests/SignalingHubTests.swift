import Auth
import CallCore
import Foundation
@testable import Signaling
@testable import Storage
import XCTest

/// The hub without sockets: every frame in, every action out.
final class SignalingHubTests: XCTestCase {
    func testHelloWelcomesThenCatchesUp() throws {
        let h = try HubHarness()
        let (id, actions) = h.connect("alice", "phone")
        XCTAssertEqual(HubHarness.types(actions, to: id), ["welcome", "caughtUp"])
        let welcome = HubHarness.frames(actions, to: id)[0]
        XCTAssertEqual(welcome["account"] as? String, "alice")
        XCTAssertEqual(welcome["latestSeq"] as? String, "0")
        XCTAssertEqual(h.hub.liveDeviceCount, 1)
    }

    func testBadTokensAndFramesBeforeHelloClose() throws {
        let h = try HubHarness()
        let forged = h.open()
        XCTAssertEqual(HubHarness.closes(h.hub.received(#"{"type":"hello","token":"a.b.c"}"#, on: forged, time: h.time))[forged], CloseCode.unauthorized)
        let early = h.open()
        XCTAssertEqual(HubHarness.closes(h.send(early, ["type": "ping"]))[early], CloseCode.protocolViolation)
        let expired = h.open()
        let token = h.token("alice", "phone", ttl: 1)
        h.advance(ms: 120_000)
        XCTAssertEqual(HubHarness.closes(h.send(expired, ["type": "hello", "token": token]))[expired], CloseCode.tokenExpired)
        XCTAssertEqual(h.hub.counters.authFailures, 2)
    }

    func testInviteRingsEveryCalleeDeviceAndTheFirstAnswerWins() throws {
        let h = try HubHarness()
        let (caller, _) = h.connect("alice", "laptop")
        let callees = ["phone", "tablet", "desk"].map { h.connect("bob", $0).0 }
        let invite = h.send(caller, ["type": "call.invite", "eventID": "i1", "callee": "bob"])
        let result = try XCTUnwrap(HubHarness.frames(invite, to: caller).first)
        XCTAssertEqual(result["status"] as? String, "accepted")
        let callID = try XCTUnwrap(result["callID"] as? String)
        // Picked by the server: time-ordered, the hub's wall clock (Unix ms) first in 12 hex digits.
        XCTAssertTrue(callID.hasPrefix(TimeOrderedID.prefix(wallMillis: h.time.wall) + "-"), callID)
        XCTAssertEqual(callID.count, 35)
        let revision = try XCTUnwrap(result["revision"] as? Int)
        for id in callees {
            XCTAssertEqual(HubHarness.types(invite, to: id), ["call.incoming"])
        }
        var outcomes: [String] = []
        var all: [HubAction] = []
        for (index, id) in callees.enumerated() {
            let actions = h.send(id, ["type": "call.answer", "eventID": "a\(index)", "callID": callID, "revision": revision])
            all += actions
            outcomes.append(HubHarness.frames(actions, to: id).first?["status"] as? String ?? "")
        }
        XCTAssertEqual(outcomes, ["accepted", "rejected", "rejected"])
        XCTAssertEqual(HubHarness.types(all, to: callees[1]).filter { $0 == "call.stopRinging" }.count, 1)
        XCTAssertEqual(HubHarness.types(all, to: caller), ["call.answered"])
        // Durable: the store has the call at the winner's revision.
        let stored = try XCTUnwrap(try h.store.loadCall(callID))
        XCTAssertEqual(stored.revision, Int64(revision + 1))
    }

    func testDuplicateEventIDIsAnsweredFromTheRecordWithoutEffects() throws {
        let h = try HubHarness()
        let (caller, _) = h.connect("alice", "laptop")
        let (callee, _) = h.connect("bob", "phone")
        _ = h.send(caller, ["type": "call.invite", "eventID": "i1", "callee": "bob"])
        let again = h.send(caller, ["type": "call.invite", "eventID": "i1", "callee": "bob"])
        XCTAssertEqual(HubHarness.frames(again, to: caller).first?["status"] as? String, "duplicate")
        XCTAssertTrue(HubHarness.types(again, to: callee).isEmpty, "no second ring")
        XCTAssertEqual(h.hub.counters.duplicates, 1)
    }

    /// A command recorded by a build that stored FNV-1a payload hashes: its retry is still a
    /// duplicate, and the eventID reused for another command is still refused.
    func testRecordWithALegacyPayloadHashStillAnswersRetries() throws {
        let h = try HubHarness()
        let (caller, _) = h.connect("alice", "laptop")
        _ = h.connect("bob", "phone")
        let invite = ["type": "call.invite", "eventID": "i1", "callee": "bob"]
        _ = h.send(caller, invite)
        guard case .command(let sent) = try ClientMessage.parse(#"{"v":1,"type":"call.invite","eventID":"i1","callee":"bob"}"#).get()
        else { return XCTFail("not a command") }
        try h.store.locked { connection in
            try connection.with("UPDATE processed_events SET payload_hash = ?1 WHERE event_id = ?2") { statement in
                try statement.bind(1, PayloadHash.legacy(sent.kind))
                try statement.bind(2, "i1")
                try statement.run()
            }
            XCTAssertEqual(connection.changes, 1)
        }
        XCTAssertEqual(try h.store.processedEvent(account: "alice", device: "laptop", eventID: "i1")?.payloadHash.utf8.count, 16)
        let again = h.send(caller, invite)
        XCTAssertEqual(HubHarness.frames(again, to: caller).first?["status"] as? String, "duplicate")
        let reused = h.send(caller, ["type": "call.invite", "eventID": "i1", "callee": "carol"])
        XCTAssertEqual(HubHarness.frames(reused, to: caller).first?["code"] as? String, "eventIDReused")
    }

    func testRingDeadlineFiresOnTickAndEndsTheCall() throws {
        let h = try HubHarness(config: HubConfig(idleTimeoutMs: 600_000))
        let (caller, _) = h.connect("alice", "laptop")
        let (callee, _) = h.connect("bob", "phone")
        _ = h.send(caller, ["type": "call.invite", "eventID": "i1", "callee": "bob"])
        h.advance(ms: 59_000)
        XCTAssertTrue(h.tick().isEmpty)
        h.advance(ms: 1_000)
        let fired = h.tick()
        XCTAssertEqual(HubHarness.frames(fired, to: caller).first?["reason"] as? String, "noAnswer")
        XCTAssertEqual(HubHarness.frames(fired, to: callee).first?["reason"] as? String, "noAnswer")
        XCTAssertTrue(try h.store.allDeadlines().isEmpty)
    }

    func testHousekeepingClosesIdleAndSilentConnections() throws {
        let h = try HubHarness(config: HubConfig(idleTimeoutMs: 45_000, helloTimeoutMs: 10_000))
        let (idle, _) = h.connect("alice", "phone")
        let silent = h.open()
        h.advance(ms: 11_000)
        XCTAssertEqual(HubHarness.closes(h.tick()), [silent: CloseCode.helloTimeout])
        h.advance(ms: 35_000)
        XCTAssertEqual(HubHarness.closes(h.tick()), [idle: CloseCode.idle])
    }

    /// Frames the transport answered itself (pings on the shard threads) count for the idle
    /// check: a connection heard from elsewhere stays open, and closes once that goes quiet.
    func testFramesHeardElsewhereKeepAConnectionFromIdleClose() throws {
        let h = try HubHarness(config: HubConfig(idleTimeoutMs: 45_000, helloTimeoutMs: 10_000))
        let (pinging, _) = h.connect("alice", "phone")
        let (quiet, _) = h.connect("bob", "phone")
        var heard: [ConnectionID: Int64] = [:]
        h.hub.lastFrameElsewhere = { heard[$0] ?? 0 }
        h.advance(ms: 40_000)
        heard[pinging] = h.time.mono
        h.advance(ms: 6_000)
        XCTAssertEqual(HubHarness.closes(h.tick()), [quiet: CloseCode.idle])
        h.advance(ms: 38_000)
        XCTAssertEqual(HubHarness.closes(h.tick()), [:], "heard 44 s ago")
        h.advance(ms: 2_000)
        XCTAssertEqual(HubHarness.closes(h.tick()), [pinging: CloseCode.idle])
    }

    /// A live connection whose token expires closes at the first housekeeping pass after the
    /// expiry, before its idle timeout, though it keeps sending frames.
    func testTokenExpiryClosesALiveConnectionAtTheFirstPassAfterIt() throws {
        let h = try HubHarness(config: HubConfig(idleTimeoutMs: 45_000, helloTimeoutMs: 10_000))
        let (short, _) = h.connect("alice", "phone", ttl: 30)
        let (long, _) = h.connect("bob", "phone")
        for _ in 0 ..< 29 {
            h.advance(ms: 1_000)
            _ = h.send(short, ["type": "ping"])
            _ = h.send(long, ["type": "ping"])
            XCTAssertEqual(HubHarness.closes(h.tick()), [:])
        }
        h.advance(ms: 1_000)
        XCTAssertEqual(HubHarness.closes(h.tick()), [:], "expires at 30 s: not after it yet")
        h.advance(ms: 1_000)
        XCTAssertEqual(HubHarness.closes(h.tick()), [short: CloseCode.tokenExpired])
        XCTAssertEqual(h.hub.liveDeviceCount, 1)
    }

    /// An idle timeout shorter than the hello timeout, and a token shorter than both, still
    /// close at the first pass after they are due.
    func testShortIdleTimeoutsAndShortTokensCloseAtTheFirstPassAfterThem() throws {
        let h = try HubHarness(config: HubConfig(idleTimeoutMs: 1_500, helloTimeoutMs: 10_000))
        let (idle, _) = h.connect("alice", "phone")
        h.advance(ms: 1_000)
        XCTAssertEqual(HubHarness.closes(h.tick()), [:])
        h.advance(ms: 1_000)
        XCTAssertEqual(HubHarness.closes(h.tick()), [idle: CloseCode.idle])

        let g = try HubHarness(config: HubConfig(idleTimeoutMs: 45_000, helloTimeoutMs: 10_000))
        let (short, _) = g.connect("bob", "phone", ttl: 2)
        g.advance(ms: 2_000)
        XCTAssertEqual(HubHarness.closes(g.tick()), [:], "expires at 2 s: not after it yet")
        g.advance(ms: 1_000)
        XCTAssertEqual(HubHarness.closes(g.tick()), [short: CloseCode.tokenExpired])
        g.advance(ms: 10_000)
        XCTAssertEqual(HubHarness.closes(g.tick()), [:], "its superseded hello check finds it closing")
    }

    /// A validly signed token whose `exp` in milliseconds does not fit in 64 bits: the hub
    /// saturates it (no overflow trap), and the connection still closes when idle.
    func testAbsurdTokenExpiryIsSaturated() throws {
        let h = try HubHarness(config: HubConfig(idleTimeoutMs: 45_000, helloTimeoutMs: 10_000))
        let (id, welcome) = h.connect("alice", "phone", ttl: Int64.max / 100)
        XCTAssertEqual(HubHarness.types(welcome, to: id).first, "welcome")
        h.advance(ms: 44_000)
        XCTAssertEqual(HubHarness.closes(h.tick()), [:])
        h.advance(ms: 2_000)
        XCTAssertEqual(HubHarness.closes(h.tick()), [id: CloseCode.idle])
    }

    /// Housekeeping looks only at the connections whose check is due: 1,000 devices that
    /// keep pinging are looked at about once per idle timeout each, not once a second, and
    /// none is closed.
    func testHousekeepingLooksOnlyAtConnectionsDue() throws {
        let h = try HubHarness(config: HubConfig(idleTimeoutMs: 45_000, helloTimeoutMs: 10_000))
        var heard: [ConnectionID: Int64] = [:]
        h.hub.lastFrameElsewhere = { heard[$0] ?? 0 }
        let ids = (0 ..< 1_000).map { h.connect("user\($0)", "phone").0 }
        let before = h.hub.counters.idleChecks
        // 120 s of passes, each device pinging (answered on its shard) every 15 s.
        for second in 1 ... 120 {
            h.advance(ms: 1_000)
            for (k, id) in ids.enumerated() where (k + second) % 15 == 0 { heard[id] = h.time.mono }
            XCTAssertEqual(HubHarness.closes(h.tick()), [:], "second \(second)")
        }
        let looked = h.hub.counters.idleChecks - before
        // Hello check at 10 s, then about every 30–45 s: 3–4 looks each in 120 s (a full
        // scan would have made 120,000).
        XCTAssertGreaterThanOrEqual(looked, 3_000)
        XCTAssertLessThanOrEqual(looked, 4_000)
        XCTAssertEqual(h.hub.liveDeviceCount, 1_000)
    }

    func testNewerConnectionReplacesOlderAndOldCloseChangesNothing() throws {
        let h = try HubHarness()
        let (old, _) = h.connect("alice", "phone")
        let (new, actions) = h.connect("alice", "phone")
        XCTAssertEqual(HubHarness.closes(actions), [old: CloseCode.replaced])
        h.hub.connectionClosed(old, time: h.time)
        XCTAssertEqual(h.hub.liveDeviceCount, 1)
        XCTAssertEqual(HubHarness.types(h.send(new, ["type": "ping"]), to: new), ["pong"])
    }
}
