import CallCore
import Foundation
import Storage
@testable import Signaling
import XCTest

/// The compact stored first result (``StoredResult``): a retry gets the very bytes of the
/// first result, whatever kind of result it was.
final class StoredResultTests: XCTestCase {
    private struct Exchange {
        var connection: ConnectionID
        var frame: String
        var result: String
    }

    private static func frame(_ object: [String: Any]) -> String {
        var object = object
        object["v"] = 1
        return String(decoding: try! JSONSerialization.data(withJSONObject: object, options: .sortedKeys), as: UTF8.self)
    }

    private static func result(_ actions: [HubAction], to id: ConnectionID) -> String? {
        for case .send(let target, let frame) in actions where target == id && frame.text.contains("\"type\":\"result\"") {
            return frame.text
        }
        return nil
    }

    /// One call with every kind of recorded result: accepted (with and without a change),
    /// rejected by the reducer with a snapshot, refused before the reducer without one.
    private func callWithEveryKindOfResult(_ h: HubHarness) throws -> [Exchange] {
        let (caller, _) = h.connect("alice", "laptop")
        let callees = ["phone", "tablet", "desk"].map { h.connect("bob", $0).0 }
        var exchanges: [Exchange] = []
        @discardableResult
        func run(_ id: ConnectionID, _ object: [String: Any]) throws -> [String: Any] {
            let text = Self.frame(object)
            let result = try XCTUnwrap(Self.result(h.hub.received(text, on: id, time: h.time), to: id), text)
            exchanges.append(Exchange(connection: id, frame: text, result: result))
            h.advance(ms: 7)
            return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.utf8)) as? [String: Any])
        }
        let offer = "v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\na=ice-ufrag:abcd\r\na=ice-pwd:0123456789012345678901\r\n"
        let invite = try run(caller, ["type": "call.invite", "eventID": "i1", "callee": "bob", "sdp": offer])
        let callID = try XCTUnwrap(invite["callID"] as? String)
        for (index, id) in callees.enumerated() { try run(id, ["type": "call.ringing", "eventID": "r\(index)", "callID": callID]) }
        try run(callees[0], ["type": "call.ringing", "eventID": "r-again", "callID": callID])
        let revision = try XCTUnwrap(invite["revision"] as? Int)
        try run(callees[0], ["type": "call.answer", "eventID": "a0", "callID": callID, "revision": revision + 3,
                             "sdp": offer.replacingOccurrences(of: "abcd", with: "wxyz")])
        try run(callees[1], ["type": "call.answer", "eventID": "a1", "callID": callID, "revision": revision + 3])
        try run(caller, ["type": "ice.candidate", "eventID": "c1", "callID": callID, "generation": 1,
                         "candidate": "candidate:1 1 udp 2122260223 192.0.2.1 54400 typ host", "sdpMid": "0",
                         "sdpMLineIndex": 0, "ufrag": "abcd"])
        try run(caller, ["type": "call.mediaConnected", "eventID": "m1", "callID": callID])
        try run(caller, ["type": "call.invite", "eventID": "self", "callee": "alice"])
        try run(caller, ["type": "call.hangup", "eventID": "h-unknown", "callID": "no-such-call"])
        try run(caller, ["type": "call.hangup", "eventID": "h1", "callID": callID])
        try run(callees[2], ["type": "call.hangup", "eventID": "h2", "callID": callID])
        return exchanges
    }

    /// Accepted results name the call's phase (and end reason once ended) instead of carrying
    /// its snapshot; rejections that may see the call carry the snapshot (docs/protocol.md §4).
    func testAcceptedResultsCarryThePhaseAndRejectionsTheSnapshot() throws {
        let h = try HubHarness()
        let exchanges = try callWithEveryKindOfResult(h)
        var seen: [String: Int] = [:]
        var phases: [String] = []
        for exchange in exchanges {
            let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(exchange.result.utf8)) as? [String: Any])
            let command = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(exchange.frame.utf8)) as? [String: Any])
            let status = try XCTUnwrap(object["status"] as? String)
            seen[status, default: 0] += 1
            if status == "accepted" {
                XCTAssertNil(object["snapshot"], exchange.result)
                XCTAssertNotNil(object["phase"] as? String, exchange.result)
                phases.append(object["phase"] as? String ?? "")
                XCTAssertEqual(object["endReason"] != nil, object["phase"] as? String == "ended", exchange.result)
            } else if command["callID"] as? String == "no-such-call" || command["callee"] as? String == "alice" {
                XCTAssertNil(object["snapshot"], exchange.result)
            } else {
                XCTAssertNotNil(object["snapshot"] as? [String: Any], exchange.result)
                XCTAssertNil(object["phase"], exchange.result)
            }
        }
        XCTAssertGreaterThanOrEqual(seen["accepted"] ?? 0, 8, "\(seen)")
        XCTAssertGreaterThanOrEqual(seen["rejected"] ?? 0, 3, "\(seen)")
        XCTAssertEqual(phases.first, "ringing")
        XCTAssertTrue(phases.contains("connecting"), "\(phases)")
        XCTAssertTrue(phases.contains("active"), "\(phases)")
        XCTAssertEqual(phases.last, "ended")
    }

    func testEveryRetriedCommandGetsItsFirstResultByteForByte() throws {
        let h = try HubHarness()
        let exchanges = try callWithEveryKindOfResult(h)
        let statuses = exchanges.compactMap { exchange -> String? in
            let object = try? JSONSerialization.jsonObject(with: Data(exchange.result.utf8)) as? [String: Any]
            return (object?["status"] as? String).map { $0 + ((object?["noop"] as? Bool) == true ? "/noop" : "") }
        }
        XCTAssertTrue(Set(statuses).isSuperset(of: ["accepted", "accepted/noop", "rejected"]), "\(statuses)")
        h.advance(ms: 60_000)
        for exchange in exchanges {
            let again = try XCTUnwrap(Self.result(h.hub.received(exchange.frame, on: exchange.connection, time: h.time),
                                                  to: exchange.connection))
            XCTAssertTrue(again.contains("\"status\":\"duplicate\""), again)
            XCTAssertTrue(again.hasSuffix(",\"first\":" + exchange.result + "}"), "\(exchange.frame)\n\(again)")
        }
        XCTAssertEqual(h.hub.counters.duplicates, exchanges.count)
    }

    func testCompactFormRoundTripsAndIsFarSmallerThanTheJSON() throws {
        let h = try HubHarness()
        _ = try callWithEveryKindOfResult(h)
        // Every stored result of the call, read back through the store.
        var checked = 0
        for (device, eventID) in [("laptop", "i1"), ("phone", "r0"), ("phone", "a0"), ("tablet", "a1"), ("laptop", "h1"),
                                  ("laptop", "self"), ("desk", "h2")] {
            let account = device == "laptop" ? "alice" : "bob"
            let stored = try XCTUnwrap(try h.store.processedEvent(account: account, device: device, eventID: eventID))
            XCTAssertEqual(stored.result.first, StoredResult.formatTag)
            let decoded = try StoredResult.decode(stored.result)
            XCTAssertEqual(decoded.encode(), stored.result)
            XCTAssertEqual(decoded.serverTime, stored.processedAt)
            guard case .command(let command) = try ClientMessage.parse(Self.frame(["type": "call.get", "eventID": eventID,
                                                                                   "callID": "x"])).get() else {
                return XCTFail("not a command")
            }
            XCTAssertLessThan(stored.result.count * 3, decoded.render(command).utf8.count, eventID)
            checked += 1
        }
        XCTAssertEqual(checked, 7)
    }

    func testTruncatedOrForeignBytesAreRefusedWithoutTrapping() throws {
        let snapshot = CallSnapshot(
            callID: "c1", revision: 4, phase: .active, caller: DeviceKey(account: "alice", device: "laptop"), callee: "bob",
            devices: [DeviceEntry(device: DeviceKey(account: "alice", device: "laptop"), participation: .callerDevice),
                      DeviceEntry(device: DeviceKey(account: "bob", device: "phone"), participation: .answered),
                      DeviceEntry(device: DeviceKey(account: "bob", device: "tablet"), participation: .stopped(.answeredElsewhere)),
                      DeviceEntry(device: DeviceKey(account: "carol", device: "x"), participation: .inProgressElsewhere)],
            answeredBy: DeviceKey(account: "bob", device: "phone"), endReason: .hangup,
            endedBy: DeviceKey(account: "carol", device: "ü"), createdAt: -5, endedAt: 1_800_000_000_000,
            deadlines: CallDeadlines(ring: 1, connect: Int64.max), generation: 2, media: .sfu)
        let results = [
            StoredResult(callID: "c1", status: .rejected(code: "staleRevision", message: "é"), call: .snapshot(snapshot),
                         serverTime: Int64.min),
            // An accepted row as builds before 2026-12-02 stored it, with the snapshot.
            StoredResult(callID: "c1", status: .accepted(revision: 4, noop: false), call: .snapshot(snapshot), serverTime: 3),
            StoredResult(callID: "c1", status: .accepted(revision: 9, noop: true), call: .phase(.ended, endReason: .busy),
                         serverTime: Int64.max),
            StoredResult(callID: nil, status: .accepted(revision: 2, noop: false), call: .phase(.ringing, endReason: nil),
                         serverTime: 0),
            StoredResult(callID: nil, status: .rejected(code: "selfCall", message: ""), call: nil, serverTime: -1),
        ]
        for result in results {
            let bytes = result.encode()
            XCTAssertEqual(try StoredResult.decode(bytes), result)
            for length in 0..<bytes.count {
                XCTAssertThrowsError(try StoredResult.decode(bytes.prefix(length)), "\(length)")
            }
            XCTAssertThrowsError(try StoredResult.decode(bytes + [0]))
        }
        // A phase or end reason this build does not know is a corrupt row, not a guess; the
        // same bytes with known names decode.
        func phaseRow(_ phase: String, _ endReason: String?) -> Data {
            var w = CompactWriter()
            w.byte(StoredResult.formatTag)
            w.optionalString("c1")
            w.byte(0)
            w.int(3)
            w.int(1)
            w.byte(2)
            w.string(phase)
            w.optionalString(endReason)
            return w.record()
        }
        XCTAssertEqual(try StoredResult.decode(phaseRow("ended", "busy")),
                       StoredResult(callID: "c1", status: .accepted(revision: 3, noop: false),
                                    call: .phase(.ended, endReason: .busy), serverTime: 1))
        XCTAssertThrowsError(try StoredResult.decode(phaseRow("dialing", nil)))
        XCTAssertThrowsError(try StoredResult.decode(phaseRow("ended", "unplugged")))
        // An older build's row: the JSON itself, returned as stored.
        guard case .command(let command) = try ClientMessage.parse(#"{"v":1,"type":"call.hangup","eventID":"e","callID":"c"}"#).get()
        else { return XCTFail("not a command") }
        let legacy = #"{"v":1,"type":"result","eventID":"e","callID":"c","status":"accepted","revision":3,"serverTime":1}"#
        XCTAssertEqual(StoredResult.firstResultJSON(stored: Data(legacy.utf8), command: command), legacy)
        XCTAssertNil(StoredResult.firstResultJSON(stored: Data([StoredResult.formatTag, 9]), command: command))
        XCTAssertNil(StoredResult.firstResultJSON(stored: Data(), command: command))
    }
}
