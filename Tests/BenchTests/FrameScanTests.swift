@testable import Bench
import SplitMix
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

    /// Durable events carry `seq` right after the version (the server's `OutboxFrame`, pinned
    /// in `ClientMessageTests.testOutboxFrameSplicesSeqAndExtras`); nothing else is read as one.
    func testLeadingSeqIsReadOnlyRightAfterTheVersion() {
        FrameScan.with(frame) { XCTAssertEqual($0.leadingSeq(), 42) }
        FrameScan.with(#"{"v":1,"seq":"9","turn":{},"type":"call.incoming","callID":"c"}"#) { XCTAssertEqual($0.leadingSeq(), 9) }
        FrameScan.with(#"{"v":1,"type":"result","eventID":"e","snapshot":{"seq":"5"}}"#) { XCTAssertNil($0.leadingSeq()) }
        FrameScan.with(#"{"v":1,"seq":""#) { XCTAssertNil($0.leadingSeq(), "cut off before the digits") }
        FrameScan.with(#"{"v":1,"seq":"#) { XCTAssertNil($0.leadingSeq()) }
        FrameScan.with(#"{"v":2,"seq":"7"}"#) { XCTAssertNil($0.leadingSeq(), "another protocol version") }
    }

    /// The search (first byte by `memchr`, second in place, the rest by `memcmp`) finds what
    /// a byte-by-byte search finds, over random strings of the bytes that make near misses:
    /// quotes everywhere, keys sharing their first letters (`"s"`, `"se"`, `"seqx"`), a key's
    /// name as a value, and patterns cut off at the end.
    func testCountMatchesANaiveSearchOverNearMisses() {
        let pieces = [#"""#, #""seq":"#, #""se":"#, #""seqx":"#, #""s""#, "seq", ":", ",", "1", #"\""#, #""type":"#, "x"]
        let patterns = [Keys.seq, Keys.type, Array(#"""#.utf8), Array(#""s"#.utf8)]
        var random = SplitMix64(seed: 0x5EC0_2026)
        for _ in 0 ..< 3_000 {
            var text = ""
            for _ in 0 ..< Int(random.next() % 24) { text += pieces[Int(random.next() % UInt64(pieces.count))] }
            let bytes = Array(text.utf8)
            for pattern in patterns {
                var naive = 0
                if bytes.count >= pattern.count {
                    for at in 0 ... bytes.count - pattern.count where Array(bytes[at ..< at + pattern.count]) == pattern {
                        naive += 1
                    }
                }
                // count() steps past each hit, so overlapping hits count once; none of these
                // patterns can overlap itself except `"`, which is one byte.
                FrameScan.with(text) { XCTAssertEqual($0.count(pattern), naive, "\(String(decoding: pattern, as: UTF8.self)) in \(text)") }
            }
        }
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
