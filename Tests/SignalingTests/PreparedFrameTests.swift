import Signaling
import XCTest

/// A frame parsed off the hub's thread (``SignalingHub/prepare(_:maxMessageBytes:)``, what
/// the server's shards do) must lead to exactly what the hub does when it parses the frame
/// itself: the same frames out, byte for byte, the same closes, the same counters.
final class PreparedFrameTests: XCTestCase {
    /// One script through two hubs: `plain` parses every frame itself, `prepared` gets each
    /// frame parsed beforehand. Covers hello, a call with SDP and candidates, a duplicate, a
    /// malformed frame, an oversized frame and an unknown type.
    func testPreparedFramesLeadToTheSameActionsAsParsingOnTheHub() throws {
        let config = HubConfig(maxMessageBytes: 2_048)
        let plain = try HubHarness(config: config), prepared = try HubHarness(config: config)
        let sdp = "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=mid:0\r\n"
        let script: [(device: Int, text: String)] = [
            (0, hello(plain, "alice", "phone")),
            (1, hello(plain, "bob", "tablet")),
            (2, hello(plain, "bob", "laptop")),
            (0, #"{"v":1,"type":"call.invite","eventID":"e1","callID":"c1","callee":"bob","sdp":\#(quoted(sdp))}"#),
            (0, #"{"v":1,"type":"call.invite","eventID":"e1","callID":"c1","callee":"bob","sdp":\#(quoted(sdp))}"#),
            (2, #"{"v":1,"type":"call.answer","eventID":"e2","callID":"c1","revision":1,"sdp":\#(quoted(sdp))}"#),
            (0, #"{"v":1,"type":"ice.candidate","eventID":"e3","callID":"c1","generation":1,"candidate":"candidate:1 1 udp 2122260223 192.0.2.1 50000 typ host","sdpMid":"0","sdpMLineIndex":0}"#),
            (1, #"{"v":1,"type":"call.answer","eventID":"e4","callID":"c1","revision":1}"#),
            (2, #"{"v":1,"type":"#),
            (2, #"{"v":1,"type":"call.hangup","eventID":"e5","callID":"c1","pad":"\#(String(repeating: "x", count: 2_100))"}"#),
            (0, #"{"v":1,"type":"no.such.type","eventID":"e6"}"#),
            (0, #"{"v":1,"type":"ping"}"#),
            (2, #"{"v":1,"type":"call.hangup","eventID":"e7","callID":"c1"}"#),
        ]
        let plainIDs = (0 ..< 3).map { _ in plain.open() }
        let preparedIDs = (0 ..< 3).map { _ in prepared.open() }
        for (step, frame) in script.enumerated() {
            let viaHub = plain.hub.received(frame.text, on: plainIDs[frame.device], time: plain.time)
            let viaShard = prepared.hub.received(frame.text, prepared: SignalingHub.prepare(frame.text, maxMessageBytes: 2_048),
                                                 on: preparedIDs[frame.device], time: prepared.time)
            XCTAssertEqual(viaShard, viaHub, "step \(step): \(frame.text.prefix(60))")
            plain.advance(ms: 7)
            prepared.advance(ms: 7)
        }
        XCTAssertEqual(prepared.hub.counters, plain.hub.counters)
        // The script did what it says: a call was placed, answered and hung up, one command
        // came twice, and the bad frames reached the hub as malformed.
        XCTAssertGreaterThanOrEqual(plain.hub.counters.accepted, 4)
        XCTAssertEqual(plain.hub.counters.duplicates, 1)
        XCTAssertGreaterThan(plain.hub.counters.malformedFrames, 1)
    }

    /// A frame prepared under another size limit than the hub's is parsed again by the hub:
    /// the limit in force is the hub's.
    func testAFramePreparedUnderAnotherLimitIsCheckedAgainstTheHubsLimit() throws {
        let h = try HubHarness(config: HubConfig(maxMessageBytes: 600))
        let (id, welcome) = h.connect("alice", "phone")
        XCTAssertEqual(HubHarness.types(welcome, to: id).first, "welcome")
        let text = #"{"v":1,"type":"call.invite","eventID":"e1","callID":"c1","callee":"bob","note":"\#(String(repeating: "y", count: 700))"}"#
        let lenient = SignalingHub.prepare(text, maxMessageBytes: 64 * 1024)
        let actions = h.hub.received(text, prepared: lenient, on: id, time: h.time)
        let error = try XCTUnwrap(HubHarness.frames(actions, to: id).first)
        XCTAssertEqual(error["type"] as? String, "error")
        XCTAssertEqual(error["code"] as? String, "messageTooLarge")
    }

    private func hello(_ h: HubHarness, _ account: String, _ device: String) -> String {
        #"{"v":1,"type":"hello","token":"\#(h.token(account, device))"}"#
    }

    private func quoted(_ s: String) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: s, options: .fragmentsAllowed), as: UTF8.self)
    }
}
