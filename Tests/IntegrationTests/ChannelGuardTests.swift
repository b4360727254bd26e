import Auth
import Foundation
import IO
import SignalingClient
import XCTest

/// The channel's defences: tokens, size and shape limits, rate limits, idle close, one
/// connection per device. Every bad input gets a typed answer and the server stays up.
final class ChannelGuardTests: IntegrationCase {
    private func raw(_ server: ServerProcess) throws -> (WebSocketClient, RawInbox) {
        let inbox = RawInbox()
        let socket = try WebSocketClient.connectBlocking(loop: loop, url: server.url, onText: { inbox.add($0) },
                                                         onClose: { code, reason in inbox.closed(code, reason) })
        return (socket, inbox)
    }

    func testExpiredTokenIsClosedWith4002() throws {
        let server = try ServerProcess()
        let (socket, inbox) = try raw(server)
        let expired = server.token("alice", "phone", ttl: 60, now: Int64(Date().timeIntervalSince1970) - 3600)
        socket.send(text: "{\"v\":1,\"type\":\"hello\",\"token\":\"\(expired)\"}")
        XCTAssertEqual(try inbox.waitClose().code, 4002)
        XCTAssertTrue(inbox.texts.contains { $0.contains("\"code\":\"tokenExpired\"") })
    }

    func testForgedAndMalformedTokensAreClosedWith4001() throws {
        let server = try ServerProcess()
        let now = Int64(Date().timeIntervalSince1970)
        let forged = TokenSigner(secret: Array(repeating: 9, count: 32))
            .mint(try TokenClaims(account: "alice", device: "phone", issuedAt: now, expiresAt: now + 60))
        for token in [forged, "not-a-jwt", "eyJhbGciOiJub25lIn0.eyJzdWIiOiJhIn0."] {
            let (socket, inbox) = try raw(server)
            socket.send(text: "{\"v\":1,\"type\":\"hello\",\"token\":\"\(token)\"}")
            XCTAssertEqual(try inbox.waitClose().code, 4001, token)
        }
        // Frames before hello are a protocol violation.
        let (socket, inbox) = try raw(server)
        socket.send(text: "{\"v\":1,\"type\":\"call.invite\",\"eventID\":\"e\",\"callee\":\"bob\"}")
        XCTAssertEqual(try inbox.waitClose().code, 4010)
        XCTAssertFalse(server.logLines.joined().contains(forged), "tokens never reach the logs")
    }

    func testMalformedMessagesGetTypedErrorsAndTheConnectionSurvives() throws {
        let server = try ServerProcess()
        let alice = try device(server, "alice", "phone")
        let cases: [(String, String)] = [
            ("{not json", "malformed"),
            ("[1,2,3]", "malformed"),
            ("{\"v\":1}", "malformed"),
            ("{\"v\":2,\"type\":\"ping\"}", "malformed"),
            ("{\"v\":1,\"type\":\"call.teleport\",\"eventID\":\"e1\"}", "unknownType"),
            ("{\"v\":1,\"type\":\"call.answer\",\"eventID\":\"e2\",\"callID\":\"c\"}", "malformed"),
            ("{\"v\":1,\"type\":\"call.hangup\",\"eventID\":\"bad id!\",\"callID\":\"c\"}", "invalidIdentifier"),
            (String(repeating: "[", count: 100) + String(repeating: "]", count: 100), "malformed"),
            ("{\"v\":1,\"type\":\"call.invite\",\"eventID\":\"e3\",\"callee\":\"bob\",\"sdp\":\"\(String(repeating: "a", count: 40_000))\"}", "sdpTooLarge"),
        ]
        for (text, code) in cases {
            alice.sendRaw(text)
            let error = try alice.waitFor(type: "error")
            XCTAssertEqual(error.code, code, text.prefix(60).description)
        }
        XCTAssertEqual(try alice.request("call.get", ["callID": "nope"]).code, "callNotFound")
    }

