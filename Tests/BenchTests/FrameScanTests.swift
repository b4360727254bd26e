@testable import Bench
import XCTest

final class FrameScanTests: XCTestCase {
    /// A frame shaped like the server's durable events (seq spliced in, snapshot nested).
    let frame = #"{"v":1,"seq":"42","type":"call.incoming","callID":"c-9","revision":2,"serverTime":1764440000000,"snapshot":{"callID":"c-9","revision":2},"sdp":"v=0\r\na=ice-ufrag:ab\"cd\r\n"}"#

    func testFindsTopLevelFields() {
        FrameScan.with(frame) { scan in
            XCTAssertEqual(scan.string(Keys.type), "call.incoming")
            XCTAssertTrue(scan.stringEquals(Keys.type, Array("call.incoming".utf8)))
            XCTAssertFalse(scan.stringEquals(Keys.type, Array("call.incom".utf8)))
            XCTAssertEqual(scan.string(Keys.callID), "c-9")
            XCTAssertEqual(scan.integer(Keys.revision), 2)
            XCTAssertEqual(scan.integer(Keys.seq), 42)
            XCTAssertNil(scan.string(Keys.eventID))
            XCTAssertNil(scan.integer(Keys.code))
        }
    }

    func testCountsBatchedCandidatesButNotTheTypeName() {
        let batch = #"{"v":1,"type":"ice.candidate","callID":"c","generation":1,"candidates":[{"candidate":"candidate:1 1 udp 1 192.0.2.1 1 typ host","sdpMid":"0"},{"candidate":"candidate:2 1 udp 1 192.0.2.1 2 typ host"}]}"#
        FrameScan.with(batch) { XCTAssertEqual($0.count(Keys.candidate), 2) }
        FrameScan.with(frame) { XCTAssertEqual($0.count(Keys.candidate), 0) }
    }

    func testTruncatedFramesGiveNil() {
        FrameScan.with(#"{"type":"res"#) { scan in
            XCTAssertNil(scan.string(Keys.type))
            XCTAssertFalse(scan.stringEquals(Keys.type, Array("res".utf8)))
        }
        FrameScan.with(#"{"revision":"#) { XCTAssertNil($0.integer(Keys.revision)) }
        FrameScan.with("") { XCTAssertNil($0.string(Keys.type)) }
    }

    func testLatencyPercentilesAreNearestRank() {
        var recorder = LatencyRecorder()
        for micros in 1 ... 100 { recorder.record(Int64(micros) * 1000) }
        let s = recorder.summary()
        XCTAssertEqual(s.count, 100)
        XCTAssertEqual(s.p50, 50)
        XCTAssertEqual(s.p95, 95)
        XCTAssertEqual(s.p99, 99)
        XCTAssertEqual(s.max, 100)
        XCTAssertEqual(LatencyRecorder().summary().count, 0)
    }

    func testSDPsAreAboutThreeKilobytesAndCarryTheUfrag() {
        let offer = SessionDescriptions.offer(ufrag: "bA1x", sessionID: 2)
        XCTAssertTrue(offer.contains("a=ice-ufrag:bA1x\r\n"))
        XCTAssertGreaterThan(offer.utf8.count, 2_500)
        XCTAssertLessThan(offer.utf8.count, 4_500)
        XCTAssertFalse(SessionDescriptions.jsonEscaped(offer).contains("\r"))
    }
}
