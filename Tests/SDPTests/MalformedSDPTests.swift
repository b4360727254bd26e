import XCTest
@testable import SDP
import SplitMix

final class MalformedSDPTests: XCTestCase {
    private let head = "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n"

    private func assertError(_ text: String, _ expected: SDPError, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try SessionDescription(parsing: text), file: file, line: line) { error in
            XCTAssertEqual(error as? SDPError, expected, file: file, line: line)
        }
    }

    func testStructuralErrorsNameTheLine() {
        assertError("", .empty)
        assertError("\r\n\r\n", .empty)
        assertError("o=- 1 1 IN IP4 127.0.0.1\r\n", .unexpectedLine(line: 1, type: "o"))
        assertError("v=0\r\ns=-\r\n", .unexpectedLine(line: 2, type: "s"))
        assertError(head + "garbage\r\n", .malformedLine(line: 5))
        assertError(head + "A=foo\r\n", .malformedLine(line: 5))
        assertError(head + "x=foo\r\n", .unknownLineType(line: 5, type: "x"))
        assertError(head + "o=- 1 1 IN IP4 127.0.0.1\r\n", .unexpectedLine(line: 5, type: "o"))
        assertError(head + "m=audio 9 RTP/AVP 0\r\nt=0 0\r\n", .unexpectedLine(line: 6, type: "t"))
        assertError(head + "m=audio 9 RTP/AVP 0\r\na=x\r\nc=IN IP4 0.0.0.0\r\n", .unexpectedLine(line: 7, type: "c"))
        assertError("v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\n", .missingLine(type: "t"))
        assertError("v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nr=1d 1h 0\r\n", .unexpectedLine(line: 4, type: "r"))
    }

    func testFieldErrorsNameTheLine() {
        assertError("v=x\r\n", .invalidField(line: 1, field: "version"))
        assertError("v=0\r\no=- 1 1 IN IP4\r\n", .invalidField(line: 2, field: "origin"))
        let top = "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\n"
        assertError(top + "c=IN IP4\r\n", .invalidField(line: 4, field: "connection"))
        assertError(top + "b=AS\r\n", .invalidField(line: 4, field: "bandwidth"))
        assertError(top + "b=AS:-1\r\n", .invalidField(line: 4, field: "bandwidth"))
        assertError(head + "c=IN IP4 0.0.0.0\r\n", .unexpectedLine(line: 5, type: "c"))
        assertError(head + "m=audio 70000 RTP/AVP 0\r\n", .invalidField(line: 5, field: "port"))
        assertError(head + "m=audio 9/0 RTP/AVP 0\r\n", .invalidField(line: 5, field: "port"))
        assertError(head + "m=audio 9 RTP/AVP\r\n", .invalidField(line: 5, field: "media"))
        assertError("v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=now 0\r\n", .invalidField(line: 4, field: "timing"))
    }

    func testMalformedAttributesCarryTheirLine() throws {
        let text = head + "m=video 9 UDP/TLS/RTP/SAVPF 96\r\na=mid:0\r\na=rtpmap:96 VP8\r\na=candidate:1 1 udp x 1.2.3.4 9 typ host\r\n"
        let parsed = try SessionDescription(parsing: text)
        XCTAssertThrowsError(try parsed.media[0].rtpMaps()) { error in
            XCTAssertEqual(error as? SDPError, .invalidAttribute(line: 7, name: "rtpmap"))
        }
        XCTAssertThrowsError(try parsed.media[0].candidates()) { error in
            XCTAssertEqual(error as? SDPError, .invalidAttribute(line: 8, name: "candidate"))
        }
        XCTAssertThrowsError(try parsed.validateWebRTCAttributes()) { error in
            XCTAssertEqual(error as? SDPError, .invalidAttribute(line: 8, name: "candidate"))
        }
        XCTAssertEqual(SDPError.invalidAttribute(line: 7, name: "rtpmap").code, "sdp_invalid_attribute")
    }

    func testInvalidAttributeValues() {
        let bad: [(String, (String) throws -> Void)] = [
            ("1 1 udp 1 1.2.3.4 9 typ bogus", { _ = try ICECandidate(attributeValue: $0) }),
            ("1 1 udp 1 1.2.3.4 9 typ host raddr", { _ = try ICECandidate(attributeValue: $0) }),
            ("1 0 udp 1 1.2.3.4 9 typ host", { _ = try ICECandidate(attributeValue: $0) }),
            ("1 1 udp 1 1.2.3.4 9 typ srflx raddr 0.0.0.0 rport x", { _ = try ICECandidate(attributeValue: $0) }),
            ("sha-256 AB:CD:E", { _ = try Fingerprint(attributeValue: $0) }),
            ("sha-256 ZZ", { _ = try Fingerprint(attributeValue: $0) }),
            ("sha-256", { _ = try Fingerprint(attributeValue: $0) }),
            ("200 opus/48000/2", { _ = try RTPMap(attributeValue: $0) }),
            ("111 opus/48000/2/1", { _ = try RTPMap(attributeValue: $0) }),
            ("x nack", { _ = try RTCPFeedback(attributeValue: $0) }),
            ("96", { _ = try RTCPFeedback(attributeValue: $0) }),
            ("q both", { _ = try RIDDescription(attributeValue: $0) }),
            ("q! send", { _ = try RIDDescription(attributeValue: $0) }),
            ("q send pt=x", { _ = try RIDDescription(attributeValue: $0) }),
            ("send q;;f", { _ = try Simulcast(attributeValue: $0) }),
            ("send q send h", { _ = try Simulcast(attributeValue: $0) }),
            ("sideways q", { _ = try Simulcast(attributeValue: $0) }),
            ("0 urn:x", { _ = try HeaderExtension(attributeValue: $0) }),
            ("3/both urn:x", { _ = try HeaderExtension(attributeValue: $0) }),
            ("FID 1 x", { _ = try SSRCGroup(attributeValue: $0) }),
            ("FID", { _ = try SSRCGroup(attributeValue: $0) }),
            ("12345", { _ = try SSRCAttribute(attributeValue: $0) }),
            ("a b c", { _ = try MediaStreamID(attributeValue: $0) }),
        ]
        for (value, parse) in bad {
            XCTAssertThrowsError(try parse(value), value) { error in
                guard case .invalidAttribute = error as? SDPError else { return XCTFail("\(value): \(error)") }
            }
        }
    }

    /// Truncations, dropped, duplicated and byte-mutated lines of every fixture: each either parses
    /// (and then serializes and re-parses to the same model) or throws an ``SDPError``; the typed
    /// accessors and the answer builder never trap either.
    func testRandomlyDamagedFixturesNeverTrap() throws {
        var random = SplitMix64(state: 0x5D9_2026)
        let alphabet = Array("=: /;,~\r\n0123456789abcdefxyzAV-".unicodeScalars)
        var parsedCount = 0, rejectedCount = 0
        for fixture in Fixture.allCases {
            let text = try fixture.text()
            var lines = text.components(separatedBy: "\r\n")
            for round in 0..<150 {
                var damaged = lines
                switch round % 5 {
                case 0:
                    let index = Int.random(in: 0..<damaged.count, using: &random)
                    damaged[index] = String(damaged[index].prefix(Int.random(in: 0...damaged[index].count, using: &random)))
                case 1:
                    damaged.remove(at: Int.random(in: 0..<damaged.count, using: &random))
                case 2:
                    let index = Int.random(in: 0..<damaged.count, using: &random)
                    damaged.insert(damaged[index], at: Int.random(in: 0..<damaged.count, using: &random))
                case 3:
                    let index = Int.random(in: 0..<damaged.count, using: &random)
                    var scalars = Array(damaged[index].unicodeScalars)
                    if !scalars.isEmpty {
                        scalars[Int.random(in: 0..<scalars.count, using: &random)] = alphabet.randomElement(using: &random)!
                    }
                    damaged[index] = String(String.UnicodeScalarView(scalars))
                default:
                    damaged = Array(damaged.prefix(Int.random(in: 0...damaged.count, using: &random)))
                }
                let candidate = damaged.joined(separator: "\r\n")
                do {
                    let parsed = try SessionDescription(parsing: candidate)
                    parsedCount += 1
                    XCTAssertEqual(try SessionDescription(parsing: parsed.serialized), parsed)
                    _ = try? parsed.validateWebRTCAttributes()
                    _ = try? SFUAnswerBuilder(transport: serverTransport, sessionID: "1").answer(to: parsed)
                    _ = try? CodecMap(description: parsed)
                } catch {
                    rejectedCount += 1
                }
                if round % 50 == 49 { lines = text.components(separatedBy: "\r\n") }
            }
        }
        XCTAssertGreaterThan(parsedCount, 0)
        XCTAssertGreaterThan(rejectedCount, 0)
    }

    func testRandomBytesNeverTrap() {
        var random = SplitMix64(state: 42)
        for _ in 0..<2000 {
            let bytes = (0..<Int.random(in: 0..<200, using: &random)).map { _ in
                [UInt8(ascii: "v"), UInt8(ascii: "="), UInt8(ascii: "\n"), UInt8(ascii: "m"), UInt8(ascii: "a"),
                 UInt8(ascii: "0"), UInt8(ascii: " "), UInt8.random(in: 0...255, using: &random)].randomElement(using: &random)!
            }
            let text = String(decoding: bytes, as: UTF8.self)
            if let parsed = try? SessionDescription(parsing: text) {
                XCTAssertEqual(try? SessionDescription(parsing: parsed.serialized), parsed)
            }
        }
    }
}
