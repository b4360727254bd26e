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
}
