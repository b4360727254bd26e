import CallCore
import Foundation
@testable import Signaling
import XCTest

/// `sfu.preferences` (docs/protocol.md §9): shape and types are frame errors, value ranges are
/// `result` refusals with stable codes answered by the hub, valid ones go to the media
/// coordinator with the authenticated device as the subscriber.
final class SFUPreferencesTests: XCTestCase {
    private func parse(_ fields: String) -> Result<ClientMessage, WireError> {
        ClientMessage.parse(#"{"v":1,"type":"sfu.preferences","eventID":"e-1","room":"r1","# + fields + "}")
    }

    private func preferences(_ fields: String, file: StaticString = #filePath, line: UInt = #line) throws -> (String, SFUPreferences) {
        guard case .success(.command(let command)) = parse(fields) else {
            XCTFail("not parsed: \(parse(fields))", file: file, line: line)
            throw WireError.malformed("test")
        }
        guard case .sfuPreferences(let room, let preferences) = command.kind else {
            XCTFail("wrong kind \(command.kind)", file: file, line: line)
            throw WireError.malformed("test")
        }
        XCTAssertEqual(command.kind.wireType, "sfu.preferences", file: file, line: line)
        XCTAssertEqual(command.kind.room, room, file: file, line: line)
        XCTAssertNil(command.callID, file: file, line: line)
        return (room, preferences)
    }

    func testMidAndTrackFormsParse() throws {
        let (room, byMid) = try preferences(#""publisher":"alice/laptop","mid":"1","maxWidth":640,"maxHeight":360"#)
        XCTAssertEqual(room, "r1")
        XCTAssertEqual(byMid, SFUPreferences(publisher: DeviceKey(account: "alice", device: "laptop"), mid: "1", maxWidth: 640, maxHeight: 360))
        XCTAssertNil(byMid.problem)

        // The msid track id of the server's offer ("<n>-<mid>") names the same track.
        let (_, byTrack) = try preferences(#""publisher":"alice/laptop","track":"3-1","maxWidth":640,"maxHeight":360,"maxLayer":1"#)
        XCTAssertEqual(byTrack.mid, "1")
        XCTAssertEqual(byTrack.maxLayer, 1)
        // A browser mid with token characters other than digits, and a mid with a dash.
        XCTAssertEqual(try preferences(#""publisher":"a/b","track":"12-video-0","maxWidth":1,"maxHeight":1"#).1.mid, "video-0")
        XCTAssertEqual(try preferences(#""publisher":"a/b","mid":"v~1","maxWidth":1,"maxHeight":1,"maxLayer":null"#).1.maxLayer, nil)
    }

    func testTrackIDParsing() {
        XCTAssertEqual(SFUPreferences.mid(fromTrackID: "0-0"), "0")
        XCTAssertEqual(SFUPreferences.mid(fromTrackID: "17-a-b"), "a-b")
        for bad in ["", "1", "-1", "1-", "x-1", "1x-1", "١-1", "1-a b", "1-" + String(repeating: "m", count: 65), "1-é"] {
            XCTAssertNil(SFUPreferences.mid(fromTrackID: bad), bad)
        }
    }

    func testShapeAndTypeErrorsAreFrameErrors() {
        let cases: [(String, String)] = [
            (#""mid":"1","maxWidth":1,"maxHeight":1"#, "malformed"),                                   // no publisher
            (#""publisher":"alice","mid":"1","maxWidth":1,"maxHeight":1"#, "invalidIdentifier"),       // no device
            (#""publisher":"alice/laptop/x","mid":"1","maxWidth":1,"maxHeight":1"#, "invalidIdentifier"),
            (#""publisher":"alice/","mid":"1","maxWidth":1,"maxHeight":1"#, "invalidIdentifier"),
            (#""publisher":"al ice/laptop","mid":"1","maxWidth":1,"maxHeight":1"#, "invalidIdentifier"),
            (#""publisher":"a/b","maxWidth":1,"maxHeight":1"#, "malformed"),                           // no mid/track
            (#""publisher":"a/b","mid":"1","track":"0-1","maxWidth":1,"maxHeight":1"#, "malformed"),   // both
            (#""publisher":"a/b","mid":"","maxWidth":1,"maxHeight":1"#, "malformed"),
            (#""publisher":"a/b","mid":"a b","maxWidth":1,"maxHeight":1"#, "malformed"),
            (#""publisher":"a/b","track":"video","maxWidth":1,"maxHeight":1"#, "malformed"),
            (#""publisher":"a/b","mid":"1","maxHeight":1"#, "malformed"),                              // no width
            (#""publisher":"a/b","mid":"1","maxWidth":1"#, "malformed"),                               // no height
            (#""publisher":"a/b","mid":"1","maxWidth":"big","maxHeight":1"#, "malformed"),
            (#""publisher":"a/b","mid":"1","maxWidth":1.5,"maxHeight":1"#, "malformed"),
            (#""publisher":"a/b","mid":"1","maxWidth":1,"maxHeight":1,"maxLayer":"2""#, "malformed"),
            (#""publisher":"a/b","mid":"1","maxWidth":1,"maxHeight":99999999999999999999"#, "malformed"),
            (#""publisher":7,"mid":"1","maxWidth":1,"maxHeight":1"#, "malformed"),
        ]
        for (fields, code) in cases {
            guard case .failure(let error) = parse(fields) else {
                XCTFail("accepted: \(fields)")
                continue
            }
            XCTAssertEqual(error.code, code, fields)
        }
        guard case .failure(let error) = ClientMessage.parse(#"{"v":1,"type":"sfu.preferences","eventID":"e-1","publisher":"a/b","mid":"1","maxWidth":1,"maxHeight":1}"#) else {
            return XCTFail("no room accepted")
        }
        XCTAssertEqual(error, .malformed("missing 'room'"))
    }

    func testValueRangesGiveStableCodes() throws {
        func problem(_ width: Int64, _ height: Int64, _ layer: Int64? = nil) -> String? {
            SFUPreferences(publisher: DeviceKey(account: "a", device: "b"), mid: "1", maxWidth: width, maxHeight: height, maxLayer: layer)
                .problem?.code
        }
        XCTAssertNil(problem(1, 1))
        XCTAssertNil(problem(16_383, 16_383, 0))
        XCTAssertNil(problem(1920, 1080, 2))
        XCTAssertEqual(problem(0, 360), "badSize")
        XCTAssertEqual(problem(640, 0), "badSize")
        XCTAssertEqual(problem(-640, 360), "badSize")
        XCTAssertEqual(problem(16_384, 360), "badSize")
        XCTAssertEqual(problem(640, .max), "badSize")
        XCTAssertEqual(problem(640, 360, 3), "badLayer")
        XCTAssertEqual(problem(640, 360, -1), "badLayer")
        XCTAssertEqual(problem(0, 360, 9), "badSize", "the size is checked first")
        // The scanner and the decoder read the new fields alike (negative values included).
        let frame = #"{"v":1,"type":"sfu.preferences","eventID":"e","room":"r","publisher":"a/b","track":"1-0","maxWidth":-3,"maxHeight":9,"maxLayer":2}"#
        XCTAssertEqual(RawFrame.scan(Array(frame.utf8)), try JSONDecoder().decode(RawFrame.self, from: Data(frame.utf8)))
        XCTAssertEqual(try preferences(#""publisher":"a/b","mid":"1","maxWidth":-3,"maxHeight":9"#).1.problem, .badSize)
    }

    func testPayloadHashCoversEveryField() throws {
        let base = #""publisher":"a/b","mid":"1","maxWidth":640,"maxHeight":360"#
        func hash(_ fields: String) throws -> String {
            guard case .success(.command(let command)) = parse(fields) else { throw WireError.malformed(fields) }
            return command.payloadHash
        }
        let variants = [
            #""publisher":"a/c","mid":"1","maxWidth":640,"maxHeight":360"#,
            #""publisher":"a/b","mid":"2","maxWidth":640,"maxHeight":360"#,
            #""publisher":"a/b","mid":"1","maxWidth":641,"maxHeight":360"#,
            #""publisher":"a/b","mid":"1","maxWidth":640,"maxHeight":361"#,
            #""publisher":"a/b","mid":"1","maxWidth":640,"maxHeight":360,"maxLayer":0"#,
        ]
        let hashes = try Set(([base] + variants).map(hash))
        XCTAssertEqual(hashes.count, 1 + variants.count)
        XCTAssertEqual(try hash(base), try hash(#""maxHeight":360,"maxWidth":640,"mid":"1","publisher":"a/b""#), "field order does not matter")
    }

    // MARK: Through the hub

    private func text(_ actions: [HubAction]) -> [String: Any]? {
        guard actions.count == 1, case .send(_, let text) = actions[0] else { return nil }
        return try? JSONSerialization.jsonObject(with: Data(text.bytes)) as? [String: Any]
    }

    func testHubRefusesOutOfRangeValuesWithAResultAndForwardsValidOnes() throws {
        let harness = try HubHarness()
        let (bob, _) = harness.connect("bob", "phone")
        let command: [String: Any] = ["type": "sfu.preferences", "eventID": "p-1", "room": "r1", "publisher": "alice/laptop",
                                      "mid": "1", "maxWidth": 0, "maxHeight": 360]
        let refused = try XCTUnwrap(text(harness.send(bob, command)))
        XCTAssertEqual(refused["type"] as? String, "result")
        XCTAssertEqual(refused["eventID"] as? String, "p-1")
        XCTAssertEqual(refused["command"] as? String, "sfu.preferences")
        XCTAssertEqual(refused["room"] as? String, "r1")
        XCTAssertEqual(refused["status"] as? String, "rejected")
        XCTAssertEqual(refused["code"] as? String, "badSize")

        var layered = command
        layered["eventID"] = "p-2"; layered["maxWidth"] = 640; layered["maxLayer"] = 5
        XCTAssertEqual(try XCTUnwrap(text(harness.send(bob, layered)))["code"] as? String, "badLayer")

        var valid = command
        valid["eventID"] = "p-3"; valid["maxWidth"] = 640
        let actions = harness.send(bob, valid)
        guard actions.count == 1, case .media(let request) = actions[0] else { return XCTFail("not forwarded: \(actions)") }
        // The subscriber is the authenticated device, whatever the frame says.
        XCTAssertEqual(request.device, DeviceKey(account: "bob", device: "phone"))
        XCTAssertEqual(request.connection, bob)
        XCTAssertEqual(request.eventID, "p-3")
        XCTAssertEqual(request.kind, .sfuPreferences(room: "r1", SFUPreferences(publisher: DeviceKey(account: "alice", device: "laptop"),
                                                                                mid: "1", maxWidth: 640, maxHeight: 360)))

        // A type error is a frame error, without the eventID (as for every command).
        var wrongType = command
        wrongType["eventID"] = "p-4"; wrongType["maxWidth"] = "640"
        let error = try XCTUnwrap(text(harness.send(bob, wrongType)))
        XCTAssertEqual(error["type"] as? String, "error")
        XCTAssertEqual(error["code"] as? String, "malformed")
    }

    func testPreferencesAreRateLimitedLikeOtherCommands() throws {
        let harness = try HubHarness(config: HubConfig(commandsPerSecond: 1, commandBurst: 2))
        let (bob, _) = harness.connect("bob", "phone")
        var outcomes: [String] = []
        for index in 0..<4 {
            let actions = harness.send(bob, ["type": "sfu.preferences", "eventID": "p-\(index)", "room": "r1",
                                             "publisher": "alice/laptop", "mid": "1", "maxWidth": 320, "maxHeight": 180])
            switch actions.first {
            case .media?: outcomes.append("forwarded")
            case .send(_, let text)?:
                let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(text.bytes)) as? [String: Any])
                outcomes.append(object["code"] as? String ?? "?")
            default: outcomes.append("none")
            }
        }
        XCTAssertEqual(outcomes, ["forwarded", "forwarded", "rateLimited", "rateLimited"])
        harness.advance(ms: 1000)
        let later = harness.send(bob, ["type": "sfu.preferences", "eventID": "p-9", "room": "r1", "publisher": "alice/laptop",
                                       "mid": "1", "maxWidth": 320, "maxHeight": 180])
        guard case .media? = later.first else { return XCTFail("not forwarded after a second: \(later)") }
    }
}
