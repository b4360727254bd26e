@testable import Server
import XCTest

/// ``SwitchboardServer/namesPing(_:)``: the shard's first look at a frame before it parses a
/// ping itself; anything else goes on to the hub.
final class HeartbeatFrameTests: XCTestCase {
    func testFindsTheQuotedWordAnywhereAndNothingElse() {
        XCTAssertTrue(SwitchboardServer.namesPing(#"{"v":1,"type":"ping"}"#))
        XCTAssertTrue(SwitchboardServer.namesPing(#"{"type":"ping","v":1}"#))
        XCTAssertTrue(SwitchboardServer.namesPing(#""ping""#), "the needle alone")
        XCTAssertTrue(SwitchboardServer.namesPing(#"""ping""#), "a false start right before it")
        XCTAssertFalse(SwitchboardServer.namesPing(#"{"v":1,"type":"pong"}"#))
        XCTAssertFalse(SwitchboardServer.namesPing(#"{"v":1,"type":ping}"#), "unquoted")
        XCTAssertFalse(SwitchboardServer.namesPing(#""pin"#))
        XCTAssertFalse(SwitchboardServer.namesPing(""))
        XCTAssertTrue(SwitchboardServer.namesPing(#"{"a":"b","c":"d","type":"ping""#), "at the very end, after other quotes")
        XCTAssertFalse(SwitchboardServer.namesPing(#"{"a":"b","type":"ping"#), "cut before the closing quote")
        XCTAssertFalse(SwitchboardServer.namesPing(String(repeating: "\"", count: 9)), "quotes only")
        // A bridged or non-ASCII string takes the same path.
        XCTAssertTrue(SwitchboardServer.namesPing("{\"é\":1,\"type\":\"ping\"}"))
        XCTAssertTrue(SwitchboardServer.namesPing(String(#"x{"type":"ping"}"#.dropFirst())))
    }
}
