import Foundation
import SDP
import XCTest
@testable import Media

/// The members' stream ids in the server's SDP are RFC 8830 msid-ids (`1*64token-char`,
/// RFC 4566 §9): "account/device" goes out as "account%2Fdevice" and parses back.
final class SFUServerStreamIDTests: XCTestCase {
    func testMemberStreamIDIsATokenAndRoundTrips() {
        let member = MemberID(account: "alice", device: "laptop.2")
        XCTAssertEqual(member.streamID, "alice%2Flaptop.2")
        XCTAssertTrue(SDPToken.isMSIDID(member.streamID))
        XCTAssertFalse(SDPToken.isToken(member.description), "\"/\" is not a token-char")
        XCTAssertEqual(MemberID(streamID: member.streamID), member)
        XCTAssertNil(MemberID(streamID: "alice%2"), "truncated escape")
        XCTAssertNil(MemberID(streamID: "alice"), "no device")
    }

    func testServerOffersAnnounceTokenStreamIDsThatParseBackToTheMembers() throws {
        let server = try SFUServer(configuration: MediaConfiguration(host: "127.0.0.1", port: 0, ssrcSeed: 7))
        let events = ServerEvents()
        events.attach(to: server)
        server.start()
        defer { server.stop() }
        let clients = try ["alice/laptop", "bob/phone-1", "carol.x/desk_2"].map { try SyntheticClient($0, serverPort: server.port) }
        for (index, client) in clients.enumerated() {
            try joinAndConnect(client, server: server, room: "r1", events: events, others: Array(clients[..<index]))
        }
        try settleOffers(clients, server: server, events: events)

        for client in clients {
            let offer = try XCTUnwrap(client.serverOffers.last, "\(client.member) got a server offer")
            let sdp = try SessionDescription(parsing: offer)
            var announced: Set<MemberID> = []
            for section in sdp.media where !section.isRejected && (section.explicitDirection ?? .sendrecv).sends {
                let msids = try section.msids()
                XCTAssertEqual(msids.count, 1, "one a=msid per forwarded section")
                for msid in msids {
                    XCTAssertTrue(SDPToken.isMSIDID(msid.streamID), "a=msid stream id \(msid.streamID)")
                    let trackID = try XCTUnwrap(msid.trackID)
                    XCTAssertTrue(SDPToken.isMSIDID(trackID), "a=msid track id \(trackID)")
                    let publisher = try XCTUnwrap(MemberID(streamID: msid.streamID), "\(msid.streamID) parses back")
                    announced.insert(publisher)
                }
                for attribute in try section.ssrcAttributes() {
                    let value = try XCTUnwrap(attribute.value)
                    switch attribute.attribute {
                    case "msid":
                        // RFC 5576 + RFC 8830: "a=ssrc:<ssrc> msid:<msid-id> <msid-appdata>".
                        let parts = value.split(separator: " ").map(String.init)
                        XCTAssertEqual(parts.count, 2, value)
                        XCTAssertTrue(parts.allSatisfy(SDPToken.isMSIDID), "a=ssrc msid \(value)")
                        XCTAssertEqual(parts.first, msids.first?.streamID)
                    case "cname":
                        XCTAssertTrue(SDPToken.isToken(value), "a=ssrc cname \(value)")
                    default:
                        break
                    }
                }
            }
            XCTAssertEqual(announced, Set(clients.filter { $0 !== client }.map(\.member)),
                           "\(client.member) is offered every other member, by name:\n\(offer)")
        }
    }
}
