import XCTest
@testable import CallCore

/// RFC 8839 §5.4 `a=ice-ufrag` extraction with CRLF (RFC 8866 §5), LF and session/media level.
final class SessionDescriptionTests: XCTestCase {
    func testUfragFromCRLFSessionLevel() {
        XCTAssertEqual(Fixture.offer.iceUfrag, "callerA")
    }

    func testUfragFromLFMediaLevelTakesTheFirst() {
        let sdp = SessionDescription(sdp: "v=0\ns=-\nm=audio 9 UDP/TLS/RTP/SAVPF 111\na=ice-ufrag: 8hhY \na=ice-pwd:x\nm=video 9 UDP/TLS/RTP/SAVPF 96\na=ice-ufrag:other\n")
        XCTAssertEqual(sdp.iceUfrag, "8hhY")
    }

    func testMissingOrEmptyUfragIsNil() {
        XCTAssertNil(SessionDescription(sdp: "v=0\r\ns=-\r\n").iceUfrag)
        XCTAssertNil(SessionDescription(sdp: "a=ice-ufrag:\r\n").iceUfrag)
        XCTAssertNil(SessionDescription(sdp: "").iceUfrag)
    }

    /// The byte scan must give the Character scan's answer, and hand over to it on bytes
    /// where the two could differ (non-ASCII, vertical tab, form feed).
    func testByteScanAgreesWithCharacterScan() {
        let inputs = [
            Fixture.offer.sdp,
            "v=0\ns=-\nm=audio 9 UDP/TLS/RTP/SAVPF 111\na=ice-ufrag: 8hhY \na=ice-pwd:x\n",
            "a=ice-ufrag:first\r\na=ice-ufrag:second\r\n",
            "\r\n\r\na=ice-ufrag:\t tabbed\t\r\n",
            "a=ice-ufrag:   \r\na=ice-ufrag:later\r\n",
            "xa=ice-ufrag:notAtLineStart\r\n",
            "a=ice-ufrag",
            "a=ice-ufrag:end-without-newline",
            "a=ice-ufrag:x\ry\n",
            "s=caf\u{e9}\r\na=ice-ufrag:afterAccent\r\n",
            "a=ice-ufrag:\u{301}combining\r\n",
            "s=x\u{2028}a=ice-ufrag:afterLineSeparator\r\n",
            "s=x\u{0B}a=ice-ufrag:afterVerticalTab\r\n",
            "a=ice-ufrag:ok\r\ns=\u{1F600}\r\n",
            "",
        ]
        for sdp in inputs {
            XCTAssertEqual(SessionDescription(sdp: sdp).iceUfrag, SessionDescription.characterIceUfrag(sdp), sdp.debugDescription)
        }
        XCTAssertNil(SessionDescription.asciiIceUfrag("s=caf\u{e9}\r\na=ice-ufrag:x\r\n"), "non-ASCII before the line: slow path")
        XCTAssertEqual(SessionDescription.asciiIceUfrag("a=ice-ufrag:x\r\ns=caf\u{e9}\r\n"), .some("x"), "non-ASCII after the line is never read")
    }
}
