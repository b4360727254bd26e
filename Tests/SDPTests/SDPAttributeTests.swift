import XCTest
@testable import SDP

final class SDPAttributeTests: XCTestCase {
    func testCandidateWithRelatedAddressRoundTrips() throws {
        // RFC 8839 §5.1 grammar; srflx candidate shaped like Chromium's.
        let value = "842163049 1 udp 1677729535 203.0.113.7 50012 typ srflx raddr 192.168.1.20 rport 50012 generation 0 ufrag 3dH0 network-cost 999"
        let candidate = try ICECandidate(attributeValue: value)
        XCTAssertEqual(candidate.type, .srflx)
        XCTAssertEqual(candidate.relatedAddress, "192.168.1.20")
        XCTAssertEqual(candidate.relatedPort, 50012)
        XCTAssertEqual(candidate.extensions.map(\.name), ["generation", "ufrag", "network-cost"])
        XCTAssertEqual(candidate.attributeValue, value)
        XCTAssertEqual(try ICECandidate(attributeValue: "candidate:" + value), candidate, "trickled form")
        let mdns = try ICECandidate(attributeValue: "1 1 UDP 2122252543 0c8f3f0e-7c5b-4bd6-9e0f-5c1a0e2b3d4f.local 54321 typ host")
        XCTAssertEqual(mdns.address, "0c8f3f0e-7c5b-4bd6-9e0f-5c1a0e2b3d4f.local")
    }

    func testHostPriorityFollowsRFC8445() {
        // RFC 8445 §5.1.2.1: (2^24)·126 + (2^8)·65535 + (256 − 1).
        XCTAssertEqual(ICECandidate.priority(), 2_130_706_431)
        XCTAssertEqual(ICECandidate.host(address: "10.0.0.1", port: 40000).attributeValue,
                       "1 1 udp 2130706431 10.0.0.1 40000 typ host")
    }

    func testFingerprintHexIsUpperCaseAndCaseInsensitiveOnInput() throws {
        let fingerprint = try Fingerprint(attributeValue: "SHA-256 0a:ff:10")
        XCTAssertEqual(fingerprint.hashFunction, "sha-256")
        XCTAssertEqual(fingerprint.bytes, [0x0A, 0xFF, 0x10])
        XCTAssertEqual(fingerprint.attributeValue, "sha-256 0A:FF:10")
    }

    func testRIDAndSimulcastGrammar() throws {
        let rid = try RIDDescription(attributeValue: "h send pt=96,97;max-width=1280;max-height=720")
        XCTAssertEqual(rid.payloadTypes, [96, 97])
        XCTAssertEqual(rid.restrictions, ["max-width=1280", "max-height=720"])
        XCTAssertEqual(rid.attributeValue, "h send pt=96,97;max-width=1280;max-height=720")
        // RFC 8853 §5.1 example shapes: alternatives and paused streams, both directions.
        let simulcast = try Simulcast(attributeValue: "send 1;~4,5 recv 2;3")
        XCTAssertEqual(simulcast.send, [[.init(rid: "1")], [.init(rid: "4", paused: true), .init(rid: "5")]])
        XCTAssertEqual(simulcast.recvRIDs, ["2", "3"])
        XCTAssertEqual(simulcast.attributeValue, "send 1;~4,5 recv 2;3")
    }

    func testHeaderExtensionDirectionAndAttributes() throws {
        let header = try HeaderExtension(attributeValue: "6/recvonly http://example.com/ext attr1")
        XCTAssertEqual(header.id, 6)
        XCTAssertEqual(header.direction, .recvonly)
        XCTAssertEqual(header.extensionAttributes, "attr1")
        XCTAssertEqual(header.attributeValue, "6/recvonly http://example.com/ext attr1")
        XCTAssertNil(header.knownURI)
    }

    func testFormatParametersAndFeedback() throws {
        let fmtp = try FormatParameters(attributeValue: "102 level-asymmetry-allowed=1; Packetization-Mode=1;profile-level-id=42001f")
        XCTAssertEqual(fmtp["packetization-mode"], "1")
        XCTAssertEqual(fmtp.attributeValue, "102 level-asymmetry-allowed=1; Packetization-Mode=1;profile-level-id=42001f")
        XCTAssertEqual(try FormatParameters(attributeValue: "63 111/111").parameters.first?.value, "111/111")
        let wildcard = try RTCPFeedback(attributeValue: "* ccm fir")
        XCTAssertNil(wildcard.payloadType)
        XCTAssertEqual(wildcard.kind, "ccm fir")
        XCTAssertEqual(wildcard.attributeValue, "* ccm fir")
    }

    func testDirectionAnswerRules() {
        XCTAssertEqual(Direction.sendonly.answerLimited(to: .recvonly), .recvonly)
        XCTAssertEqual(Direction.sendrecv.answerLimited(to: .recvonly), .recvonly)
        XCTAssertEqual(Direction.recvonly.answerLimited(to: .recvonly), .inactive)
        XCTAssertEqual(Direction.recvonly.answerLimited(to: .sendrecv), .sendonly)
        XCTAssertEqual(Direction.inactive.answerLimited(to: .sendrecv), .inactive)
        XCTAssertEqual(Direction.sendonly.reversed, .recvonly)
        var section = MediaDescription(media: "audio", port: 9, proto: "UDP/TLS/RTP/SAVPF", formats: ["111"])
        XCTAssertEqual(section.direction, .sendrecv)
        section.direction = .sendonly
        section.direction = .inactive
        XCTAssertEqual(section.attributes, [SDPAttribute("inactive")])
    }

    func testAttributeEqualityIgnoresSourceLine() {
        XCTAssertEqual(SDPAttribute("mid", "0", line: 12), SDPAttribute("mid", "0"))
        XCTAssertNotEqual(SDPAttribute("mid", "0"), SDPAttribute("mid", "1"))
        XCTAssertEqual(SDPAttribute("msid-semantic", " WMS").description, "msid-semantic: WMS")
    }
}
