import CallCore
import Foundation
@testable import Signaling
import XCTest

/// The SDP literal a device sent is reused only when it is byte for byte what the writer
/// makes of the parsed SDP (``ClientMessage/parse(_:quotedSDP:)``), and ``QuotedSDPMemo``
/// gives every body its writer literal, whoever escaped it.
final class QuotedSDPTests: XCTestCase {
    /// `sdp` escaped by the writer, as a frame's `sdp` value.
    private static func writerLiteral(_ sdp: String) -> [UInt8] {
        var out: [UInt8] = []
        JSONWriter.appendQuoted(sdp, to: &out)
        return out
    }

    private static func invite(sdpLiteral: String) -> String {
        #"{"v":1,"type":"call.invite","eventID":"e1","callee":"bob","sdp":"# + sdpLiteral + "}"
    }

    private static func parse(_ frame: String) throws -> (sdp: String?, quoted: [UInt8]?) {
        var quoted: [UInt8]?
        guard case .success(.command(let command)) = ClientMessage.parse(frame, quotedSDP: &quoted) else {
            XCTFail("not a command: \(frame)")
            return (nil, nil)
        }
        return (command.kind.callSDP, quoted)
    }

    func testAWriterLiteralIsTakenAsSent() throws {
        let sdps = ["v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\na=group:BUNDLE 0 1\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\n",
                    "quote \" backslash \\ tab \t control \u{01}\u{1F} nul \u{0} DEL \u{7F} é😀 end",
                    "no escapes at all",
                    ""]
        for sdp in sdps {
            let literal = Self.writerLiteral(sdp)
            let (parsed, quoted) = try Self.parse(Self.invite(sdpLiteral: String(decoding: literal, as: UTF8.self)))
            XCTAssertEqual(parsed, sdp)
            XCTAssertEqual(quoted, literal, "the literal of \(sdp.debugDescription) is the writer's")
        }
    }

    func testOtherEscapesAreNotTakenButParseTheSame() throws {
        let cases: [(literal: String, sdp: String)] = [
            (#""UDP\/TLS""#, "UDP/TLS"),
            (#""a\u000Ab""#, "a\nb"),
            (#""a\u000ab""#, "a\nb"),
            (#""a\u000db""#, "a\rb"),
            (#""a\u0009b""#, "a\tb"),
            (#""a\u001Fb""#, "a\u{1F}b"),
            (#""a\bb""#, "a\u{08}b"),
            (#""a\fb""#, "a\u{0C}b"),
            (#""caf\u00e9""#, "café"),
            (#""\ud83d\ude00""#, "😀"),
            (#""\u0022""#, "\""),
        ]
        for (literal, sdp) in cases {
            let (parsed, quoted) = try Self.parse(Self.invite(sdpLiteral: literal))
            XCTAssertEqual(parsed, sdp, literal)
            XCTAssertNil(quoted, "\(literal) is not the writer's form of \(sdp.debugDescription)")
        }
        // The writer's own \u escape (a control byte without a short form) is taken.
        let (parsed, quoted) = try Self.parse(Self.invite(sdpLiteral: #""a\u001fb""#))
        XCTAssertEqual(parsed, "a\u{1F}b")
        XCTAssertEqual(quoted, Array(#""a\u001fb""#.utf8))
    }

    func testOnlyTheSDPFieldIsReported() throws {
        var quoted: [UInt8]?
        let frame = #"{"v":1,"type":"call.ringing","eventID":"e1","callID":"c1"}"#
        guard case .success = ClientMessage.parse(frame, quotedSDP: &quoted) else { return XCTFail("refused") }
        XCTAssertNil(quoted)
    }

    func testTheMemoMatchesBytesNotCanonicalEquivalence() {
        let precomposed = "caf\u{E9}\r\n"
        let decomposed = "cafe\u{301}\r\n"
        XCTAssertEqual(precomposed, decomposed, "equal as Strings")
        var memo = QuotedSDPMemo()
        XCTAssertEqual(memo.quoted(precomposed), Self.writerLiteral(precomposed))
        XCTAssertEqual(memo.quoted(decomposed), Self.writerLiteral(decomposed))
        XCTAssertNotEqual(Self.writerLiteral(precomposed), Self.writerLiteral(decomposed))
        XCTAssertEqual(memo.quoted(precomposed), Self.writerLiteral(precomposed))
    }

    func testTheMemoForgetsTheOldestBeyondItsCapacity() {
        var memo = QuotedSDPMemo()
        let bodies = (0 ... QuotedSDPMemo.capacity).map { "v=0\r\ns=\($0)\r\n" }
        for body in bodies { memo.remember(body, quoted: Array("\"seeded \(body.count)\"".utf8)) }
        // The first was pushed out and is escaped afresh; the others come from the memo.
        XCTAssertEqual(memo.quoted(bodies[0]), Self.writerLiteral(bodies[0]))
        XCTAssertEqual(memo.quoted(bodies[QuotedSDPMemo.capacity]), Array("\"seeded \(bodies[0].count)\"".utf8))
    }

    /// Through the hub: an offer sent with `\/` (Foundation's escaping) and the same offer in
    /// the writer's form give the callee the same `call.incoming` bytes.
    func testTheIncomingOfferIsTheWritersWhateverTheCallerSent() throws {
        let sdp = "v=0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=ice-ufrag:Ab1x\r\n"
        var incoming: [String] = []
        for literal in [String(decoding: Self.writerLiteral(sdp), as: UTF8.self),
                        String(decoding: Self.writerLiteral(sdp), as: UTF8.self).replacingOccurrences(of: "/", with: #"\/"#)] {
            let h = try HubHarness()
            let (alice, _) = h.connect("alice", "laptop")
            let (bob, _) = h.connect("bob", "phone")
            let frame = #"{"v":1,"type":"call.invite","eventID":"e1","callID":"c1","callee":"bob","sdp":"# + literal + "}"
            let actions = h.hub.received(frame, on: alice, time: h.time)
            let frames = HubHarness.frames(actions, to: bob)
            XCTAssertEqual(frames.first?["sdp"] as? String, sdp)
            for case .send(let id, let frame) in actions where id == bob { incoming.append(frame.text) }
        }
        XCTAssertEqual(incoming.count, 2)
        XCTAssertEqual(incoming.first, incoming.last)
        XCTAssertTrue(incoming.first?.contains(#""sdp":"# + String(decoding: Self.writerLiteral(sdp), as: UTF8.self)) ?? false)
    }
}
