import Foundation
import CallCore
@testable import Signaling
import XCTest

final class ClientMessageTests: XCTestCase {
    func testHelloPingAndAck() {
        XCTAssertEqual(try ClientMessage.parse(#"{"v":1,"type":"hello","token":"abc","cursor":"41"}"#).get(),
                       .hello(token: "abc", cursor: 41))
        XCTAssertEqual(try ClientMessage.parse(#"{"type":"hello","token":"abc"}"#).get(), .hello(token: "abc", cursor: nil))
        XCTAssertEqual(try ClientMessage.parse(#"{"v":1,"type":"ping"}"#).get(), .ping)
        XCTAssertEqual(try ClientMessage.parse(#"{"v":1,"type":"ack","cursor":"7"}"#).get(), .ack(cursor: 7))
    }

    func testEveryCommandParses() throws {
        let cases: [(String, CommandKind)] = [
            (#"{"v":1,"type":"call.invite","eventID":"e","callee":"bob","sdp":"v=0"}"#, .invite(callee: "bob", callID: nil, sdp: "v=0", media: nil)),
            (#"{"v":1,"type":"call.invite","eventID":"e","callee":"bob","callID":"c-1","media":"sfu"}"#, .invite(callee: "bob", callID: "c-1", sdp: nil, media: .sfu)),
            (#"{"v":1,"type":"call.ringing","eventID":"e","callID":"c"}"#, .ringing(callID: "c")),
            (#"{"v":1,"type":"call.answer","eventID":"e","callID":"c","revision":3,"sdp":"x"}"#, .answer(callID: "c", revision: 3, sdp: "x")),
            (#"{"v":1,"type":"call.decline","eventID":"e","callID":"c","revision":3}"#, .decline(callID: "c", revision: 3)),
            (#"{"v":1,"type":"call.cancel","eventID":"e","callID":"c"}"#, .cancel(callID: "c")),
            (#"{"v":1,"type":"call.hangup","eventID":"e","callID":"c"}"#, .hangup(callID: "c")),
            (#"{"v":1,"type":"call.mediaConnected","eventID":"e","callID":"c"}"#, .mediaConnected(callID: "c")),
            (#"{"v":1,"type":"call.mediaLost","eventID":"e","callID":"c"}"#, .mediaLost(callID: "c")),
            (#"{"v":1,"type":"call.get","eventID":"e","callID":"c"}"#, .get(callID: "c")),
            (#"{"v":1,"type":"sdp.offer","eventID":"e","callID":"c","generation":2,"sdp":"o"}"#, .offer(callID: "c", generation: 2, sdp: "o")),
            (#"{"v":1,"type":"sdp.answer","eventID":"e","callID":"c","generation":2,"sdp":"a"}"#, .answerSDP(callID: "c", generation: 2, sdp: "a")),
            (#"{"v":1,"type":"ice.candidate","eventID":"e","callID":"c","generation":1,"candidate":"candidate:1","sdpMid":"0","sdpMLineIndex":0,"ufrag":"u"}"#,
             .candidate(callID: "c", generation: 1, candidate: "candidate:1", sdpMid: "0", sdpMLineIndex: 0, ufrag: "u")),
        ]
        for (text, kind) in cases {
            guard case .command(let command) = try ClientMessage.parse(text).get() else { return XCTFail(text) }
            XCTAssertEqual(command.kind, kind, text)
            XCTAssertEqual(command.eventID, "e")
        }
    }

    func testTypedErrors() {
        let cases: [(String, WireError)] = [
            ("", .malformed("not valid JSON")),
            ("{", .malformed("not valid JSON")),
            ("[]", .malformed("not a JSON object")),
            (#"{"v":1}"#, .malformed("missing 'type'")),
            (#"{"v":3,"type":"ping"}"#, .unsupportedVersion(3)),
            (#"{"v":1,"type":"nope","eventID":"e"}"#, .unknownType("nope")),
            (#"{"v":1,"type":"call.cancel","callID":"c"}"#, .malformed("missing 'eventID'")),
            (#"{"v":1,"type":"call.cancel","eventID":"a b","callID":"c"}"#, .invalidIdentifier(field: "eventID")),
            (#"{"v":1,"type":"call.cancel","eventID":"e","callID":"\#(String(repeating: "x", count: 65))"}"#, .invalidIdentifier(field: "callID")),
            (#"{"v":1,"type":"call.answer","eventID":"e","callID":"c","revision":-1}"#, .malformed("missing 'revision'")),
            (#"{"v":1,"type":"call.answer","eventID":"e","callID":"c","revision":"3"}"#, .malformed("field 'revision' has the wrong type")),
            (#"{"v":1,"type":"ack","cursor":"x"}"#, .malformed("'cursor' is not a stream position")),
            (String(repeating: "[", count: 9) + String(repeating: "]", count: 9), .tooDeep),
        ]
        for (text, error) in cases {
            XCTAssertEqual(ClientMessage.parse(text), .failure(error), text)
        }
        let big = #"{"v":1,"type":"sdp.offer","eventID":"e","callID":"c","generation":1,"sdp":"\#(String(repeating: "a", count: ClientMessage.maxSDPBytes + 1))"}"#
        XCTAssertEqual(ClientMessage.parse(big), .failure(.sdpTooLarge))
    }

    func testRandomBytesNeverTrap() {
        var state: UInt64 = 0x5EED
        for _ in 0..<3000 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            let count = Int(state >> 58)
            var bytes: [UInt8] = []
            for i in 0..<count { bytes.append(UInt8(truncatingIfNeeded: (state >> UInt64(i % 56)) ^ UInt64(i))) }
            _ = ClientMessage.parse(String(decoding: bytes, as: UTF8.self))
        }
    }

    func testPayloadHashIgnoresEventIDButNotMeaning() throws {
        func hash(_ text: String) throws -> String {
            guard case .command(let c) = try ClientMessage.parse(text).get() else { throw WireError.tooDeep }
            return c.payloadHash
        }
        let a = try hash(#"{"v":1,"type":"call.cancel","eventID":"e1","callID":"c"}"#)
        XCTAssertEqual(a, try hash(#"{ "type" : "call.cancel", "callID":"c", "eventID":"e2" }"#))
        XCTAssertNotEqual(a, try hash(#"{"v":1,"type":"call.hangup","eventID":"e1","callID":"c"}"#))
        XCTAssertNotEqual(a, try hash(#"{"v":1,"type":"call.cancel","eventID":"e1","callID":"d"}"#))
    }
}

final class WireHelpersTests: XCTestCase {
    func testJSONShapeDepthSkipsStrings() {
        XCTAssertEqual(JSONShape.depth(of: Array(#"{"a":[1,{"b":2}]}"#.utf8)), 3)
        XCTAssertEqual(JSONShape.depth(of: Array(#"{"a":"[[[[[[[[[[\"]]"}"#.utf8)), 1)
        XCTAssertEqual(JSONShape.depth(of: Array("".utf8)), 0)
    }

    func testJSONWriterEscapesAndRoundTrips() throws {
        let nasty = "quote\" back\\slash \n\r\t \u{01} \u{1F} é 🎧 </script>"
        var w = JSONWriter()
        w.field("s", nasty)
        w.field("i", Int64(-5))
        w.field("b", true)
        w.raw("o", "{\"x\":1}")
        w.field("absent", nil as String?)
        let text = w.finish()
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        XCTAssertEqual(object["s"] as? String, nasty)
        XCTAssertEqual(object["i"] as? Int, -5)
        XCTAssertEqual(object["b"] as? Bool, true)
        XCTAssertEqual((object["o"] as? [String: Any])?["x"] as? Int, 1)
        XCTAssertNil(object["absent"])
    }

    func testJSONWriterEscapesEveryControlCharacterBetweenLongRuns() throws {
        let controls = String(decoding: (0 ..< 0x20).map { UInt8($0) }, as: UTF8.self)
        let sdp = String(repeating: "a=fingerprint:sha-256 AB:CD é🎧\r\n", count: 100)
        let value = "\"" + sdp + controls + "\\" + sdp + "tail"
        var w = JSONWriter()
        w.field("sdp", value)
        w.field("key \"q\"", "")
        let text = w.finish()
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        XCTAssertEqual(object["sdp"] as? String, value)
        XCTAssertEqual(object["key \"q\""] as? String, "")
        // RFC 8259 §7: the two-character escapes where they exist, \u00XX otherwise; no raw
        // control character is left in the output.
        XCTAssertTrue(text.contains("\\r\\n"))
        XCTAssertTrue(text.contains("\\u0001"))
        XCTAssertTrue(text.contains("\\u001f"))
        XCTAssertFalse(text.utf8.contains { $0 < 0x20 })
        var quoted = ""
        JSONWriter.appendQuoted("a\"b", to: &quoted)
        XCTAssertEqual(quoted, "\"a\\\"b\"")
    }

    func testTokenBucketRefillsAtItsRate() {
        var bucket = TokenBucket(ratePerSecond: 10, burst: 3, now: 0)
        XCTAssertEqual((0..<4).map { _ in bucket.take(now: 0) }, [true, true, true, false])
        XCTAssertFalse(bucket.take(now: 50))  // half a token
        XCTAssertTrue(bucket.take(now: 100))
        XCTAssertEqual((0..<4).map { _ in bucket.take(now: 10_000) }, [true, true, true, false], "capped at burst")
    }

    /// `seq` right after the version: the benchmark reads it only there (Bench's
    /// `FrameScan.leadingSeq`, tested in `FrameScanTests.testLeadingSeqIsReadOnlyRightAfterTheVersion`).
    func testOutboxFrameSplicesSeqAndExtras() {
        let payload = #"{"v":1,"type":"call.incoming","callID":"c"}"#
        XCTAssertTrue(OutboxFrame.isIncoming(payload))
        XCTAssertEqual(OutboxFrame.frame(payload: payload, seq: 9, extra: #""turn":{}"#),
                       #"{"v":1,"seq":"9","turn":{},"type":"call.incoming","callID":"c"}"#)
    }
}