    func testOversizedMessagesGetATypedErrorAndFloodsCloseOnlyThatConnection() throws {
        let server = try ServerProcess(settings: ["limits.max_message_bytes": "4096"])
        let alice = try device(server, "alice", "phone")
        alice.sendRaw("{\"v\":1,\"type\":\"ping\",\"pad\":\"\(String(repeating: "x", count: 10_000))\"}")
        XCTAssertEqual(try alice.waitFor(type: "error").code, "messageTooLarge")
        alice.sendRaw("{\"v\":1,\"type\":\"ping\"}")
        XCTAssertNotNil(try alice.waitFor(type: "pong"), "the connection survives a typed error")
        // Beyond the transport's hard cap (4 × the limit) libsoup drops the connection.
        alice.sendRaw("{\"v\":1,\"type\":\"ping\",\"pad\":\"\(String(repeating: "x", count: 20_000))\"}")
        _ = try alice.waitForClose()
        // The server is fine: a new connection works.
        let again = try device(server, "alice", "phone")
        again.sendRaw("{\"v\":1,\"type\":\"ping\"}")
        XCTAssertNotNil(try again.waitFor(type: "pong"))
    }

    func testRateLimitRefusesExcessCommandsWithoutRecordingThem() throws {
        let server = try ServerProcess(settings: ["limits.commands_per_second": "2", "limits.command_burst": "3"])
        let alice = try device(server, "alice", "phone")
        let ids = (0..<6).map { alice.command("call.get", eventID: "g\($0)", ["callID": "c\($0)"]) }
        var codes: [String] = []
        for id in ids { codes.append(try alice.waitFor { $0.eventID == id }.code ?? "") }
        XCTAssertEqual(codes.filter { $0 == "rateLimited" }.count, 3, "\(codes)")
    }

    func testNewerConnectionReplacesTheOlderOne() throws {
        let server = try ServerProcess()
        let first = try device(server, "alice", "phone")
        let second = try device(server, "alice", "phone")
        XCTAssertEqual(try first.waitForClose().code, 4003)
        second.sendRaw("{\"v\":1,\"type\":\"ping\"}")
        XCTAssertNotNil(try second.waitFor(type: "pong"))
    }

    func testIdleConnectionIsClosedWith4008() throws {
        let server = try ServerProcess(settings: ["limits.idle_timeout": "1500ms", "limits.heartbeat_interval": "500ms"])
        let alice = try device(server, "alice", "phone")
        XCTAssertEqual(try alice.waitForClose(timeout: 10).code, 4008)
    }

    /// Pings of an authenticated connection are answered by its shard thread, never seen by
    /// the hub; the hub's idle check must still count them (it would close at 1.5 s).
    func testPingsAnsweredOnTheShardsKeepTheConnectionOpenPastTheIdleTimeout() throws {
        let server = try ServerProcess(settings: ["limits.idle_timeout": "1500ms", "limits.heartbeat_interval": "500ms",
                                                  "http.shards": "2"])
        let alice = try device(server, "alice", "phone")
        let started = Date()
        // 4 s of pings, one per 250 ms: more than twice the idle timeout.
        while Date().timeIntervalSince(started) < 4 {
            alice.sendRaw("{\"v\":1,\"type\":\"ping\"}")
            XCTAssertNotNil(try alice.waitFor(type: "pong"))
            Thread.sleep(forTimeInterval: 0.25)
        }
        // Still open (a wait on a closed client throws) and served by the hub: a command gets
        // its result.
        let id = alice.command("call.get", eventID: "g1", ["callID": "c1"])
        XCTAssertNotNil(try alice.waitFor { $0.eventID == id })
        // The first ping may reach the hub before the shard's handler is installed.
        XCTAssertGreaterThanOrEqual(try metricTotal(server, "switchboard_pongs_on_shards_total"), 10)
        // Silence: closed as idle.
        XCTAssertEqual(try alice.waitForClose(timeout: 10).code, 4008)
    }

    func testTooManyDevicesPerAccountIsRefused() throws {
        let server = try ServerProcess(settings: ["limits.max_devices_per_account": "2"])
        _ = try device(server, "alice", "a")
        _ = try device(server, "alice", "b")
        XCTAssertThrowsError(try device(server, "alice", "c"))
    }
}

/// Collects raw frames of a `WebSocketClient` (tests that speak before `hello`).
final class RawInbox: @unchecked Sendable {
    private let condition = NSCondition()
    private(set) var texts: [String] = []
    private var close: (code: UInt16, reason: String)?

    func add(_ text: String) { condition.lock(); texts.append(text); condition.broadcast(); condition.unlock() }
    func closed(_ code: UInt16, _ reason: String) { condition.lock(); close = (code, reason); condition.broadcast(); condition.unlock() }

    func waitClose(timeout: TimeInterval = 10) throws -> (code: UInt16, reason: String) {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock(); defer { condition.unlock() }
        while close == nil { if !condition.wait(until: deadline) { throw SignalingClient.ClientError.timeout("close") } }
        return close!
    }
}
