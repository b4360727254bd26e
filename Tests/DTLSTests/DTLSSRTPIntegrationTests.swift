import XCTest
@testable import DTLS
import SRTP

/// DTLS-exported keys drive a working SRTP session pair (RFC 5764 §4.2 key layout end to end).
final class DTLSSRTPIntegrationTests: XCTestCase {
    static func session(_ m: SRTPKeyingMaterial) throws -> SRTPSession {
        let profile = try XCTUnwrap(SRTPProfile(rawValue: m.profile.rawValue))
        return try SRTPSession(profile: profile, localKey: m.localKey, localSalt: m.localSalt,
                               remoteKey: m.remoteKey, remoteSalt: m.remoteSalt)
    }

    func testExportedKeysProtectAndUnprotectBothWaysForBothProfiles() throws {
        for profiles: [DTLSSRTPProfile] in [[.aeadAES128GCM, .aes128CMHMACSHA180], [.aes128CMHMACSHA180]] {
            let h = try makePair(clientConfiguration: .init(srtpProfiles: profiles))
            h.start()
            let client = try Self.session(try XCTUnwrap(h.clientMaterial))
            let server = try Self.session(try XCTUnwrap(h.serverMaterial))
            XCTAssertEqual(client.profile.rawValue, profiles[0].rawValue)
            let rtp: [UInt8] = [0x80, 0x60, 0x00, 0x01, 0, 0, 0, 1, 0xde, 0xad, 0xbe, 0xef] + [UInt8](repeating: 0x42, count: 100)
            let rtcp: [UInt8] = [0x80, 200, 0x00, 0x06, 0xde, 0xad, 0xbe, 0xef] + [UInt8](repeating: 7, count: 20)
            for (sender, receiver) in [(client, server), (server, client)] {
                var p = rtp
                try sender.protectRTP(&p)
                XCTAssertNotEqual(p, rtp)
                try receiver.unprotectRTP(&p)
                XCTAssertEqual(p, rtp)
                var c = rtcp
                try sender.protectRTCP(&c)
                try receiver.unprotectRTCP(&c)
                XCTAssertEqual(c, rtcp)
            }
            // A session must not accept its own outbound traffic (keys differ per direction).
            var own = rtp
            own[3] = 2  // a sequence number the client has not received yet
            try client.protectRTP(&own)
            XCTAssertThrowsError(try client.unprotectRTP(&own)) { XCTAssertEqual($0 as? SRTPError, .authFailure) }
            XCTAssertEqual(client.authFailures, 1)
        }
    }
}
